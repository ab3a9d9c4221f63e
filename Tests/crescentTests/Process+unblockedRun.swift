import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Process {
    /// Launches the process with no signal blocked. Foundation's `run()` spawns on the calling
    /// thread and the child inherits that thread's signal mask; the Swift concurrency threads a
    /// test runs on block most signals, so a child started from one could not be ended by
    /// SIGTERM or SIGUSR1 at all (the signal stayed pending), and a test of how crescent or the
    /// harness handles a signal would measure the mask, not the program.
    func runUnblocked() throws {
        var none = sigset_t(), previous = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try run()
    }
}
