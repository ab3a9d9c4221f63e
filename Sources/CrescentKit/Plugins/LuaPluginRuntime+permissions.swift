import LuaBridge
import Model

/// The policy a Lua plugin's wrapped `io`, `os`, `require`, `package`, `loadfile` and `dofile`
/// check against (the prelude's plugin.lua does the wrapping): which paths it may read and
/// write, resolved as the kernel would follow them, which environment variables it may read
/// and which programs it may run.
extension LuaPluginRuntime {
    /// The system's Lua module folders, readable for `require`.
    /// Resolved once: a granted folder is opened without following links (``PluginSandbox/open(_:mode:)``).
    static let luaModuleFolders = ["/usr/share/lua/5.4", "/usr/local/share/lua/5.4"].map(PluginSandbox.resolve)

    /// Pushes the policy table: `check(path, "read"|"write" [, quiet])` → true, or nil and the
    /// message (warned in the run's log too, unless `quiet`); `open(path, mode)`, `remove(path)`, `rename(from, to)`, `tmpfile()` →
    /// a descriptor (or 0), or nil and the refusal, or nil, the system's message and errno;
    /// `file(fd, mode [, pid])`, an io handle over a descriptor; `spawn(command, "r"|"w")` → the
    /// pipe's descriptor and the pid, or nil, the message and true when refused; `execute(command)`
    /// → os.execute's results, or "refused" and the message; `env` and `exec`, sets of the granted
    /// names; `native`.
    func pushPolicy(onto stack: LuaStack) {
        let vm = host.vm
        stack.newTable(fieldCount: 12)
        vm.register(field: "check") { [unowned self] stack in
            guard let path = stack.text(at: 1) else {
                stack.pushNil()
                stack.push("permission: plugin '\(self.manifest.name)' may not use a path that is not UTF-8 text")
                return .values(2)
            }
            let write = stack.text(at: 2) == "write"
            guard let refusal = self.sandbox.refusal(path, write: write, extraRead: Self.luaModuleFolders) else {
                stack.push(true)
                return .one
            }
            // A third argument true: only asked (package.searchpath's candidates), not warned.
            if !stack.boolean(at: 3) { self.warnRefused(refusal) }
            stack.pushNil()
            stack.push(refusal)
            return .values(2)
        }
        vm.register(field: "refused") { [unowned self] stack in
            // A refusal the Lua side decided (an environment variable, a program): logged.
            if let message = stack.text(at: 1) { self.warnRefused(message) }
            return .none
        }
        registerFiles(on: stack)
        registerExec(on: stack)
        for (field, names) in [("env", sandbox.permissions.env), ("exec", sandbox.permissions.exec)] {
            stack.newTable(fieldCount: Int32(names.count))
            for name in names {
                stack.push(true)
                stack.rawSet(-2, name)
            }
            stack.rawSet(-2, field)
        }
        stack.push(sandbox.permissions.native)
        stack.rawSet(-2, "native")
    }

    /// `open`, `remove`, `rename`, `tmpfile` and `file` of the policy table on top of `stack`.
    private func registerFiles(on stack: LuaStack) {
        let vm = host.vm
        let notText = "permission: plugin '\(manifest.name)' may not use a path that is not UTF-8 text"
        vm.register(field: "open") { [unowned self] stack in
            guard let path = stack.text(at: 1), let mode = stack.text(at: 2) else { return self.answer(.refused(notText), stack) }
            return self.answer(self.sandbox.open(path, mode: mode), stack)
        }
        vm.register(field: "remove") { [unowned self] stack in
            guard let path = stack.text(at: 1) else { return self.answer(.refused(notText), stack) }
            return self.answer(self.sandbox.remove(path), stack)
        }
        vm.register(field: "rename") { [unowned self] stack in
            guard let from = stack.text(at: 1), let to = stack.text(at: 2) else { return self.answer(.refused(notText), stack) }
            return self.answer(self.sandbox.rename(from, to: to), stack)
        }
        vm.register(field: "tmpfile") { [unowned self] stack in
            self.answer(self.sandbox.temporaryFile(), stack)
        }
        stack.pushFileFromDescriptorFunction()
        stack.rawSet(-2, "file")
    }

    /// `spawn` and `execute` of the policy table on top of `stack`.
    private func registerExec(on stack: LuaStack) {
        let vm = host.vm
        vm.register(field: "spawn") { [unowned self] stack in
            guard let command = stack.text(at: 1) else { return .none }
            let write = stack.text(at: 2) == "w"
            switch self.launch(command, write ? .write : .read, what: "io.popen") {
            case .started(let pid, let pipe):
                self.popenChildren.add(pid)
                stack.push(Int(pipe))
                stack.push(Int(pid))
                return .values(2)
            case .refused(let message):
                self.warnRefused(message)
                stack.pushNil()
                stack.push(message)
                stack.push(true)
                return .values(3)
            case .failed(let message):
                stack.pushNil()
                stack.push(message)
                return .values(2)
            }
        }
        vm.register(field: "execute") { [unowned self] stack in
            guard let command = stack.text(at: 1) else { return .none }
            switch self.execute(command) {
            case .success(let (success, kind, code)):
                if success { stack.push(true) } else { stack.pushNil() }
                stack.push(kind)
                stack.push(Int(code))
                return .values(3)
            case .failure(let failure):
                if failure.refused { self.warnRefused(failure.message) }
                stack.push(failure.refused ? "refused" : "failed")
                stack.push(failure.message)
                return .values(2)
            }
        }
    }

    /// Pushes what a file operation answered, as `open`, `remove` and `rename` return it.
    private func answer(_ outcome: PluginSandbox.Outcome, _ stack: LuaStack) -> LuaReturn {
        switch outcome {
        case .done(let descriptor):
            stack.push(Int(descriptor))
            return .one
        case .refused(let message):
            warnRefused(message)
            stack.pushNil()
            stack.push(message)
            return .values(2)
        case .failed(let message, let code):
            stack.pushNil()
            stack.push(message)
            stack.push(Int(code))
            return .values(3)
        }
    }

    func warnRefused(_ message: String) {
        (host.parent ?? host).log(.warn, plugin: manifest.name, message)
    }
}
