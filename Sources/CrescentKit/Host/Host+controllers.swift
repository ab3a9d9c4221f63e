import LuaBridge
import Model

extension Host {
    /// Gives scripts the controllers' stand-ins (Prelude/controllers_firstuse.lua): `controller`,
    /// `help` and `app`'s fields load the controller prelude when a run first uses them, as the
    /// host does for its own first use (``loadedControllerHooks()``). Most runs make no
    /// controller, and undumping and running the prelude was a third of `crescent -e ''`.
    ///
    /// Everything of the host's is built here, at start: the primitives, the hooks' table, the
    /// chunks' bytecode as Lua strings and the shim's loader of them, the teardown. What loads
    /// later is Lua and C only (undumping and running the chunks), so no Swift allocates on that
    /// path and a load that finds no memory left is a Lua error at the script's line, never a
    /// trap.
    func installControllers() throws(LuaError) {
        let stack = vm.stack
        let embedded = try Prelude.controllersFirstUse.load(into: vm)          // firstuse
        // chunks: each chunk's text and name, by part name, which the loader reads on first use.
        let modules = [(part: "controllers", module: Prelude.controllers)] + Prelude.controllerParts
        stack.newTable(fieldCount: Int32(modules.count))                      // firstuse chunks
        for (part, module) in modules {
            stack.newTable(arrayCount: 2)                                     // firstuse chunks entry
            (embedded ? module.compiled : module.source).withUnsafeBytes { stack.push(bytes: $0) }
            stack.rawSet(-2, index: 1)
            stack.push(module.chunkName)
            stack.rawSet(-2, index: 2)
            stack.rawSet(-2, part)                                            // firstuse chunks
        }
        // The embedded bytecode when this liblua takes it (as it took firstuse's), else the sources.
        stack.push(embedded ? "b" : "t")                                      // firstuse chunks mode
        stack.pushNamedChunkLoader()                                          // firstuse loadChunk
        pushControllerPrimitives()                                            // firstuse loadChunk P
        stack.newTable(fieldCount: 16)                                        // firstuse loadChunk P hooks
        stack.pushValue(at: -1)
        controllerHooks = vm.ref()
        vm.getGlobal("app")                                                   // firstuse loadChunk P hooks app
        try vm.call(arguments: 4, results: 3)                                 // load errorText teardowns
        let teardowns = vm.ref()                                              // load errorText
        // The message handlers word error values with the controllers' errorText, through the
        // stand-ins' until they load.
        stack.setErrorTextFunction()                                          // load
        controllersLoader = vm.ref()
        teardownActions.append { [unowned self] in self.runControllerTeardowns(teardowns) }
        // help(controller) evaluates the stand-in before help loads the controllers, which then
        // replace the global it would be found by: the stand-ins carry the globals' documentation.
        for name in ["controller", "help"] {
            if vm.getGlobal(name) == .function, let entry = GlobalDocs.entry(named: name) { binding.document(functionOnTop: entry.text) }
            stack.pop()
        }
    }

    /// The controllers' hooks, loading the controller prelude first if no script has used it
    /// yet; nil in a plugin's host, when they have not loaded and the run has finished, or when
    /// they could not load (reported).
    func loadedControllerHooks() -> LuaRef? {
        guard let hooks = controllerHooks, let loader = controllersLoader else { return nil }
        let stack = vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        hooks.push(onto: stack)                                               // hooks
        // The stand-ins fill the hooks' table in one go when the controllers have loaded.
        if stack.rawGet(-1, "errorText") == .function { return hooks }        // hooks errorText
        guard isRunning else { return nil }
        loader.push(onto: stack)                                              // hooks nil load
        do throws(LuaError) { try vm.call(arguments: 0, results: 0) } catch {
            report(error, context: "error in the controllers")
            return nil
        }
        return hooks
    }

    /// Runs the controllers' teardown functions (`P.onTeardown`), last added first, each on its
    /// own: an error in one is reported and the others still run. None before they load.
    private func runControllerTeardowns(_ list: LuaRef) {
        let stack = vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        list.push(onto: stack)                                                // list
        var index = Int64(stack.rawLength(-1))
        while index > 0 {
            if stack.rawGet(-1, index: index) == .function {                  // list f
                do throws(LuaError) { try vm.call(arguments: 0, results: 0) } catch {
                    report(error, context: "error while tearing down")
                }
            }
            stack.setTop(base + 1)                                            // list
            index -= 1
        }
    }

    /// Pushes the few primitives the controller prelude (Prelude/controllers.lua) needs, a
    /// private table so scripts cannot reach them.
    private func pushControllerPrimitives() {
        let scopeType = vm.objectType(
            Scope.self, name: "Scope",
            methods: [
                "close": { [unowned self] stack in
                    try self.scopeType.check(1, in: stack, function: "close").end()
                    return .none
                },
            ],
            getter: { [unowned self] stack in
                guard let scope = self.scopeType.object(at: 1, in: stack) else { return .none }
                switch stack.text(at: 2) {
                case "active": stack.push(!scope.isEnded)
                case "count": stack.push(scope.count)
                case "name": stack.push(scope.name)
                default: stack.pushNil()
                }
                return .one
            }
        )
        let stack = vm.stack
        stack.newTable(fieldCount: 16)
        vm.register(field: "scope") { stack in
            scopeType.push(Scope(name: try stack.checkString(1, function: "scope")), onto: stack)
            return .one
        }
        scopeType.push(scriptScope, onto: stack)
        stack.rawSet(-2, "scriptScope")
        vm.register(field: "setScope") { [unowned self] stack in
            let scope = try scopeType.check(1, in: stack, function: "setScope")
            self.currentScope = scope
            if let task = self.currentTask, task.coroutine.thread == stack.state { task.scopeLink = scope.weakLink }
            return .none
        }
        // The controllers' own tasks (lifecycle, commands, method handlers): what their code
        // spawns belongs to the controller, not to the task.
        vm.register(field: "methodTask", taskFunction(ownsSpawns: false))
        vm.register(field: "within") { [unowned self] stack in
            let scope = try scopeType.check(1, in: stack, function: "within")
            try stack.checkFunction(2, function: "within")
            let base: Int32 = 2
            let succeeded = self.withScope(scope) { stack.callKeepingError(arguments: stack.top - base) }
            if !succeeded { throw ErrorValueOnTop() }
            return .values(stack.top - 1)
        }
        vm.register(field: "report") { [unowned self] stack in
            let message = stack.describe(at: 1)
            self.reportHandlerError(LuaError(.runtime, message), in: stack.text(at: 2) ?? "error in a controller")
            return .none
        }
        vm.register(field: "warn") { [unowned self] stack in
            self.writeError("\(self.console.styled("crescent:", .warning)) \(stack.describe(at: 1))")
            return .none
        }
        vm.register(field: "resembles", Self.resembles)
        // viewIds(root): the ids of a controller's view, for the error naming a missing one.
        vm.register(field: "viewIds") { [unowned self] stack in
            let ids = self.viewType.object(at: 1, in: stack)?.ids ?? []
            stack.newTable(arrayCount: Int32(clamping: ids.count))
            for (index, id) in ids.enumerated() {
                stack.push(id)
                stack.rawSet(-2, index: Int64(index + 1))
            }
            return .one
        }
        // willLoadFirst(): the first controller starts loading.
        vm.register(field: "willLoadFirst") { [unowned self] _ in
            if let hold = self.onFirstControllerLoading {
                self.onFirstControllerLoading = nil
                hold()
            }
            return .none
        }
        vm.register(field: "setDepth") { [unowned self] stack in
            self.navigationDepth = Int(try stack.checkInteger(1, function: "setDepth"))
            if self.navigationDepth > 0, let start = self.onFirstController {
                self.onFirstController = nil
                start()
            }
            return .none
        }
        vm.register(field: "present") { [unowned self] stack in
            let node = self.viewType.object(at: 1, in: stack)
            self.presenter.present(node, controller: stack.text(at: 2) ?? "", hints: stack.text(at: 3) ?? "",
                                   title: stack.text(at: 4) ?? "")
            return .none
        }
        // timerValueIgnored(timer, value): a method self:every runs returned a boolean.
        vm.register(field: "timerValueIgnored") { [unowned self] stack in
            if let timer = self.timerType.object(at: 1, in: stack), stack.type(at: 2) == .boolean {
                self.warnValueIgnored(timer, returned: stack.boolean(at: 2))
            }
            return .none
        }
        installKeyPrimitives()
        vm.register(field: "show") { [unowned self] stack in
            let slot = try self.viewType.check(1, in: stack, function: "show")
            guard slot.kind == SlotKind.self else { throw LuaRaise("addChild: '\(slot.id ?? "?")' is a view.\(slot.kind.name), not a view.slot") }
            let content = self.viewType.object(at: 2, in: stack)
            if let content, content.parent != nil, content.parent !== slot {
                throw LuaRaise("addChild: the child's view is already shown elsewhere")
            }
            slot.setContent(content)
            return .none
        }                                                             // P
    }

    /// The top controller's command names, `help` and `quit` last; none without a controller.
    /// Runs only the prelude's own code (raw reads of its state), never a script's.
    func commandNames() -> [String] {
        guard let hooks = loadedControllerHooks() else { return [] }
        let stack = vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        hooks.push(onto: stack)
        guard stack.rawGet(-1, "commandNames") == .function, (try? vm.call(arguments: 0, results: 1)) != nil,
              stack.type(at: -1) == .table else { return [] }
        var names: [String] = []
        for index in 1...Int64(max(stack.rawLength(-1), 1)) where stack.rawLength(-1) > 0 {
            if stack.rawGet(-1, index: index) == .string, let name = stack.text(at: -1) { names.append(name) }
            stack.pop()
        }
        return names
    }

    var scopeType: LuaObjectType<Scope> { vm.objectType(Scope.self, name: "Scope") }
}

extension Host {
    /// Sends one line of input to the top controller as a command (`add "oat milk"` calls its
    /// `add` command with `oat milk`). Empty lines are ignored. With `failureCounts` (a line of
    /// piped stdin, where nobody sees the status line), a command that is refused or fails makes
    /// the run exit 1, as `crescent send` does.
    public func receiveCommandLine(_ line: String, failureCounts: Bool = false) {
        let words: [String]
        do {
            words = try CommandWords.split(line)
        } catch {
            writeError("crescent: cannot read the command '\(line)': \(error)")
            if failureCounts { countFailure() }
            return
        }
        guard !words.isEmpty else { return }
        let stack = vm.stack
        var leading: Int32 = 0
        let hooks = loadedControllerHooks()
        do {
            if failureCounts, let hooks {
                hooks.push(onto: stack)
                _ = stack.rawGet(-1, "sendCommand")                  // hooks sendCommand
                vm.pushFunction { [unowned self] stack in              // hooks sendCommand report
                    if !stack.boolean(at: 2) { self.countFailure() }
                    return .none
                }
                stack.push(Int64(0))                                  // hooks sendCommand report token
                leading = 2
            } else if let hooks {
                hooks.push(onto: stack)
                _ = stack.rawGet(-1, "sendLine")                     // hooks sendLine
            } else {
                vm.getGlobal("app")
                try stack.getField(-1, "send")                        // app send
            }
            for word in words { stack.push(word) }
            try vm.call(arguments: leading + Int32(words.count), results: 0)
        } catch {
            if !handleControlFlow(error) { reportHandlerError(error, in: "error in command '\(words[0])'") }
        }
        stack.setTop(0)
    }
}
