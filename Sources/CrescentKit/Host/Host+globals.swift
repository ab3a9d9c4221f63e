import LuaBridge
import Model
#if canImport(Glibc)
import Glibc
#endif

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
                // `log:info(x)` logged the log table itself before x.
                if stack.isModuleSlip(function: "log.\(name)") {
                    throw LuaRaise("log.\(name): call it with '.', as log.\(name)(...), not ':'")
                }
                guard level >= self.options.logLevel else { return .none }
                var line = self.console.styled("\(name):", Console.Style(level)) + " "
                // The place ends in ": " already (`script.lua:3: `).
                line += stack.place(level: 1)
                var bytes: [UInt8] = []
                try Host.writeJoined(stack, from: 1, upTo: stack.top) { bytes.append(contentsOf: $0) }
                let text = String(decoding: bytes, as: UTF8.self)
                // A plugin's log line shows its control characters as escapes (Host.log(_:plugin:_:)).
                self.writeError(line + (self.pluginName == nil ? text : displayable(text)))
                return .none
            }
        }
        UndeclaredField.guardLibrary(onTop: "log", in: vm)
        vm.setGlobal("log")
    }

    /// Writes `tostring` of arguments `first...last`, tab-separated, as `print` does.
    static func writeJoined(_ stack: LuaStack, from first: Int32, upTo last: Int32? = nil,
                            _ write: (UnsafeRawBufferPointer) -> Void) throws {
        let last = last ?? stack.top
        guard first <= last else { return }
        for index in first...last {
            if index > first { "\t".utf8.withContiguousStorageIfAvailable { write(UnsafeRawBufferPointer($0)) } }
            guard stack.pushDescription(at: index) else { throw ErrorValueOnTop() }
            write(stack.bytes(at: -1) ?? UnsafeRawBufferPointer(start: nil, count: 0))
            stack.pop()
        }
    }

    // MARK: app

    private func installApp() {
        let stack = vm.stack
        stack.newTable()
        pushArguments(after: 0)
        stack.rawSet(-2, "args")
        vm.register(field: "exit", exit(function: "app.exit"))
        vm.setGlobal("app")
        // os.exit ends the run as app.exit does, after the teardown (process plugins and their
        // groups stopped): C's exit would leave them running.
        if vm.getGlobal("os") == .table {
            vm.register(field: "exit", exit(function: "os.exit"))
            // os.execute says which signal ended its program: SIGINT is a Ctrl-C kept from the host.
            vm.pushFunction { [unowned self] stack in
                if stack.integer(at: 1) == Int64(SIGINT) { onProgramInterrupted?() }
                return .none
            }
            vm.stack.setExecuteReportingSignals()
        }
        stack.pop()
    }

    /// `app.exit` or `os.exit`: asks the host to exit with the status given (a boolean as
    /// `lua5.4` takes it) once the run is torn down, and stops the running code. With
    /// `namingRemoteCaller`, a remote client's call is said on stderr (who ended the host).
    func exit(function: StaticString, namingRemoteCaller: Bool = true) -> LuaFunctionBody {
        { [unowned self] stack in
            let status: Int32
            switch stack.type(at: 1) {
            case .none, .nil: status = 0
            case .boolean: status = stack.boolean(at: 1) ? 0 : 1
            default:
                let code = try stack.checkInteger(1, function: function)
                guard (0...255).contains(code) else {
                    throw LuaRaise.badArgument(1, to: "\(function)", "exit status must be in 0...255, got \(code)")
                }
                status = Int32(code)
            }
            // os.exit takes Lua's own second argument (close), app.exit only the status.
            if "\(function)" == "app.exit" {
                try ExtraArguments.check(stack, takes: 1, signature: "app.exit([code])", arity: "a status code (optional)")
            }
            if let caller = self.remoteCaller {
                // C's exit from a remote REPL would end the host under every client and script,
                // as a typo; app.exit is the deliberate way, and says who ended it.
                if "\(function)" == "os.exit" {
                    throw LuaRaise("os.exit is refused for remote code (it would end this host for its script and every client): "
                                   + "call app.exit(\(status)) to end the host on purpose, or detach with Ctrl-D")
                }
                if namingRemoteCaller {
                    self.writeError("\(self.console.styled("crescent:", .warning)) \(caller) called \(function)(\(status)): the host exits")
                }
            }
            self.requestExit(status)
            self.vm.interrupter.interruptForExit()
            throw LuaRaise("exiting")
        }
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
        stack.newTable(arrayCount: Int32(clamping: options.argumentBytes.count), fieldCount: fields)
        for (index, argument) in options.argumentBytes.enumerated() {
            argument.withUnsafeBytes { stack.push(bytes: $0) }
            stack.rawSet(-2, index: Int64(index + 1))
        }
    }

    /// Puts the script's folder first on `package.path` and `package.cpath`.
    func addScriptFolderToPath(_ scriptPath: String) {
        let folder = scriptPath.contains("/") ? String(scriptPath[..<(scriptPath.lastIndex(of: "/") ?? scriptPath.endIndex)]) : "."
        scriptFolder = folder
        let stack = vm.stack
        _ = stack.ensure(4)
        defer { stack.pop() }
        guard vm.getGlobal("package") == .table else { return }      // package
        let root = folder.isEmpty ? "/" : folder
        for (field, patterns) in [("path", "/?.lua;" + root + "/?/init.lua;"), ("cpath", "/?.so;")] {
            guard stack.rawGet(-1, field) == .string else {          // package searched
                stack.pop()
                continue
            }
            stack.push(root + patterns)                              // package searched first
            stack.insert(at: -2)                                     // package first searched
            stack.concatenate(2)                                     // package joined
            stack.rawSet(-2, field)                                  // package
        }
        addModuleSuggestion()
    }

    // MARK: The Lua prelude

    /// The prelude's `inspect`, loaded now with the other modules that load on first use
    /// (``loadDeferredModules()``). Taken before any script could replace the global.
    func loadedInspect() -> LuaRef {
        loadDeferredModules()
        vm.getGlobal("inspect")
        return vm.ref()
    }

    /// Loads now the prelude modules that otherwise load on first use (`inspect`, `json`, the
    /// controllers): the REPL and remote control show results through inspect and complete every
    /// module's fields (`app.`, a controller's methods).
    private func loadDeferredModules() {
        let stack = vm.stack
        let top = stack.top
        for module in Prelude.globalModules {
            // Any read of the stand-in loads its module.
            if vm.getGlobal(module.name) == .table { try? stack.getField(-1, "_") }
            stack.setTop(top)
        }
        _ = loadedControllerHooks()
    }

    /// Gives each module written in Lua and shipped inside the binary (`inspect`, `json`) its
    /// stand-in global (``Prelude/firstUse``), which loads the module when first touched.
    private func installPrelude() throws(LuaError) {
        for module in Prelude.globalModules {
            try Prelude.firstUse.load(into: vm)
            // Registry slots, not references: the function is the VM's, and a reference would
            // keep the VM alive from inside it (BindingTables holds the references).
            let inputs = inputs(of: module).map(\.id)
            vm.pushFunction { [unowned self, unowned vm] stack in
                // Loaded on the VM's main stack, then moved to the caller's, which is a
                // coroutine's when a task touches the module first.
                try module.load(into: vm)
                for input in inputs { vm.stack.push(refID: input) }
                var count = 1 + Int32(inputs.count)
                if case .jsonMarks = module.input { count += pushJSONCodec() }
                // Last: the host's `resembles`, for the closest option to a misspelled one.
                vm.pushFunction(Self.resembles)
                count += 1
                if stack.state != vm.state { vm.stack.move(count, to: stack) }
                return .values(count)
            }
            try vm.call(arguments: 1, results: 1)
            vm.setGlobal(module.name)
        }
    }

    /// `resembles(name, names)`: the one of `names` that `name` looks like a misspelling of
    /// (``NameSuggestion``), or nothing; the prelude's modules name it in their errors.
    static func resembles(_ stack: LuaStack) throws -> LuaReturn {
        let name = try stack.checkString(1, function: "resembles")
        let names = UndeclaredField.names(inListAt: 2, in: stack)
        stack.setTop(2)
        guard let closest = NameSuggestion.closest(to: name, among: names, prefixes: false) else { return .none }
        stack.push(closest)
        return .one
    }

    /// Pushes the Swift halves of `json.encode` and `json.decode` (``ModelBinding/encodeJSON(_:)``,
    /// ``ModelBinding/decodeJSON(_:)``), the `json` chunk's last inputs; returns how many.
    private func pushJSONCodec() -> Int32 {
        vm.pushFunction { [unowned self] stack in binding.encodeJSON(stack) }
        vm.pushFunction { [unowned self] stack in binding.decodeJSON(stack) }
        return 2
    }

    /// What the chunk of global module `module` takes.
    private func inputs(of module: Prelude.Module) -> [LuaRef] {
        guard case .jsonMarks = module.input else { return [] }
        let marks = bindingTables.jsonMarks
        return [marks.null, marks.array, marks.object, bindingTables.jsonResolve]
    }
}
