import Dispatch
#if canImport(Glibc)
import Glibc
#endif

extension SpecRunner {
    /// Handles SIGINT and SIGTERM for a run (``SpecRunOptions/stopsOnInterrupt``): the first stops
    /// `session`, which reports what ran (exit 130 or 143); SIGTERM kills the programs the tests
    /// started at once; a second one, while the run is stopping, quits at once (no report) after
    /// killing them.
    static func interruptSources(_ session: SpecSession) -> [any DispatchSourceSignal] {
        SignalSources.start([SIGINT, SIGTERM], on: DispatchQueue(label: "crescent.test.interrupt")) { signal in
            let outcome = session.interrupt(signal: signal) {
                say("crescent test: interrupted: stopping the test under way (Ctrl-C again quits at once)\n")
            }
            // SIGTERM reached this process only, not the programs the tests started (a Ctrl-C
            // reaches the terminal's whole group): the test under way waits on them, and they
            // would outlive the run.
            if signal == SIGTERM { ProcessTree.killDescendants() }
            switch outcome {
            case .stopping, .late: break
            case .again:
                ProcessTree.killDescendants()
                say("crescent test: interrupted again: stopped at once, with no report\n")
                _exit(128 + signal)
            }
        }
    }

    /// Writes `line` to standard error at once (the report's own stream is stdout).
    private static func say(_ line: String) {
        line.withCString { _ = Glibc.write(2, $0, strlen($0)) }
    }
}
