public import LuaBridge
import Synchronization

/// The interrupters of a host's Lua plugin VMs, so that Ctrl-C and `--timeout` stop plugin code
/// that holds the loop as they stop the script's. Safe from any thread.
public final class PluginInterrupters: Sendable {
    private let interrupters = Mutex<[LuaInterrupter]>([])

    public init() {}

    func add(_ interrupter: LuaInterrupter) {
        interrupters.withLock { $0.append(interrupter) }
    }

    /// Interrupts the code every plugin VM runs now, without stopping the run: the REPL's Ctrl-C.
    /// A plugin method stopped this way answers `cancelled`; the plugin runs on. (A VM running
    /// nothing keeps the interrupt until ``Host/clearStrayInterrupt()`` forgets it.)
    public func interruptRunningCode() {
        for interrupter in interrupters.withLock({ $0 }) { interrupter.interruptRunningCode() }
    }

    /// Interrupts every plugin VM as the run is stopped with `status` (or for its time limit).
    public func interrupt(status: Int32, timeout: Bool) {
        for interrupter in interrupters.withLock({ $0 }) {
            if timeout { interrupter.interruptForTimeout() } else { interrupter.interrupt(status: status) }
        }
    }
}
