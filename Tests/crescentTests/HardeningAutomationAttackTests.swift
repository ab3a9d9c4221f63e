import Foundation
import Glibc
import Testing

/// What the third attack on automation (issue 38, new24a) found, end to end through the binary.
@Suite struct HardeningAutomationAttackTests {
    /// The pids of the processes whose command line holds `tag`.
    static func processes(tagged tag: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                  let line = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            // Followed by the NUL that ends the word: one tag may begin another.
            return String(decoding: line, as: UTF8.self).contains(tag + "\u{0}") ? pid : nil
        }
    }

    /// Starts a script that spawns `sh` with two `sleep`s tagged `tag` in its group, once ready.
    static func startSpawning(_ tag: String, in sandbox: Sandbox, environment: [String: String?] = [:]) async throws -> CrescentProcess {
        try sandbox.write("script.lua", """
            local c = services.process:spawn({ "sh", "-c", "sleep \(tag) & sleep \(tag)" })
            timer.after(0.3, function() print("ready") io.stdout:flush() end)
            """)
        let process = CrescentProcess(["script.lua"], directory: sandbox.path, environment: environment)
        try process.start()
        #expect(await process.waitForOutput("ready\n", within: 20), "stderr: \(process.stderr)")
        #expect(processes(tagged: tag).count == 3)
        return process
    }

    /// The processes tagged `tag` still running within 2 s (killed, so none outlives the test).
    static func leftOver(_ tag: String) async throws -> [pid_t] {
        var left = processes(tagged: tag)
        for _ in 0..<100 where !left.isEmpty {
            try await Task.sleep(nanoseconds: 20_000_000)
            left = processes(tagged: tag)
        }
        for pid in left { kill(pid, SIGKILL) }
        return left
    }

    /// D1: the host died of SIGQUIT, SIGUSR1/2, SIGALRM, SIGABRT, ... (signals that run no Swift
    /// code) and every program it had started kept running, reparented to pid 1. The
    /// fatal-signal handler now kills their groups first, and the host still dies of the signal.
    @Test(arguments: [SIGQUIT, SIGUSR1, SIGALRM, SIGXCPU, SIGABRT, SIGSEGV])
    func aFatalSignalKillsTheProgramsTheHostStarted(signal: Int32) async throws {
        let tag = "777.\(getpid())\(signal)"
        let sandbox = try Sandbox()
        // Without the Swift runtime's backtracer, which takes SIGQUIT and the crash signals
        // before the default action (see the next test).
        let process = try await Self.startSpawning(tag, in: sandbox, environment: ["SWIFT_BACKTRACE": "enable=no"])
        let left = try await Self.leftOver(tag, afterDeathOf: process, by: signal)
        #expect(left.isEmpty, "left running after the host died of signal \(signal): \(left)")
    }

    /// Sends `signal` to `process`, which must die of it, and gives the processes tagged `tag`
    /// it left running (``leftOver(_:)``).
    static func leftOver(_ tag: String, afterDeathOf process: CrescentProcess, by signal: Int32) async throws -> [pid_t] {
        process.send(signal, expecting: .death)
        let result = await process.finish()
        #expect(result.killedBySignal && result.status == signal, "\(result)")
        return try await leftOver(tag)
    }

    /// D1 with the Swift runtime's backtracer on (its default): it handles SIGQUIT and the crash
    /// signals, and the handler killing the groups runs before it.
    @Test(arguments: [SIGQUIT, SIGABRT])
    func aFatalSignalKillsTheProgramsBeforeTheBacktracerRuns(signal: Int32) async throws {
        let tag = "777.\(getpid())\(signal)1"
        let sandbox = try Sandbox()
        let process = try await Self.startSpawning(tag, in: sandbox, environment: ["SWIFT_BACKTRACE": nil])
        process.send(signal, expecting: .death)
        let left = try await Self.leftOver(tag)
        #expect(left.isEmpty, "left running after the host was sent signal \(signal): \(left)")
        // The backtracer may take its time (or wait) after it wrote the backtrace.
        process.send(SIGKILL, expecting: .death)
        _ = await process.finish()
    }

    /// Runs `source` as `script.lua` in `sandbox`.
    static func run(_ source: String, in sandbox: Sandbox, timeLimit: Double = 30) async throws -> RunResult {
        try sandbox.write("script.lua", source)
        return try await crescent(["script.lua"], in: sandbox, timeLimit: timeLimit)
    }

    /// Runs `shell` (sh -ec) in `sandbox` with `$0` the binary under test.
    static func shell(_ shell: String, in sandbox: Sandbox, environment: [String: String?] = [:], timeLimit: Double = 30) async throws -> RunResult {
        try await crescent(["-ec", shell, CrescentProcess.binaryPath], executable: "/bin/sh", in: sandbox, environment: environment, timeLimit: timeLimit)
    }

    /// D2: pull-all called `process:spawn` unguarded: with no `git` in PATH (or a folder name the
    /// spawn refused) the error was reported, the rows stayed `pulling` and the run never ended.
    @Test func pullAllEndsWhenAPullCannotStart() async throws {
        let sandbox = try Sandbox()
        try HardeningAutomationRecheckTests.shell("git init -q repos/a; git init -q repos/b", in: sandbox.path)
        let result = try await crescent(["--ui", "plain", HardeningAutomationRecheckTests.pullAll, "repos"], in: sandbox,
                                        environment: ["HOME": sandbox.path, "PATH": "/nonexistent"], timeLimit: 30)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("2 failed"), "\(result)")
        #expect(result.stdout.contains("repos/a: not started: process.spawn: not_found: program 'git' was not found in PATH"), "\(result)")
        #expect(!result.stderr.contains("error in"), "\(result)")
    }

    /// D3: argv, `cwd` and `env` values that are not UTF-8 were refused ("must be a string, got
    /// string"): a name `files:list` gave could not be passed to a program. They are bytes now.
    @Test func processTakesArgvCwdAndEnvAsBytes() async throws {
        let sandbox = try Sandbox()
        try HardeningAutomationRecheckTests.shell("mkdir \"d$(printf '\\377')\"", in: sandbox.path)
        let result = try await Self.run(#"""
            local function hex(s) return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end)) end
            task(function()
              local p = services.process
              local dir = services.files:list(".")[1]
              print(hex(dir))
              local a = p:run({ "printf", "%s", "a\255b" })
              local c = p:run({ "sh", "-c", "basename \"$PWD\" | tr -d '\\n'" }, { cwd = dir })
              local e = p:run({ "sh", "-c", "printf %s \"$X\"" }, { env = { X = "v\255" } })
              local s = p:run("printf %s \"$(basename \"$PWD\")\"", { shell = true, cwd = "d\255" })
              print(hex(a.stdout), hex(c.stdout), hex(e.stdout), hex(s.stdout))
            end)
            """#, in: sandbox)
        #expect(result.stdoutLines == ["64ff", "61ff62\t64ff\t76ff\t64ff"], "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }

    /// D4: a changed file whose name is not UTF-8 made watch-run's status text fail ("not valid
    /// UTF-8"), so that change was not run; after 10 of them the handler was cancelled and the
    /// screen went on saying it was watching. The name is shown escaped and every change runs.
    @Test func watchRunRunsForNamesThatAreNotUTF8() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.makeFolder("w")
        let process = CrescentProcess(["--timeout", "40", "--ui", "plain", HardeningAutomationRecheckTests.watchRun, "--path", "w", "--", "true"],
                                      directory: sandbox.path)
        try process.start()
        try await Task.sleep(for: .seconds(1.5))
        for index in 0..<11 {
            try HardeningAutomationRecheckTests.shell("printf x > \"w/$(printf '\\377')\(index)\"", in: sandbox.path)
            try await Task.sleep(for: .seconds(0.4))
        }
        try HardeningAutomationRecheckTests.shell("printf x > \"w/n$(printf '\\377')\"", in: sandbox.path)
        try await Task.sleep(for: .seconds(0.5))
        _ = try sandbox.write("w/last.txt", "x")
        #expect(await process.waitForOutput("(w/last.txt changed)", within: 20), "\(process.stdout)")
        process.send(SIGTERM, expecting: .handled)
        let result = await process.finish(timeLimit: 60)
        #expect(result.stdout.contains("(w/n\\xff changed)"), "\(result)")
        #expect(result.stdout.contains("(w/last.txt changed)"), "\(result)")
        #expect(!result.stderr.contains("error in"), "\(result)")
        #expect(!result.stderr.contains("cancelled"), "\(result)")
    }

    /// D5: script arguments that are not UTF-8 reached Lua with U+FFFD; `arg`, `app.args` and
    /// the chunk's `...` hold the bytes given, as lua5.4's do.
    @Test func scriptArgumentsKeepTheirBytes() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("args.lua", """
            local function hex(s) return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end)) end
            print(hex(arg[1]), hex(app.args[1]), hex((...)), hex(arg[2]))
            """)
        let result = try await Self.shell(#"exec "$0" args.lua "$(printf 'a\377b')" "é""#, in: sandbox)
        #expect(result.stdoutLines == ["61ff62\t61ff62\t61ff62\tc3a9"], "\(result)")
    }

    /// D6 and D11: `TZ=:Europe/Paris` and `TZ=/usr/share/zoneinfo/Asia/Tokyo`, which the C library
    /// and `os.date` read as those zones, made schedules use UTC; `TZ=garbage` was called a
    /// POSIX rule with daylight saving.
    @Test func schedulesReadTZAsTheCLibraryDoes() async throws {
        let script = "print(pcall(function() return timer.at('09:00', function() end).schedule end)) app.exit(0)"
        let colon = try await crescent(["-e", script], environment: ["TZ": ":Europe/Paris"], timeLimit: 30)
        #expect(colon.stdoutLines == ["true\tat 09:00 Europe/Paris"], "\(colon)")
        let file = try await crescent(["-e", script], environment: ["TZ": "/usr/share/zoneinfo/Asia/Tokyo"], timeLimit: 30)
        #expect(file.stdoutLines == ["true\tat 09:00 Asia/Tokyo"], "\(file)")
        let garbage = try await crescent(["-e", script], environment: ["TZ": "garbage"], timeLimit: 30)
        #expect(garbage.stdout.contains("TZ 'garbage' is neither an IANA time zone nor a POSIX rule"), "\(garbage)")
        let rule = try await crescent(["-e", script], environment: ["TZ": "CET-1CEST,M3.5.0,M10.5.0/3"], timeLimit: 30)
        #expect(rule.stdout.contains("is not an IANA time zone but a POSIX rule with daylight saving"), "\(rule)")
    }

    /// D7: under `crescent test` each new timer was inserted into a sorted array (and every
    /// step swept it whole): 8,000 crons took 10 s, 50,000 never ended. Four times the timers
    /// now take about four times as long, in the process's CPU time.
    @Test func makingTimersInASpecGrowsLinearly() async throws {
        let (result, _) = try await TestCommandTests.run(["many_spec.lua": """
            local function make(n)
              local t0 = os.clock()
              local made = {}
              for i = 1, n do made[i] = timer.after(3600 + i, function() end) end
              local spent = os.clock() - t0
              for i = 1, n do made[i]:cancel() end
              return spent
            end
            it("makes timers", function()
              make(1000)
              local small, large = make(5000), make(20000)
              assert(large <= 8 * math.max(small, 0.05), string.format("20,000 timers took %.3f s of CPU, 5,000 took %.3f s", large, small))
            end)
            """], timeLimit: 120)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("1 passed"), "\(result)")
    }

    /// D9: a file made right after `watch` returned was reported `modified` (the first listing
    /// of the folder, made later, already held it); D10: in a glob `*` crossed `/`; D16: a
    /// malformed glob matched nothing instead of being an error.
    @Test func watchReportsNewFilesAsCreatedAndGlobsStopAtSlashes() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.makeFolder("d/src/sub")
        let result = try await Self.run(#"""
            local F = services.files
            local seen = {}
            local w = F:watch("d", { debounce = 0.2 })
            io.open("d/A-same-chunk", "w"):close()
            w:on("didChange", function(e) for _, c in ipairs(e.changes) do seen[#seen + 1] = c.kind .. ":" .. c.path end end)
            local g = F:watch("d", { recursive = true, glob = "src/*.lua" })
            local star = {}
            g:on("didChange", function(e) for _, c in ipairs(e.changes) do star[#star + 1] = c.path end end)
            local a = F:watch("d", { recursive = true, glob = "**/*.lua" })
            local any = {}
            a:on("didChange", function(e) for _, c in ipairs(e.changes) do any[#any + 1] = c.path end end)
            timer.after(0.3, function()
              for _, name in ipairs({ "d/top.lua", "d/src/f.lua", "d/src/sub/g.lua" }) do io.open(name, "w"):close() end
            end)
            timer.after(1.5, function()
              table.sort(seen) table.sort(star) table.sort(any)
              print(seen[1])
              print(table.concat(star, " "))
              print(table.concat(any, " "))
              print(pcall(F.watch, F, "d", { glob = "src/[a" }))
              task(function()
                for _, glob in ipairs({ "[", "", "../*" }) do print(pcall(F.list, F, "d", glob)) end
                app.exit(0)
              end)
            end)
            """#, in: sandbox)
        #expect(result.stdoutLines.prefix(3) == ["created:d/A-same-chunk", "d/src/f.lua", "d/src/f.lua d/src/sub/g.lua d/top.lua"], "\(result)")
        #expect(result.stdout.contains("glob '[' has a '[' without its ']'"), "\(result)")
        #expect(result.stdout.contains("glob is empty"), "\(result)")
        #expect(result.stdout.contains("glob '../*' has a '.' or '..' part"), "\(result)")
        #expect(result.stdout.contains("glob 'src/[a' has a '[' without its ']'"), "\(result)")
    }

    /// D12, D13, D15: a NUL in a path was "path holds a NUL byte, which no path can" without the
    /// path; `timeout = -1` said ">= 0" though 0 is refused too; writing /proc/self/comm said
    /// "'/proc/self' does not exist".
    @Test func errorMessagesSayWhatIsWrong() async throws {
        let sandbox = try Sandbox()
        let result = try await Self.run(#"""
            task(function()
              print(select(2, pcall(services.files.read, services.files, "/tmp/a\0b")))
              print(select(2, pcall(services.process.run, services.process, { "true" }, { timeout = -1 })))
              print(select(2, pcall(services.files.write, services.files, "/proc/self/comm", "x")))
            end)
            """#, in: sandbox)
        #expect(result.stdout.contains("path '/tmp/a\\0b' holds a NUL byte, which no file name can hold"), "\(result)")
        #expect(result.stdout.contains("options.timeout must be a number of seconds above 0, got -1"), "\(result)")
        #expect(result.stdout.contains("its folder '/proc/self' does not let a new file be made"), "\(result)")
        #expect(!result.stdout.contains("does not exist"), "\(result)")
    }

    /// D14: below `ulimit -n 64` no program can start, and the message still said to close
    /// files; it says to raise the limit, as io.open does.
    @Test func aTinyDescriptorLimitAsksToRaiseIt() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", """
            task(function() print(select(2, pcall(services.process.run, services.process, { "true" }))) end)
            """)
        let result = try await Self.shell(#"ulimit -n 40; exec "$0" script.lua"#, in: sandbox)
        #expect(result.stdout.contains("leaves scripts almost nothing"), "\(result)")
        #expect(result.stdout.contains("raise it (ulimit -n 1024)"), "\(result)")
        #expect(!result.stdout.contains("close files"), "\(result)")
    }
}
