import Dispatch
#if canImport(Glibc)
import Glibc
#endif

extension SpecRunner {
    /// Handles SIGINT for a run (``SpecRunOptions/stopsOnInterrupt``): the first stops `session`,
    /// which reports what ran; a second one, while the run is stopping, quits at once (exit 130,
    /// no report) after killing the programs the tests started.
    static func interruptSources(_ session: SpecSession) -> [any DispatchSourceSignal] {
        SignalSources.start([SIGINT], on: DispatchQueue(label: "crescent.test.interrupt")) { _ in
            let outcome = session.interrupt {
                say("crescent test: interrupted: stopping the test under way (Ctrl-C again quits at once)\n")
            }
            switch outcome {
            case .stopping, .late: break
            case .again:
                ProcessTree.killDescendants()
                say("crescent test: interrupted again: stopped at once, with no report\n")
                _exit(interruptedStatus)
            }
        }
    }

    /// Writes `line` to standard error at once (the report's own stream is stdout).
    private static func say(_ line: String) {
        line.withCString { _ = Glibc.write(2, $0, strlen($0)) }
    }
}
