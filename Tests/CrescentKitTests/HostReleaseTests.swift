@testable import CrescentKit
import Testing

/// A finished host is freed once its owner lets go, whatever the script left waiting on the
/// clock: the waiting jobs hold the host (through its link) and the host holds the clock, so a
/// cancelled job the clock kept would keep the whole host and its VM allocated. LeakSanitizer
/// (`make sanitize`) reported exactly that for the two tests that end with a sleep or a
/// repeating timer pending; these check it in every build.
@Suite struct HostReleaseTests {
    @Test(arguments: [
        "task(function() sleep(10) end)",
        "keep = timer.every(1, function() end)",
        "timer.after(30, function() end)",
    ])
    func aFinishedHostIsFreedWithWorkStillScheduled(_ script: String) throws {
        weak var observed: Host?
        do {
            let test = try TestHost()
            test.run(script)
            #expect(test.host.isRunning)
            observed = test.host
            test.host.finish(status: 0)
        }
        #expect(observed == nil)
    }

    @Test func aHostLeftRunningIsFreedWithItsTest() throws {
        weak var observed: Host?
        do {
            let test = try TestHost()
            test.run("task(function() sleep(10) end)")
            observed = test.host
        }
        #expect(observed == nil)
    }
}
