import Dispatch
import LuaBridge
import Model
import NIOCore
import Synchronization

/// One call of a run-time plugin's method and the one reply it owes: for a Lua plugin, the task
/// running it; for a process plugin, the request id it was sent with.
final class PluginCall: Hashable {
    let service: String
    let method: String
    let arguments: Arguments
    let reply: Reply
    /// The plugin's name and the method's declared return type, which a value it answers must fit.
    let plugin: String
    let result: ResultCheck
    var task: LuaTask?
    /// The JSON-RPC id once sent to a process.
    var requestID: Int64?
    private(set) var isDone = false
    /// Called once when the call ends, whatever ended it.
    var onDone: ((PluginCall) -> Void)?

    init(plugin: String, service: String, method: String, result: ResultCheck, arguments: Arguments, reply: Reply) {
        self.plugin = plugin
        self.service = service
        self.method = method
        self.result = result
        self.arguments = arguments
        self.reply = reply
    }

    /// The declared return type of `method` among `declarations` (`value` when not found).
    static func result(of method: String, service: String, in declarations: [ServiceDeclaration]) -> ResultCheck {
        declarations.first { $0.name == service }?.methods.first { $0.name == method }?.result ?? ResultCheck(returns: "value")
    }

    /// Gives the caller its one answer and lets go of the task (whose end handler holds this
    /// call: kept, the two would hold each other).
    func answer(_ result: Result<Value, ServiceError>) {
        guard !isDone else { return }
        isDone = true
        if case .success(let value) = result, let problem = self.result.problem(value) {
            reply(.failure(ServiceError(.internal, self.result.failure(problem, plugin: plugin, service: service, method: method))))
        } else {
            reply(result)
        }
        onDone?(self)
        onDone = nil
        task = nil
        cancelHandle?.call = nil
    }

    /// What a cancel handler reaches its call through, emptied when the call is answered: the
    /// reply keeps its handler for as long as it lives and the call holds the reply, so a
    /// handler holding the call would keep both forever. (Not a weak reference: that gives every
    /// call a side table to make and free.)
    private final class CancelHandle {
        var call: PluginCall?
    }

    private var cancelHandle: CancelHandle?

    /// `reply.onCancel` for this call: `stop` runs on the loop if the caller cancels before the
    /// call is answered.
    func onCancel(on loop: any EventLoop, _ stop: @escaping (PluginCall) -> Void) {
        let handle = CancelHandle()
        handle.call = self
        cancelHandle = handle
        let bound = NIOLoopBound((handle: handle, stop: stop), eventLoop: loop)
        reply.onCancel {
            onLoop(bound) { bound in
                guard let call = bound.handle.call else { return }
                bound.stop(call)
            }
        }
    }

    static func == (lhs: PluginCall, rhs: PluginCall) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension LuaPluginRuntime {
    /// Runs `service.method(arguments...)` as a task in the plugin's VM and answers `reply` once:
    /// with what it returns, the code of a `service_error` it raises, `internal` for any other
    /// error (its traceback goes to the log), `timeout` past the call time limit. Cancelling the
    /// caller's request cancels the task.
    func call(_ service: String, _ method: ServiceDeclaration.Method, _ arguments: Arguments, _ reply: Reply) {
        guard host.isRunning, let invoke else {
            reply(.failure(ServiceError(.unavailable, stoppedMessage)))
            return
        }
        let call = PluginCall(plugin: manifest.name, service: service, method: method.name, result: method.result,
                              arguments: arguments, reply: reply)
        // The closures reach the runtime through an ``UnownedRef`` (a checked or weak reference
        // costs a runtime call and a retain on every call). Its invariant holds: the parent host
        // keeps the runtime until `finish()`, which answers every call (dropping `onDone` and
        // emptying the cancel handle) and then ends the plugin's tasks, whose `onEnd` finds their
        // calls answered.
        let runtime = UnownedRef(self)
        host.runTurn { host in
            let started = runtime.object.deadlines.now
            let stack = host.vm.stack
            let count = Int32(arguments.values.count) + 2
            _ = stack.ensure(count + 3)
            invoke.push(onto: stack)                                 // invoke
            // The names through the binding's cache: the same two strings come call after call.
            let names = host.binding.fieldNames
            names.pushAnchors(onto: stack)                           // invoke anchors
            let anchors = stack.top
            names.push(service, onto: stack, anchorsAt: anchors)
            names.push(method.name, onto: stack, anchorsAt: anchors) // invoke anchors service method
            stack.remove(at: anchors)                                // invoke service method
            for value in arguments.values { host.binding.push(value, onto: stack) }
            let task = host.startTask(function: stack.absolute(-count - 1), arguments: count, in: stack) { ending in
                runtime.object.end(call, ending)
            }
            stack.pop(count + 1)
            call.task = task
            if let watchdog = runtime.object.watchdog {
                let runningUntil = watchdog.deadlineInTurn()
                task.onResume = { running in watchdog.running(until: running ? runningUntil : nil) }
            }
            host.resume(task, arguments: count)
            // Most methods answer before their first await, within this turn, where no deadline
            // can pass and no cancel can arrive: only a call still running gets its time limit
            // (counted from the start) and a cancel handler.
            guard !call.isDone else { return }
            runtime.object.deadlines.add(call, since: started)
            call.onDone = { call in runtime.object.deadlines.remove(call) }
            call.onCancel(on: host.loop) { call in
                guard !call.isDone, let task = call.task else { return }
                call.answer(.failure(ServiceError(.cancelled, "the request was cancelled")))
                runtime.object.host.runTurn { host in host.cancel(task) }
            }
        }
    }

    /// How the method's task ended, as the call's answer.
    private func end(_ call: PluginCall, _ ending: LuaTask.Ending) {
        switch ending {
        case .returned(let stack, let count):
            guard count > 0 else {
                call.answer(.success(.null))
                return
            }
            host.binding.refusesMetatables = true
            let (value, failure) = host.binding.convertedValue(at: -count, in: stack)
            host.binding.refusesMetatables = false
            if let failure {
                call.answer(.failure(ServiceError(.internal, "plugin '\(manifest.name)': \(call.service).\(call.method) returned \(failure.description), which cannot cross to the script")))
            } else {
                call.answer(.success(value))
            }
        case .failed(let error):
            if error.kind == .timeout || error.kind == .interrupted {
                // A Ctrl-C (the REPL's, or the run's own) stops the method, not the plugin.
                host.vm.clearInterrupt()
                call.answer(.failure(error.kind == .interrupted
                    ? ServiceError(.cancelled, "plugin '\(manifest.name)': \(call.service).\(call.method) was interrupted")
                    : timedOut(call)))
                return
            }
            if error.kind == .memory {
                call.answer(.failure(ServiceError(.internal, "plugin '\(manifest.name)': \(call.service).\(call.method) ran out of memory: the plugin's VM may use \(host.options.memoryLimitMiB) MiB (\(self.limitSetting))")))
                return
            }
            if let serviceError = classified(call.task?.error) {
                call.answer(.failure(serviceError))
                return
            }
            // A misspelled global or a script's one (`view`) is named as in main, on the plugin VM's loop.
            let message = GlobalNameHint.hinted(error.message, in: host.vm, isPlugin: true)
            host.writeError("\(host.console.styled("crescent: warning:", .warning)) plugin '\(manifest.name)': error in \(call.service).\(call.method): \(TracebackFolding.folded(message))")
            let firstLine = message.split(separator: "\n").first.map(String.init) ?? message
            call.answer(.failure(ServiceError(.internal, "plugin '\(manifest.name)': \(firstLine)")))
        case .cancelled:
            call.answer(.failure(ServiceError(.cancelled, "the request was cancelled")))
        }
    }

    private func timedOut(_ call: PluginCall) -> ServiceError {
        ServiceError(.timeout, "plugin '\(manifest.name)': \(call.service).\(call.method) did not answer within \(limitText)")
    }

    /// The code and message of a raised service error, through the API's `classify`.
    private func classified(_ error: LuaRef?) -> ServiceError? {
        guard let error, let classify else { return nil }
        let stack = host.vm.stack
        let top = stack.top
        defer { stack.setTop(top) }
        classify.push(onto: stack)
        error.push(onto: stack)
        guard (try? host.vm.call(arguments: 1, results: 2)) != nil,
              let name = stack.text(at: -2), let code = ServiceError.Code(name: name) else { return nil }
        return ServiceError(code, stack.text(at: -1) ?? name)
    }

    /// Ends `call` with `timeout`: its time limit passed while its task waited.
    func expire(_ call: PluginCall) {
        guard !call.isDone, let task = call.task else { return }
        call.answer(.failure(timedOut(call)))
        host.runTurn { host in host.cancel(task) }
    }
}
