import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// DESIGN.md "The event loop": SIGINT and SIGTERM tear the run down gracefully and exit 130 and
/// 143, whether the loop is idle between timers or Lua is busy in a loop.
@Suite struct SignalTests {
    /// Keeps the loop turning on a timer; "ready" is printed once the loop runs.
    static let idleLoop = """
        timer.after(0, function() print("ready") end)
        timer.every(0.01, function() end)
        """

    /// Never returns to the loop; stdout is flushed by hand because it is only flushed at the end
    /// of a loop turn.
    static let busyLoop = """
        print("ready")
        io.stdout:flush()
        while true do end
        """

    private func signalled(
        _ source: String, with signal: Int32, timeLimit: Double = CrescentProcess.defaultTimeLimit,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> RunResult {
        let sandbox = try Sandbox()
        let process = try startScript(source, in: sandbox)
        let ready = await process.waitForOutput("ready\n", within: 10)
        #expect(ready, "the script did not print its ready line; stderr: \(process.stderr)", sourceLocation: sourceLocation)
        process.send(signal, expecting: .handled)
        return await process.finish(timeLimit: timeLimit, sourceLocation: sourceLocation)
    }

    @Test func sigintDuringATimerLoopExits130() async throws {
        let result = try await signalled(Self.idleLoop, with: SIGINT)
        #expect(result.status == 130, "\(result)")
        #expect(!result.killedBySignal, "crescent handles the signal itself: \(result)")
        #expect(result.stdout == "ready\n", "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func sigtermDuringATimerLoopExits143() async throws {
        let result = try await signalled(Self.idleLoop, with: SIGTERM)
        #expect(result.status == 143, "\(result)")
        #expect(!result.killedBySignal, "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func sigintDuringABusyLoopExits130() async throws {
        let result = try await signalled(Self.busyLoop, with: SIGINT)
        #expect(result.status == 130, "\(result)")
        #expect(!result.killedBySignal, "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func sigtermDuringABusyLoopExits143() async throws {
        let result = try await signalled(Self.busyLoop, with: SIGTERM)
        #expect(result.status == 143, "\(result)")
        #expect(!result.killedBySignal, "\(result)")
    }

    /// The script's first line already runs with SIGINT, SIGTERM and SIGHUP handled (the
    /// kernel's caught-signal mask of the process says so): a signal sent as a script starts is
    /// acted on, not lost while Dispatch has yet to put its handler in place (it was, nearly
    /// every time: a supervisor's SIGTERM right after a start did nothing).
    @Test func theFirstLineOfAScriptRunsWithTheSignalsHandled() async throws {
        let sandbox = try Sandbox()
        for _ in 0..<3 {
            let result = try await crescent(["-e", """
                local mask = tonumber(io.open("/proc/self/status"):read("a"):match("SigCgt:%s*(%x+)"), 16)
                local function caught(n) return (mask >> (n - 1)) & 1 == 1 end
                print(caught(2), caught(15), caught(1))
                """], in: sandbox)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "true\ttrue\ttrue\n", "\(result)")
        }
    }

    @Test func sigintWhileATaskSleepsExits130() async throws {
        let sandbox = try Sandbox()
        let process = try startScript("""
            task(function()
              print("ready")
              sleep(30)
              print("not reached")
            end)
            """, in: sandbox)
        #expect(await process.waitForOutput("ready\n", within: 10), "stderr: \(process.stderr)")
        // Timed from the signal: a start slowed by a loaded machine is not the stop's time.
        let sent = Date()
        process.send(SIGINT, expecting: .handled)
        let result = await process.finish()
        #expect(result.status == 130, "\(result)")
        #expect(result.stdout == "ready\n", "\(result)")
        #expect(Date().timeIntervalSince(sent) < 10, "\(result)")
    }

    /// The interrupt raised in Lua is an ordinary error, so a `pcall` in a loop swallows it.
    /// Lua stays Lua: the host's interrupt hook is installed only while an interrupt is pending, so
    /// a script's own hook (a profiler, a tracer) is its own and still leaves Ctrl-C working.
    @Test func sigintStopsABusyLoopUnderTheScriptsOwnHook() async throws {
        let result = try await signalled("""
            assert(debug.gethook() == nil, "a fresh script has no hook")
            local lines = 0
            debug.sethook(function() lines = lines + 1 end, "l", 0)
            print("ready")
            io.stdout:flush()
            while true do end
            """, with: SIGINT, timeLimit: 20)
        #expect(result.status == 130, "\(result)")
        #expect(!result.stderr.contains("did not stop"), "stopped by the interrupt, not by the forced exit: \(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func sigintStopsALoopThatCatchesEveryError() async throws {
        do {
            let result = try await signalled("""
                print("ready")
                io.stdout:flush()
                while true do pcall(function() while true do end end) end
                """, with: SIGINT, timeLimit: 20)
            #expect(result.status == 130, "\(result)")
            #expect(!result.stderr.contains("did not stop"), "stopped by the interrupt, not by the forced exit: \(result)")
        }
    }

    /// A C function that never returns cannot see the interrupt hook; the signal must still end
    /// the process (after a grace period if need be).
    @Test func sigtermStopsAScriptStuckInACFunction() async throws {
        do {
            let result = try await signalled("""
                print("ready")
                io.stdout:flush()
                string.rep("x", 1000000):find(".-y") -- quadratic backtracking, hours of C
                """, with: SIGTERM, timeLimit: 20)  // the 2 s grace period, with room for a busy machine
            #expect(result.status == 143, "\(result)")
        }
    }
}
