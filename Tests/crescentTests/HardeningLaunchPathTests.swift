import Foundation
import Testing

/// What the attack on the process service's launch path found (issue 38, new26p D1–D6): a host
/// that could not start a thread hung for ever inside libdispatch, deaf to SIGTERM; the errors at
/// the process limit, for a non-finite timeout and for a nested `#!` said too little; `write`
/// raised "has ended" while `running` was still true. Serialized: the tests under a process
/// limit run as one user, whose processes and threads that limit counts together.
@Suite(.serialized) struct HardeningLaunchPathTests {
    /// libdispatch lets an idle worker thread go after a few seconds; past this, a Dispatch
    /// queue needs a new thread, which a full address space cannot give. (A run that ends does
    /// not show it: closing the VM frees what filled the address space before the loop closes.)
    static let dispatchIdle: UInt64 = 6_000_000_000

    /// D1, D2: SIGTERM to a host that could not start a thread did nothing (Dispatch's signal
    /// source needed a worker thread); only SIGKILL ended it. It ends with 143.
    @Test func sigtermEndsAHostThatCannotStartAThread() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", ThreadLimitTests.fill + """
            timer.after(120, function() print("not stopped") end)
            """)
        let process = CrescentProcess([ThreadLimitTests.addressSpace, CrescentProcess.binaryPath, "--data-dir", ":memory:", "script.lua"],
                                      executable: "/usr/bin/prlimit", directory: sandbox.path)
        try process.start()
        #expect(await process.waitForOutput("filled", within: 60))
        try await Task.sleep(nanoseconds: Self.dispatchIdle)
        process.send(SIGTERM, expecting: .handled)
        let result = await process.finish(timeLimit: 90)
        #expect(!result.timedOut && !result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        #expect(result.status == 143, "\(result)")
        #expect(!result.stdout.contains("not stopped"), "\(result)")
    }

    /// D4: `running` changes between turns, but `write` saw the program's end in the same turn
    /// and raised "has ended": a script guarding its writes with `if p.running` still failed.
    /// Such a write is dropped; one after the script's own `closeInput()` still raises.
    @Test func aWriteToAProgramThatEndedInTheSameTurnIsDropped() async throws {
        let sandbox = try Sandbox()
        let result = try await HardeningAutomationAttackTests.run(#"""
            local q = services.process:spawn({ "true" })
            local _ = q.pid -- waits for the start, so the end can come within this turn
            -- Busy in this turn until the program has surely ended (its exit was read off the
            -- loop); whether `running` already says so depends on when the end was read.
            local started = os.clock()
            while os.clock() - started < 0.5 do end
            print("write", pcall(q.write, q, "x"))
            local h = services.process:spawn({ "head", "-c", "1" })
            print("guarded", pcall(function()
              for _ = 1, 50 do if h.running then h:write(string.rep("y", 65536)) end end
            end))
            local c = services.process:spawn({ "cat" })
            c:closeInput()
            local ok, err = pcall(c.write, c, "late")
            print("after closeInput", ok, (tostring(err):gsub("process %d+", "process N")))
            """#, in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "write\ttrue",
            "guarded\ttrue",
            "after closeInput\tfalse\tchildProcess.write: invalid_argument: the stdin of process N is closed "
                + "(closeInput() was called, or options.stdin gave all of it)",
        ], "\(result)")
    }

    /// D5: `timeout = 0/0` and `math.huge` were "must be a number >= -1.7976931348623157e+308",
    /// a bound both meet.
    @Test func aTimeoutThatIsNotFiniteSaysWhatIsAccepted() async throws {
        let sandbox = try Sandbox()
        let result = try await HardeningAutomationAttackTests.run(#"""
            task(function()
              for _, timeout in ipairs({ 0 / 0, math.huge, -math.huge }) do
                print(select(2, services.process:run({ "true" }, { timeout = timeout })))
              end
            end)
            """#, in: sandbox)
        let expected = ["nan", "inf", "-inf"].map {
            "process.run: invalid_argument: options.timeout must be a finite number of seconds above 0, got \($0): leave it out (nil) for no timeout"
        }
        #expect(result.stdoutLines == expected, "\(result)")
    }

    /// D6: a script whose interpreter is itself a script with a missing interpreter was blamed
    /// on the interpreter that exists.
    @Test func aNestedShebangNamesTheMissingInterpreter() async throws {
        let sandbox = try Sandbox()
        let inner = try sandbox.write("inner", "#!/nonexistent/interp\necho hi\n", executable: true)
        try sandbox.write("outer", "#!\(inner)\n", executable: true)
        let result = try await HardeningAutomationAttackTests.run(#"""
            task(function()
              for _, program in ipairs({ "./outer", "./inner" }) do
                print(select(2, services.process:run({ program })))
              end
            end)
            """#, in: sandbox)
        #expect(result.stdoutLines == [
            "process.run: not_found: program './outer' runs through the script '\(inner)', whose first line names an interpreter "
                + "that does not exist: #!/nonexistent/interp",
            "process.run: not_found: program './inner' names an interpreter that does not exist on its first line: #!/nonexistent/interp",
        ], "\(result)")
    }

    /// Runs the binary as a user with a process limit of `limit` (`ulimit -u`): as nobody when
    /// the tests run as root, whom the kernel exempts from that limit; nil when they do not (the
    /// limit would count every process of the user running the tests).
    static func underProcessLimit(_ limit: Int, script: String, in sandbox: Sandbox) async throws -> RunResult? {
        guard getuid() == 0 else { return nil }
        try sandbox.write("script.lua", script)
        return try await crescent(
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/prlimit", "--nproc=\(limit)", CrescentProcess.binaryPath, "--data-dir", ":memory:", "script.lua"],
            executable: "/usr/bin/setpriv", in: sandbox, environment: ["HOME": sandbox.path, "XDG_RUNTIME_DIR": sandbox.path],
            timeLimit: 30)
    }

    /// D2: under `ulimit -u` 1–3 the script never ran and nothing was said (SIGTERM ignored at
    /// 2); it ends at once naming the limit.
    @Test func aProcessLimitTooLowToRunSaysSoAtTheStart() async throws {
        let sandbox = try Sandbox()
        for limit in [1, 3] {
            guard let result = try await Self.underProcessLimit(limit, script: #"print("ran")"#, in: sandbox) else { return }
            #expect(!result.timedOut && !result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
            #expect(result.status == 1, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.stderr.contains("Resource temporarily unavailable: the process limit is \(limit) (ulimit -u)"), "\(result)")
        }
    }

    /// D2: at `ulimit -u` 4–6 a `run`, then a spawn, left a host that never ended (its loop's
    /// thread spun in libdispatch for a thread it could not start) and ignored SIGTERM. It ends,
    /// and what failed names the limit.
    @Test func aRunAtATightProcessLimitEnds() async throws {
        let sandbox = try Sandbox()
        for limit in [4, 5, 6] {
            guard let result = try await Self.underProcessLimit(limit, script: #"""
                task(function()
                  local r, e = services.process:run({ "/bin/echo", "hi" })
                  print("run", r and r.stdout, e)
                  local p = services.process:spawn({ "/bin/echo", "x" })
                  print("wait", p:wait())
                end)
                """#, in: sandbox) else { return }
            #expect(!result.timedOut && !result.killedBySignal && result.stderrShowsNoCrash, "ulimit -u \(limit): \(result)")
            #expect((result.stdout + result.stderr).contains("the process limit is \(limit) (ulimit -u"), "ulimit -u \(limit): \(result)")
        }
    }

    /// D2, D3: at the process limit the starts that failed said only "Resource temporarily
    /// unavailable", and the host then never ended. They name `ulimit -u`, and the run ends.
    @Test func startsAtTheProcessLimitNameItAndTheRunEnds() async throws {
        let sandbox = try Sandbox()
        guard let result = try await Self.underProcessLimit(12, script: #"""
            local programs, said = {}, nil
            for i = 1, 20 do
              local p = services.process:spawn({ "sleep", "5" })
              p:on("didExit", function(e) said = said or e.error end)
              programs[i] = p
            end
            task(function()
              for _, p in ipairs(programs) do p:kill("SIGKILL") end
              for _, p in ipairs(programs) do p:wait() end
              print(said and said:gsub("'[^']*'", "'P'"))
            end)
            """#, in: sandbox) else { return }
        #expect(!result.timedOut && !result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["cannot start 'P': Resource temporarily unavailable: the process limit is 12 (ulimit -u, RLIMIT_NPROC), "
                                       + "and it counts every process and thread of this user; wait for programs to end, or raise it (ulimit -u)"],
                "\(result)")
    }
}
