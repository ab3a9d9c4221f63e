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
        let stack = host.vm.stack
        let function = stack.top
        let connection = session.connection
        let task = host.withScope(session.scope) {
            host.startTask(function: function, arguments: 0, in: stack) { [unowned self, unowned session] ending in
                session.evalTask = nil
                connection.codeRunning.store(false, ordering: .relaxed)
                reply(self.result(of: ending))
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
    private func result(of ending: LuaTask.Ending) -> Result<Value, MethodError> {
        switch ending {
        case .returned(let stack, let count):
            guard count > 0, let inspect else { return .success(["text": ""]) }
            let text = Value.string(host.describeValues(count, on: stack, inspect: inspect))
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
