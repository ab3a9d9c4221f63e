import CPlatform
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The Dispatch sources of the signals that stop a spec run (`crescent test`); a script run
/// takes them on a thread of its own instead (``StopThread``).
///
/// Dispatch puts its handler for a signal in place on a thread of its own some time after the
/// source is resumed; until then the signal, set to be ignored so that its default action cannot
/// end the process first, is lost. On a loaded machine that gap outlasted a script's start, and a
/// Ctrl-C pressed as the script began did nothing. So a start waits until every handler is in
/// place (at most ``mostWait`` s).
///
/// ```swift
/// let sources = SignalSources.start([SIGINT, SIGTERM], on: queue) { number in stop(number) }
/// defer { for source in sources { source.cancel() } }
/// ```
enum SignalSources {
    /// The longest a start waits for Dispatch's handlers, in seconds: past it the run goes on
    /// (the handlers come later, as before).
    static let mostWait = 2.0

    /// Starts a source on `queue` for each of `numbers`, whose event runs `handler` with the
    /// signal's number, and returns once Dispatch handles them all.
    static func start(_ numbers: [Int32], on queue: DispatchQueue,
                      handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        let sources = numbers.map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
        // Polled, not timed: the kernel answers at once, and the bound is a count of short sleeps.
        let pause: UInt32 = 100
        for _ in 0..<Int(mostWait * 1_000_000 / Double(pause)) {
            if numbers.allSatisfy({ crescent_signal_is_caught($0) != 0 }) { break }
            usleep(pause)
        }
        return sources
    }
}
