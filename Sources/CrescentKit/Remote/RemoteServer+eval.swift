import LuaBridge
import Model
import Synchronization

extension RemoteServer {
    /// `eval { code }`: runs the chunk as a task owned by the client (it may await services; what
    /// it starts ends when the client leaves) and answers `{ text, value? }` when it ends.
    func eval(_ params: Value, _ session: RemoteSession, _ reply: @escaping (Result<Value, MethodError>) -> Void) throws(MethodError) {
        guard let code = try Self.string(params, "code", of: "eval") else { return }
        guard session.evalTask == nil else {
            throw MethodError(code: Self.failedCode, message: "eval: a chunk of this client is still running; send interrupt first")
        }
        if !chunks.push(code, vm: host.vm) {
            switch host.compileChunk(code, chunkName: "=remote") {
            case .incomplete(let error), .failed(let error):
                throw MethodError(code: Self.failedCode, message: error.message, data: ["kind": "syntax"])
            case .function:
                chunks.keep(code, vm: host.vm)
            }
        }
        // A chunk that is only a misspelled global's name: its `nil` gets the REPL's note.
        let unsetName = GlobalNameHint.unsetName(typed: code, in: host.vm)
        let stack = host.vm.stack
        let function = stack.top
        let connection = session.connection
        let task = host.withScope(session.scope) {
            host.startTask(function: function, arguments: 0, in: stack) { [unowned self, unowned session] ending in
                session.evalTask = nil
                connection.codeRunning.store(false, ordering: .relaxed)
                reply(self.result(of: ending, unsetName: unsetName, owner: session.scope))
                self.host.clearStrayInterrupt()
            }
        }
        stack.setTop(function - 1)
        session.evalTask = task
        let interrupter = host.vm.interrupter
        task.onResume = { [unowned self] running in
            if running { self.beginOutput(to: connection) } else { self.endOutput() }
            self.host.remoteCaller = running ? "remote client \(connection.id)" : nil
            connection.codeRunning.store(running, ordering: .relaxed)
            // An interrupt read while this eval still waited its turn on the host loop.
            if running && connection.interruptRequested.load(ordering: .relaxed) { interrupter.interruptRunningCode() }
        }
        host.resume(task, arguments: 0)
    }

    /// The answer to an eval that ended.
    /// `unsetName`: the note for a chunk that is only a misspelled global's name.
    /// `owner`: the client's scope, which ends what the chunk started when the client leaves.
    private func result(of ending: LuaTask.Ending, unsetName: String?, owner: Scope) -> Result<Value, MethodError> {
        switch ending {
        case .returned(let stack, let count):
            guard count > 0, let inspect else { return .success(["text": ""]) }
            if let unsetName, count == 1, stack.type(at: stack.top) == .nil {
                return .success(["text": .string(GlobalNameHint.nilLine(note: unsetName)), "value": .null])
            }
            var shown = host.describeValues(count, on: stack, inspect: inspect)
            if count == 1, let kind = liveOwnedKind(at: stack.top, owner: owner, stack) {
                // `crescent eval 'timer.after(1, f)'` prints a live timer that ends a moment later,
                // when the client hangs up: what the chunk starts is the client's (the README).
                shown += "  -- the \(kind) is this client's, so it ends when the client disconnects (crescent eval's does once it has "
                    + "printed this): start it from the script, or keep a client attached (crescent attach), for it to go on"
            }
            let text = Value.string(shown)
            if count == 1 {
                // The common answer, built at its size at once.
                switch host.binding.jsonForm(at: stack.top, in: stack) {
                case .success(let value): return .success(["text": text, "value": value])
                case .failure(let refusal): return .success(["text": text, "valueError": .string(refusal.message)])
                }
            }
            var answer: Fields = ["text": text]
            var values: [Value] = []
            for index in (stack.top - count + 1)...stack.top {
                switch host.binding.jsonForm(at: index, in: stack) {
                case .success(let value): values.append(value)
                case .failure(let refusal):
                    answer["valueError"] = .string(refusal.message)
                    return .success(.object(answer))
                }
            }
            answer["value"] = .array(values)
            return .success(.object(answer))
        case .failed(let error):
            if host.handleControlFlow(error) {
                return .failure(MethodError(code: Self.failedCode, message: "the host is exiting", data: ["kind": "exit"]))
            }
            // The misspelled global gets its "did you mean", as in the script and the REPL.
            let folded = GlobalNameHint.hinted(TracebackFolding.folded(error.message, always: true), in: host.vm)
            let message = error.kind == .interrupted ? "interrupted" + Repl.traceback(of: folded) : folded
            let firstLine = message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? message
            return .failure(MethodError(code: Self.failedCode, message: firstLine,
                                        data: ["kind": error.kind == .interrupted ? "interrupted" : "runtime",
                                               "traceback": .string(message)]))
        case .cancelled:
            return .failure(MethodError(code: Self.failedCode, message: "interrupted (the chunk was waiting; it was cancelled)",
                                        data: ["kind": "interrupted"]))
        }
    }

    /// "timer", "task" or "subscription" when the value at `index` is one of those, live and
    /// owned by `owner`; nil otherwise.
    private func liveOwnedKind(at index: Int32, owner: Scope, _ stack: LuaStack) -> String? {
        if let timer = host.timerType.object(at: index, in: stack) { return timer.isActive && owner.owns(timer) ? "timer" : nil }
        if let task = host.taskType.object(at: index, in: stack) { return !task.isDone && owner.owns(task) ? "task" : nil }
        if let subscription = host.binding.tables.subscriptionType.object(at: index, in: stack) {
            return subscription.isActive && owner.owns(subscription) ? "subscription" : nil
        }
        return nil
    }

    /// `interrupt`: stops this client's running eval. Code that was running has been stopped
    /// already by the ``InterruptWatch``; a chunk that waits (on a service, a sleep) is cancelled here.
    func interrupt(_ session: RemoteSession) -> Bool {
        // Set when running code was stopped for this interrupt before it was handled here.
        let stoppedRunningCode = session.connection.interruptRequested.exchange(false, ordering: .relaxed)
        // The code it was meant for may have ended before the interrupt reached it.
        if session.evalTask == nil { host.clearStrayInterrupt() }
        guard let task = session.evalTask, !task.isDone else { return stoppedRunningCode }
        host.cancel(task)
        return true
    }
}
