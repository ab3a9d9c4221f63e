import LuaBridge
import Model

extension Host {
    /// Makes Lua's own readings of the time of day follow the run's clock: `os.time()` and
    /// `os.date(format)` without a time read the clock's wall time (the system's time in a normal
    /// run, virtual time under `crescent test`). With an explicit time (`os.time{...}`,
    /// `os.date(format, t)`) they are Lua's functions unchanged. `os.clock()` stays the
    /// processor time the run has used: it measures work, which virtual time does not do.
    func installTime() throws(LuaError) {
        let hasOS = vm.getGlobal("os") == .table
        vm.stack.pop()
        guard hasOS else { return }
        try Prelude.time.load(into: vm)
        // The host's clock when called: a spec file's host takes a new one for each test.
        vm.pushFunction { [unowned self] stack in
            let seconds = self.clock.wallTime.rounded(.down)
            stack.push(abs(seconds) < 9e18 ? Int64(seconds) : 0)
            return .one
        }
        try vm.call(arguments: 1, results: 0)
    }
}
