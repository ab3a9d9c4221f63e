import CLua
import LuaBridge

/// Raised by a function that left its own error value on top of the stack.
struct ErrorValueOnTop: LuaPushableError {
    func push(onto stack: LuaStack) {}
}

extension Host {
    /// Installs every global of DESIGN.md's table that this host provides.
    func installGlobals() throws(LuaError) {
        installOutput()
        try installTime()
        installTimers()
        installTasks()
        if !isPluginHost {
            installApp()
            installViews()
        }
        try installPrelude()
    }

    // MARK: print and log

    private func installOutput() {
        let console = self.console
        vm.register("print") { [unowned self] stack in
            self.presenter.clearForOutput()
            try Host.writeJoined(stack, from: 1) { console.write(bytes: $0) }
            console.write("\n")
            return .none
        }
        let stack = vm.stack
        stack.newTable()
        for level in HostOptions.LogLevel.allCases {
            let name = level.name
            vm.register(field: name) { [unowned self] stack in
                guard level >= self.options.logLevel else { return .none }
                var line = self.console.styled("\(name):", Console.Style(level)) + " "
                luaL_where(stack.state, 1)
                line += stack.text(at: -1).map { $0.isEmpty ? "" : $0 + " " } ?? ""
                stack.pop()
                var bytes: [UInt8] = []
                try Host.writeJoined(stack, from: 1, upTo: stack.top) { bytes.append(contentsOf: $0) }
                self.writeError(line + String(decoding: bytes, as: UTF8.self))
                return .none
            }
        }
        vm.setGlobal("log")
    }

    /// Writes `tostring` of arguments `first...last`, tab-separated, as `print` does.
    static func writeJoined(_ stack: LuaStack, from first: Int32, upTo last: Int32? = nil,
                            _ write: (UnsafeRawBufferPointer) -> Void) throws {
        let last = last ?? stack.top
        guard first <= last else { return }
        for index in first...last {
            if index > first { "\t".utf8.withContiguousStorageIfAvailable { write(UnsafeRawBufferPointer($0)) } }
            guard crescent_ptostring(stack.state, index) == LUA_OK else { throw ErrorValueOnTop() }
            var length = 0
            let pointer = lua_tolstring(stack.state, -1, &length)
            write(UnsafeRawBufferPointer(start: pointer, count: length))
            stack.pop()
        }
    }

    // MARK: app

    private func installApp() {
        let stack = vm.stack
        stack.newTable()
        pushArguments(after: 0)
        stack.rawSet(-2, "args")
        vm.register(field: "exit") { [unowned self] stack in
            let status: Int32
            switch stack.type(at: 1) {
            case .none, .nil: status = 0
            case .boolean: status = stack.boolean(at: 1) ? 0 : 1
            default:
                let code = try stack.checkInteger(1, function: "app.exit")
                guard (0...255).contains(code) else {
                    throw LuaRaise.badArgument(1, to: "app.exit", "exit status must be in 0...255, got \(code)")
                }
                status = Int32(code)
            }
            self.requestExit(status)
            self.vm.interrupter.interruptForExit()
            throw LuaRaise("exiting")
        }
        vm.setGlobal("app")
    }

    // MARK: arg and require

    /// Sets `arg` as `lua5.4` does: `arg[-1]` the interpreter, `arg[0]` the script, then arguments.
    func setArguments(scriptName: String, hasScript: Bool) {
        let stack = vm.stack
        pushArguments(after: hasScript ? 2 : 1)
        if hasScript {
            stack.push(options.interpreter)
            stack.rawSet(-2, index: -1)
        }
        stack.push(hasScript ? scriptName : options.interpreter)
        stack.rawSet(-2, index: 0)
        vm.setGlobal("arg")
    }

    /// Pushes a new sequence of the script's arguments with room for `fields` more keys. Built on
    /// the stack rather than as a `LuaValue` table: a run that never converts a table would
    /// otherwise pay for the Swift runtime's first look-up of `LuaValue`'s hashing just to start.
    private func pushArguments(after fields: Int32) {
        let stack = vm.stack
        stack.newTable(arrayCount: Int32(clamping: options.arguments.count), fieldCount: fields)
        for (index, argument) in options.arguments.enumerated() {
            stack.push(argument)
            stack.rawSet(-2, index: Int64(index + 1))
        }
    }

    /// Puts the script's folder first on `package.path` and `package.cpath`.
    func addScriptFolderToPath(_ scriptPath: String) {
        let folder = scriptPath.contains("/") ? String(scriptPath[..<(scriptPath.lastIndex(of: "/") ?? scriptPath.endIndex)]) : "."
        scriptFolder = folder
        let source = """
            local folder = ...
            package.path = folder .. "/?.lua;" .. folder .. "/?/init.lua;" .. package.path
            package.cpath = folder .. "/?.so;" .. package.cpath
            """
        do {
            try vm.load(Array(source.utf8), name: "=require")
            vm.stack.push(folder.isEmpty ? "/" : folder)
            try vm.call(arguments: 1, results: 0)
        } catch {
            report(error, context: "cannot set up require")
        }
    }

    // MARK: The Lua prelude

    /// The prelude's `inspect`, loaded now rather than on first use: the REPL and remote control
    /// show results through it and complete its fields. Taken before any script could replace
    /// the global.
    func loadedInspect() -> LuaRef {
        if (try? vm.load(Array("local _ = inspect.defaults".utf8), name: "=[crescent inspect]")) != nil {
            _ = try? vm.call(arguments: 0, results: 0)
        }
        vm.getGlobal("inspect")
        return vm.ref()
    }

    /// Loads the modules written in Lua and shipped inside the binary (`inspect`, `json`); one
    /// that loads on first use gets its stand-in (``Prelude/firstUse``) instead.
    private func installPrelude() throws(LuaError) {
        for module in Prelude.globalModules {
            guard module.loadsOnFirstUse else {
                try module.load(into: vm)
                try vm.call(arguments: 0, results: 1)
                vm.setGlobal(module.name)
                continue
            }
            try Prelude.firstUse.load(into: vm)
            vm.pushFunction { [unowned vm] stack in
                // Loaded on the VM's main stack, then moved to the caller's, which is a
                // coroutine's when a task touches the module first.
                try module.load(into: vm)
                if stack.state != vm.state { lua_xmove(vm.state, stack.state, 1) }
                return .one
            }
            try vm.call(arguments: 1, results: 1)
            vm.setGlobal(module.name)
        }
    }
}
