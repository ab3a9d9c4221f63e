import LuaBridge
import Model

/// The policy a Lua plugin's wrapped `io`, `os`, `require`, `package`, `loadfile` and `dofile`
/// check against (the prelude's plugin.lua does the wrapping): which paths it may read and
/// write, resolved as the kernel would follow them, which environment variables it may read
/// and which programs it may run.
extension LuaPluginRuntime {
    /// The system's Lua module folders, readable for `require`.
    static let luaModuleFolders = ["/usr/share/lua/5.4", "/usr/local/share/lua/5.4"]

    /// Pushes the policy table: `check(path, "read"|"write")` → true, or nil and the message
    /// (warned in the run's log too); `env` and `exec`, sets of the granted names; `native`.
    func pushPolicy(onto stack: LuaStack) {
        let vm = host.vm
        stack.newTable(fieldCount: 5)
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
            self.warnRefused(refusal)
            stack.pushNil()
            stack.push(refusal)
            return .values(2)
        }
        vm.register(field: "refused") { [unowned self] stack in
            // A refusal the Lua side decided (an environment variable, a program): logged.
            if let message = stack.text(at: 1) { self.warnRefused(message) }
            return .none
        }
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

    private func warnRefused(_ message: String) {
        (host.parent ?? host).log(.warn, plugin: manifest.name, message)
    }
}
