import Foundation
import Glibc
import Testing

/// Programs start off the loop (issue 38, D8): a script that starts hundreds at once keeps its
/// timers, while what the contract answers at the call (a missing program, `pid`) and every
/// ownership rule (a kill before the start, the host's exit, a fatal signal) still hold. End to
/// end through the binary, so `CRESCENT_BIN` can name an older one.
@Suite struct ProcessLaunchTests {
    /// The timer's largest gap while one turn starts 200 programs. The old launch blocked the
    /// loop in each child's exec (posix_spawn's vfork wait: 200 voluntary switches of the loop
    /// thread, and the timer 0.6-1.2 s late where the loop had 0.3-0.8 s of work and waiting for
    /// a CPU, debug build at load 18). Now the loop does not block for a start: the timer is late
    /// by about the loop's own time on (or waiting for) a CPU, which the machine's load sets, not
    /// by the starts. Both read from /proc/thread-self (schedstat and status) around the turn.
    @Test func aTimerKeepsItsScheduleWhileAScriptStarts200Programs() async throws {
        let sandbox = try Sandbox()
        let result = try await HardeningAutomationAttackTests.run("""
            local function now() local f = io.open("/proc/uptime") local s = f:read("n") f:close() return s end
            -- The loop thread's time on or waiting for a CPU, and how often it blocked.
            local function loop()
              local f = io.open("/proc/thread-self/schedstat") local cpu, wait = f:read("n", "n") f:close()
              f = io.open("/proc/thread-self/status") local status = f:read("a") f:close()
              return (cpu + wait) / 1e9, tonumber(status:match("\\nvoluntary_ctxt_switches:%s*(%d+)"))
            end
            local count, ended, runnable, blocks = 200, 0, 0, 0
            local largest, last = 0, now()
            local ticker = timer.every(0.005, function()
              local n = now()
              if n - last > largest then largest = n - last end
              last = n
            end)
            timer.after(0.3, function()
              largest = 0
              local runnable0, blocks0 = loop()
              for _ = 1, count do
                local p = services.process:spawn({ "true" })
                p:on("didExit", function(e)
                  ended = ended + 1
                  if ended == count then
                    timer.after(0.05, function()
                      ticker:cancel()
                      print(string.format("gap %.3f runnable %.3f blocks %d", largest, runnable, blocks))
                    end)
                  end
                end)
              end
              local runnable1, blocks1 = loop()
              runnable, blocks = runnable1 - runnable0, blocks1 - blocks0
            end)
            """, in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        let words = result.stdout.split(whereSeparator: \.isWhitespace)
        let numbers = try #require(words.count == 6 ? [Double(words[1]), Double(words[3]), Double(words[5])].compactMap { $0 } : nil, "\(result)")
        try #require(numbers.count == 3, "\(result)")
        let (gap, runnable, blocks) = (numbers[0], numbers[1], numbers[2])
        #expect(blocks < 50, "the loop blocked \(blocks) times while it started 200 programs: \(result.stdout)")
        // /proc/uptime counts in 10 ms; the turn after the starts is in the gap too.
        #expect(gap < runnable + 0.15, "the timer waited \(gap) s, the loop ran or waited for a CPU \(runnable) s: \(result.stdout)")
    }

    /// A program that cannot be found or run is still an error of the call, at its line; one
    /// that only its exec finds wrong (a missing `#!` interpreter) is the contract's error too,
    /// from `wait()` and in `didExit`, naming the program, and `run` answers it.
    @Test func aProgramThatCannotStartIsAnErrorAtTheCallOrAtItsEnd() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("bad.sh", "#!/nonexistent/interp\necho\n")
        chmod(sandbox.path + "/bad.sh", 0o755)
        try sandbox.write("plain.txt", "not a program\n")
        let result = try await HardeningAutomationAttackTests.run("""
            print(pcall(services.process.spawn, services.process, { "no-such-program-crescent" }))
            print(pcall(services.process.spawn, services.process, { "./plain.txt" }))
            print(pcall(services.process.spawn, services.process, { "." }))
            task(function()
              local p = services.process:spawn({ "./bad.sh" })
              p:on("didExit", function(e) print("didExit", e.status, e.signal, e.error) end)
              local r, err = p:wait()
              print("wait", r, err and err.message, p.running, p.pid)
              local _, runErr = services.process:run({ "./bad.sh" })
              print("run", runErr.code, runErr.message)
              services.process:spawn({ "no-such-program-crescent" })
            end)
            """, in: sandbox)
        let interpreter = "program './bad.sh' names an interpreter that does not exist on its first line: #!/nonexistent/interp"
        let expected = [
            "false\tprocess.spawn: not_found: program 'no-such-program-crescent' was not found in PATH",
            "false\tprocess.spawn: permission: program './plain.txt' is not executable",
            // A folder found in PATH, as execvp answers it.
            "false\tprocess.spawn: permission: program '.' is not executable",
            "didExit\tnil\tnil\t\(interpreter)",
            "wait\tnil\t\(interpreter)\tfalse\tnil",
            "run\tnot_found\t\(interpreter)",
        ]
        for line in expected { #expect(result.stdout.contains(line), "\(result)") }
        // Raised at the line of the call inside the task.
        #expect(result.stderr.contains("script.lua:11: process.spawn: not_found: program 'no-such-program-crescent' was not found in PATH"),
                "\(result)")
    }

    /// `pid` right after `spawn` names the running program, the leader of its own group.
    @Test func thePidRightAfterSpawnIsTheProgramsAndLeadsItsGroup() async throws {
        let sandbox = try Sandbox()
        let result = try await HardeningAutomationAttackTests.run("""
            local ps = {}
            for i = 1, 20 do ps[i] = services.process:spawn({ "sleep", "30" }) end
            for i = 20, 1, -1 do
              local pid = ps[i].pid
              local f = io.open("/proc/" .. pid .. "/stat")
              local stat = f:read("a") f:close()
              local pgrp = stat:match("^%d+ %b() %a %d+ (%d+)")
              print(i, math.type(pid), tonumber(pgrp) == pid)
              ps[i]:kill("SIGKILL")
            end
            """, in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.filter { $0.hasSuffix("\tinteger\ttrue") }.count == 20, "\(result)")
    }

    /// Programs killed in the same turn that spawned them (most still queued for their start),
    /// runs cancelled at once, and programs still starting when the script ends: none is left.
    @Test func whatIsKilledOrEndedBeforeItsStartDoesNotRunOn() async throws {
        let tag = "7171.\(getpid())"
        let sandbox = try Sandbox()
        let result = try await HardeningAutomationAttackTests.run("""
            for i = 1, 60 do services.process:spawn({ "sleep", "\(tag)" }):kill("SIGKILL") end
            for i = 1, 20 do services.process:spawn({ "sleep", "\(tag)" }):kill() end
            for i = 1, 20 do
              local t = task(function() services.process:run({ "sleep", "\(tag)" }) end)
              t:cancel()
            end
            -- Left to the script's end (and the host's exit) while they start.
            for i = 1, 60 do services.process:spawn({ "sleep", "\(tag)" }) end
            timer.after(0, function() app.exit(0) end)
            """, in: sandbox)
        #expect(result.status == 0, "\(result)")
        let left = try await HardeningAutomationAttackTests.leftOver(tag)
        #expect(left.isEmpty, "left running: \(left)")
    }

    /// A fatal signal that runs no Swift while programs are starting: the groups started in that
    /// window are killed too (the guard's handler waits for a start under way).
    @Test(arguments: [SIGUSR1, SIGQUIT])
    func aFatalSignalWhileProgramsStartLeavesNoneRunning(signal: Int32) async throws {
        let tag = "7272.\(getpid())\(signal)"
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", """
            local started = 0
            timer.every(0.002, function()
              for i = 1, 4 do services.process:spawn({ "sleep", "\(tag)" }) end
              started = started + 4
              if started == 200 then print("ready") io.stdout:flush() end
            end)
            """)
        let process = CrescentProcess(["script.lua"], directory: sandbox.path, environment: ["SWIFT_BACKTRACE": "enable=no"])
        try process.start()
        #expect(await process.waitForOutput("ready\n", within: 30), "stderr: \(process.stderr)")
        let left = try await HardeningAutomationAttackTests.leftOver(tag, afterDeathOf: process, by: signal)
        #expect(left.isEmpty, "left running after the host died of signal \(signal): \(left.count) programs")
    }
}
