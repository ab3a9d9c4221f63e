import CrescentKit
import Synchronization

extension TestHost {
    /// A host with a fresh thermostat registered as `services.thermostat`.
    convenience init(thermostat: Thermostat, failFast: Bool = false) throws {
        try self.init(failFast: failFast, plugins: [ThermostatPlugin(thermostat)])
    }

    /// Runs every loop job that is due now, `rounds` times (completions, delivery rounds, and the
    /// turns they cause). Virtual time does not move.
    func settle(rounds: Int = 5) {
        for _ in 0..<rounds { advance(seconds: 0) }
    }

    /// stderr without the tracebacks' indented lines.
    var errorLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

extension Thermostat {
    /// A copy of `startLog`.
    var starts: [String] { startLog.withLock { $0 } }
}
