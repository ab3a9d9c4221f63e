import CLua
import LuaBridge

extension Host {
    /// Sends `io.write` and `io.stdout:write` through the console, as `print` already goes, so a
    /// console that captures (the REPL's, which prints above its prompt) sees all of a script's
    /// output. Other files keep Lua's own `write`.
    func routeStandardOutputThroughConsole() throws(LuaError) {
        let source = """
            local emit = ...
            local stdout, output, select, type, format = io.stdout, io.output, select, type, string.format
            local methods = getmetatable(stdout).__index
            local fileWrite = methods.write
            local function write(file, ...)
              if file ~= stdout then return fileWrite(file, ...) end
              local parts = table.pack(...)
              for i = 1, parts.n do
                local v = parts[i]
                if math.type(v) == "float" then
                  parts[i] = format("%.14g", v)
                elseif type(v) ~= "string" and type(v) ~= "number" then
                  error(("bad argument #%d to 'write' (string expected, got %s)"):format(i, type(v)), 3)
                end
              end
              emit(table.concat(parts, "", 1, parts.n))
              return file
            end
            methods.write = write
            io.write = function(...) return write(output(), ...) end
            """
        try vm.load(Array(source.utf8), name: "=[crescent output]")
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
