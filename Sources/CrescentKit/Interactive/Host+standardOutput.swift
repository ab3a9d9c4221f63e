import LuaBridge

extension Host {
    /// Sends `io.write` and `io.stdout:write` through the console, as `print` already goes, so a
    /// console that captures (the REPL's, which prints above its prompt) sees all of a script's
    /// output; with `standardError`, `io.stderr:write` too (a controller app on the whole
    /// terminal holds it back with the rest: written raw it scrolled the frame and was lost with
    /// the alternate screen). Other files keep Lua's own `write`.
    func routeStandardOutputThroughConsole(standardError: Bool = false) throws(LuaError) {
        try Prelude.output.load(into: vm)
        vm.pushFunction { [unowned self] stack in
            self.emitWrite(stack, to: .output)
            return .none
        }
        guard standardError else { return try vm.call(arguments: 1, results: 0) }
        vm.pushFunction { [unowned self] stack in
            self.emitWrite(stack, to: .error)
            return .none
        }
        try vm.call(arguments: 2, results: 0)
    }

    /// Writes the string at index 1 of `stack` to the console's `stream`.
    private func emitWrite(_ stack: LuaStack, to stream: Console.Stream) {
        presenter.clearForOutput()
        guard let bytes = stack.bytes(at: 1) else { return }
        switch stream {
        case .output: console.write(bytes: bytes)
        case .error: console.writeError(bytes: bytes)
        }
    }
}
