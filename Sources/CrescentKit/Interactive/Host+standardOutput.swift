import CLua
import LuaBridge

extension Host {
    /// Sends `io.write` and `io.stdout:write` through the console, as `print` already goes, so a
    /// console that captures (the REPL's, which prints above its prompt) sees all of a script's
    /// output. Other files keep Lua's own `write`.
    func routeStandardOutputThroughConsole() throws(LuaError) {
        try Prelude.output.load(into: vm)
        let console = self.console
        vm.pushFunction { [unowned self] stack in
            self.presenter.clearForOutput()
            var length = 0
            if let pointer = lua_tolstring(stack.state, 1, &length) {
                console.write(bytes: UnsafeRawBufferPointer(start: pointer, count: length))
            }
            return .none
        }
        try vm.call(arguments: 1, results: 0)
    }
}
