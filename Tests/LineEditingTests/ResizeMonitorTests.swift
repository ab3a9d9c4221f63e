#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LineEditing
import Testing

@Suite struct ResizeMonitorTests {
    /// Polls `condition` every 20 ms for up to five seconds.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<250 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func aResizeSignalSetsTheFlagAndCallsBack() async {
        let calls = CallCounter()
        let monitor = ResizeMonitor { calls.increment() }
        defer { monitor.cancel() }
        #expect(!monitor.consume())
        // Dispatch registers the source asynchronously: signal until it is seen.
        #expect(await eventually {
            kill(getpid(), SIGWINCH)
            return monitor.consume()
        })
        #expect(await eventually { calls.value >= 1 })
        try? await Task.sleep(for: .milliseconds(50))
        _ = monitor.consume()
        #expect(!monitor.consume(), "consumed")
    }
}

/// A counter the monitor's queue increments and the test reads.
private final class CallCounter: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private var count = 0
    private var lock = pthread_mutex_t()

    init() { pthread_mutex_init(&lock, nil) }
    deinit { pthread_mutex_destroy(&lock) }

    func increment() {
        pthread_mutex_lock(&lock)
        count += 1
        pthread_mutex_unlock(&lock)
    }

    var value: Int {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return count
    }
}
