import Foundation
import Testing

/// Third permissions attack, F: under a data rlimit of 100–120 MB (`ulimit -d`) a run aborted
/// (`std::bad_alloc`, SIGABRT), crashed (SIGSEGV) or hung for good, deaf to SIGTERM. malloc's
/// 64 MiB heap pad took the room of the threads' stacks, and libdispatch retries a thread it
/// cannot make for ever. The pad is now left out under such limits, and a limit too small to
/// start at all is said, with status 1, instead of a signal or a hang.
@Suite struct HardeningMemoryLimitTests {
    /// Runs `crescent ARGS` from a shell that sets `limits` (as `ulimit` options) first.
    func crescentUnder(_ limits: String, _ arguments: String = "-e 'print(1)'", in sandbox: Sandbox? = nil) async throws -> RunResult {
        try await crescent(["-c", "ulimit \(limits) && exec \"$0\" --data-dir data \(arguments)", CrescentProcess.binaryPath],
                           executable: "/bin/sh", in: sandbox, timeLimit: 30)
    }

    @Test(arguments: [100_000, 110_000, 120_000])
    func aDataLimitTooSmallToStartIsSaid(kib: Int) async throws {
        let result = try await crescentUnder("-d \(kib)")
        #expect(!result.killedBySignal && !result.timedOut, "\(result)")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr == "crescent: the data size limit is \(kib) KiB (ulimit -d), too small to start: crescent needs "
                + "at least 131072 KiB (128 MiB); raise it with ulimit -d 131072 or more\n", "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
    }

    @Test func anAddressSpaceLimitTooSmallToStartIsSaid() async throws {
        let result = try await crescentUnder("-v 150000")
        #expect(!result.killedBySignal && !result.timedOut, "\(result)")
        #expect(result.status == 1 && result.stderr.contains("the virtual memory limit is 150000 KiB (ulimit -v), too small to start"),
                "\(result)")
    }

    /// Just above the floor a run works, plugins too: the floor refuses only what cannot start.
    /// (This one passes against the binary before the fix as well: it guards the floor, which
    /// a higher value would break.)
    @Test func aRunJustAboveTheFloorWorks() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/music/plugin.toml", PluginGrantTests.manifest(""))
        try sandbox.write("plugins/music/main.lua", PluginGrantTests.main)
        let script = "task(function() print((services.music:ping())) end)"
        for limits in ["-d 140000", "-v 300000"] {
            let result = try await crescentUnder(limits, "-e \"\(script)\"", in: sandbox)
            #expect(!result.killedBySignal && !result.timedOut, "\(limits): \(result)")
            #expect(result.status == 0 && result.stdout == "pong\n", "\(limits): \(result)")
        }
    }

    /// A small soft limit under a hard one with room is raised to the floor, and the run works.
    @Test func aSmallSoftLimitIsRaised() async throws {
        let result = try await crescentUnder("-S -d 100000 && ulimit -H -d 300000")
        #expect(!result.killedBySignal && !result.timedOut, "\(result)")
        #expect(result.status == 0 && result.stdout == "1\n", "\(result)")
    }
}
