import Foundation
import Testing

/// Process plugins end to end: a Python program in `plugins/`, spoken to over JSON-RPC by the
/// `crescent` binary.
@Suite struct ProcessPluginTests {
    static let manifest = """
        name = "probe"
        version = "1.0.0"
        crescent = ">=0.1.0"
        kind = "process"
        command = ["python3", "probe.py"]
        services = ["probe"]

        [settings.start]
        type = "string"
        default = "answer"
        doc = "answer, never, refuse, chatty or halting: how to answer initialize."
        """

    /// Echoes, crashes, hangs, writes garbage or a huge line, on request; logs to stderr.
    static let program = #"""
        import json, os, sys, time
        \#(PluginTestPython.hostPids)

        def send(message):
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

        def declare():
            method = lambda name, args=(): {"name": name, "args": [{"name": a, "type": "value?"} for a in args], "returns": "value"}
            return {"services": [{"name": "probe", "summary": "A test program.",
                "properties": [{"name": "level", "type": "number", "doc": "A number.", "value": 0}],
                "methods": [method("echo", ["value"]), method("pid"), method("crash"), method("hang"), method("garbage"),
                            method("long"), method("fail"), method("bad_set")],
                "events": [{"name": "ping", "payload": "{ n }", "doc": "A ping."}]}]}

        for line in sys.stdin:
            message = json.loads(line)
            method, id, params = message.get("method"), message.get("id"), message.get("params") or {}
            if method == "shutdown":
                break
            if id is None:
                continue
            if method == "initialize":
                time.sleep(float(os.environ.get("PROBE_DELAY", "0")))
                start = (params.get("settings") or {}).get("start")
                if start == "never":
                    continue
                if start == "refuse":
                    send({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "no device here"}})
                    continue
                if start == "chatty":
                    sys.stdout.write("probe 1.0 starting (not json)\n"); sys.stdout.flush()
                    send({"jsonrpc": "2.0", "method": "log", "params": {"level": "warn", "message": "hello before the answer"}})
                    send({"jsonrpc": "2.0", "method": "set", "params": {"service": "probe", "property": "level", "value": 1}})
                if start == "halting":
                    half = json.dumps({"jsonrpc": "2.0", "id": id, "result": declare()})
                    sys.stdout.write(half[:40]); sys.stdout.flush()
                    time.sleep(6)
                    sys.stdout.write(half[40:] + "\n"); sys.stdout.flush()
                    continue
                print("started in", os.getcwd(), os.environ.get("CRESCENT_PLUGIN_DIR") == os.getcwd(), file=sys.stderr, flush=True)
                send({"jsonrpc": "2.0", "id": id, "result": declare()})
                continue
            name, args = params.get("method"), params.get("args") or []
            if name == "echo":
                send({"jsonrpc": "2.0", "method": "set", "params": {"service": "probe", "property": "level", "value": len(str(args))}})
                send({"jsonrpc": "2.0", "method": "emit", "params": {"service": "probe", "event": "ping", "payload": {"n": 1}}})
                send({"jsonrpc": "2.0", "id": id, "result": args[0] if args else None})
            elif name == "pid":
                send({"jsonrpc": "2.0", "id": id, "result": host_pid()})
            elif name == "crash":
                os._exit(3)
            elif name == "hang":
                pass
            elif name == "garbage":
                sys.stdout.write("{not json\n"); sys.stdout.flush()
                send({"jsonrpc": "2.0", "id": id, "result": "after garbage"})
            elif name == "long":
                sys.stdout.write("x" * (17 << 20) + "\n"); sys.stdout.flush()
            elif name == "fail":
                send({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "no such thing", "data": {"code": "not_found"}}})
            elif name == "bad_set":
                send({"jsonrpc": "2.0", "method": "set", "params": {"service": "probe", "property": "level", "value": "high"}})
                send({"jsonrpc": "2.0", "method": "set", "params": {"service": "probe", "property": "nope", "value": 1}})
                send({"jsonrpc": "2.0", "id": id, "result": True})
        """#

    func sandbox(settings: String = "") throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/probe/plugin.toml", Self.manifest)
        try sandbox.write("plugins/probe/probe.py", Self.program)
        if !settings.isEmpty { try sandbox.write("crescent.toml", settings) }
        return sandbox
    }

    /// The probe plugin asking to read PROBE_DELAY (seconds it waits before answering
    /// `initialize`), granted in each of the sandbox's data folders `dataFolders`.
    func delayableSandbox(grantedIn dataFolders: [String]) async throws -> Sandbox {
        let sandbox = try self.sandbox()
        try sandbox.write("plugins/probe/plugin.toml", Self.manifest + "\n\n[permissions]\nenv = [\"PROBE_DELAY\"]\n")
        for folder in dataFolders {
            let granted = try await crescent(["plugins", "allow", "--data-dir", sandbox.path + "/" + folder, "probe"], in: sandbox)
            #expect(granted.status == 0, "\(granted)")
        }
        return sandbox
    }

    @Test func callsObservationEventsAndErrors() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["-e", """
            local probe = services.probe
            observe(probe, "level", function(new) print("level", new) end, { initial = false })
            probe:on("ping", function(payload) print("ping", payload.n) end)
            probe:echo({ a = 1 }, function(value, err) print("completion", value.a, err) end)
            task(function()
              print("await", probe:echo("hi"))
              local _, err = probe:fail()
              print("fail", err.code, err.message)
              print("bad_set", probe:bad_set(), probe.level)
            end)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.contains("completion\t1\tnil"), "\(result)")
        #expect(lines.contains("await\thi\tnil"), "\(result)")
        #expect(lines.contains("ping\t1"), "\(result)")
        #expect(lines.contains { $0.hasPrefix("level\t") }, "\(result)")
        #expect(lines.contains("fail\tnot_found\tno such thing"), "\(result)")
        #expect(lines.contains { $0.hasPrefix("bad_set\ttrue\t") && !$0.hasSuffix("high") }, "\(result)")
        #expect(result.stderr.contains("plugin 'probe': started in"), "\(result)")
        #expect(result.stderr.contains("True"), "\(result)")
        #expect(result.stderr.contains("which is not its type number; dropped"), "\(result)")
        #expect(result.stderr.contains("'probe.nope', which it does not declare; dropped"), "\(result)")
    }

    @Test func aCrashMidCallAnswersUnavailableAndTheNextCallRestartsIt() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["-e", """
            task(function()
              local first = services.probe:pid()
              local _, err = services.probe:crash()
              print("crash", err.code)
              local second = services.probe:pid()
              print("restarted", second ~= nil and second ~= first)
            end)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["crash\tunavailable", "restarted\ttrue"], "\(result)")
    }

    @Test func aProgramThatKeepsCrashingBeforeAnsweringIsStartedAgainWithBackoff() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["-e", """
            task(function()
              for i = 1, 3 do
                local _, err = services.probe:crash()
                print(i, err.code)
              end
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["1\tunavailable", "2\tunavailable", "3\tunavailable"], "\(result)")
        // No run answered a call: the second start waits 1 s, the third 2 s.
        #expect(result.elapsed >= 3, "\(result)")
    }

    @Test func hangsGarbageAndOverlongLines() async throws {
        let sandbox = try self.sandbox(settings: "[plugins]\ncall_timeout = 10\n")
        let result = try await crescent(["-e", """
            task(function()
              local _, err = services.probe:hang()
              print("hang", err.code)
              print("garbage", services.probe:garbage())
              _, err = services.probe:long()
              print("long", err.code)
              print("after", services.probe:echo(7))
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["hang\ttimeout", "garbage\tafter garbage\tnil", "long\tunavailable", "after\t7\tnil"], "\(result)")
        #expect(result.stderr.contains("skipped a malformed line"), "\(result)")
        #expect(result.stderr.contains("longer than 16777216 bytes"), "\(result)")
    }

    /// A `log` notification and a line that is not JSON before the answer to `initialize`: the
    /// first is logged, the second skipped with a warning, and the plugin starts, whether the
    /// answer is read holding the loop (a touch outside a task) or on the loop (inside one).
    @Test func notificationsAndStrayLinesBeforeTheInitializeAnswerDoNotFailTheStart() async throws {
        for touch in ["local p = services.probe; task(function() print(p:echo(5)) end)",
                      "task(function() print(services.probe:echo(5)) end)"] {
            let sandbox = try self.sandbox(settings: "[probe]\nstart = \"chatty\"\n")
            let result = try await crescent(["-e", touch], in: sandbox, timeLimit: 60)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdoutLines == ["5\tnil"], "\(result)")
            #expect(result.stderr.contains("plugin 'probe': hello before the answer"), "\(result)")
            #expect(result.stderr.contains("skipped a malformed line") && result.stderr.contains("probe 1.0 starting"), "\(result)")
            #expect(!result.stderr.contains("could not start"), "\(result)")
        }
    }

    /// JSON has no NaN or infinity: such an argument, at any depth, is an `invalid_argument`
    /// naming where it is, not a value silently dropped on the way.
    @Test func nonFiniteArgumentsAreRefusedNamingTheArgument() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["-e", """
            task(function()
              for label, value in pairs({ nan = 0/0, inf = { 1, math.huge, 3 }, ninf = { f = -math.huge } }) do
                local _, err = services.probe:echo(value)
                print(label, err and err.code, err and err.message)
              end
              print("finite", services.probe:echo(1.5))
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.contains { $0.hasPrefix("nan\tinvalid_argument\t") && $0.contains("probe.echo: value is NaN or infinite") }, "\(result)")
        #expect(lines.contains { $0.hasPrefix("inf\tinvalid_argument\t") && $0.contains("value[2] is NaN or infinite") }, "\(result)")
        #expect(lines.contains { $0.hasPrefix("ninf\tinvalid_argument\t") && $0.contains("value.f is NaN or infinite") }, "\(result)")
        #expect(lines.contains("finite\t1.5\tnil"), "\(result)")
    }

    /// A program that never answers `initialize`, touched first outside a task (which cannot
    /// wait): the loop is held at most 2 s, the touch says it is starting, the loop runs on
    /// meanwhile (timers tick), and after
    /// its start time limit the plugin fails, reported once, with the reason every touch then gives.
    @Test func aProgramThatNeverAnswersInitializeHoldsNotTheLoopAndIsReportedOnce() async throws {
        let sandbox = try self.sandbox(settings: "[plugins]\ncall_timeout = 3\n[probe]\nstart = \"never\"\n")
        let result = try await crescent(["-e", """
            local ticks = 0
            print(pcall(function() return services.probe end))
            print(pcall(function() return services.probe end))
            print(services.geocoder ~= nil)
            local ticker = timer.every(0.5, function() ticks = ticks + 1 end)
            timer.after(33, function()
              ticker:cancel()
              print("ticks", ticks >= 50)
              print(pcall(function() return services.probe end))
            end)
            """], in: sandbox, timeLimit: 120)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines.filter { !$0.isEmpty }
        #expect(lines.count == 5, "\(result)")
        for line in lines.prefix(2) {
            #expect(line.hasPrefix("false") && line.contains("plugin 'probe' is") && line.contains("starting") && line.contains("inside a task"), "\(result)")
        }
        #expect(lines.dropFirst(2).first == "true", "\(result)")
        #expect(lines.dropFirst(3).first == "ticks\ttrue", "\(result)")
        #expect(lines.last?.hasPrefix("false") == true && lines.last?.contains("did not answer 'initialize' within 30 s") == true, "\(result)")
        #expect(result.stderrLines.filter { $0.contains("did not answer 'initialize' within 30 s") && $0.contains("skipped") }.count == 1, "\(result)")
    }

    /// A program that writes part of its `initialize` answer at once and the rest 6 s later,
    /// touched first outside a task: the loop is held no longer than for a program that writes
    /// nothing (the touch says it is starting, timers tick), and the half read then is not lost:
    /// once the rest comes, a later touch finds the services and calls work.
    @Test func aProgramThatStopsHalfwayThroughItsAnswerHoldsTheLoopNoLonger() async throws {
        let sandbox = try self.sandbox(settings: "[probe]\nstart = \"halting\"\n")
        let result = try await crescent(["-e", """
            local ticks = 0
            local ticker = timer.every(0.1, function() ticks = ticks + 1 end)
            timer.after(4, function() print("ticks", ticks >= 8) end)
            print(pcall(function() return services.probe end))
            timer.after(12, function()
              ticker:cancel()
              local probe = services.probe
              task(function() print("echo", probe:echo("whole")) end)
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines.filter { !$0.isEmpty }
        #expect(lines.first?.hasPrefix("false") == true && lines.first?.contains("plugin 'probe' is starting") == true, "\(result)")
        #expect(lines.dropFirst().first == "ticks\ttrue", "\(result)")
        #expect(lines.last == "echo\twhole\tnil", "\(result)")
        #expect(!result.stderr.contains("malformed"), "\(result)")
    }

    /// Remote completion of `services.probe.` and `observe` of it do not hold the host for the
    /// start time limit of a program that never answers `initialize`.
    @Test func completionAndObserveDoNotWaitForAProgramThatNeverAnswers() async throws {
        let sandbox = try self.sandbox(settings: "[probe]\nstart = \"never\"\n")
        try sandbox.write("host.lua", "timer.every(1, function() end)\n")
        let host = try await ListeningHost(script: "host.lua", name: "probing", options: ["--data-dir", ":memory:"], sandbox: sandbox)
        let client = try host.client()
        var started = Date()
        let completed = client.call("complete", ["line": "services.probe.ec"], within: 30)
        #expect(completed?["result"] != nil, "\(String(describing: completed))")
        #expect(Date().timeIntervalSince(started) < 10, "\(Date().timeIntervalSince(started)) s")
        started = Date()
        let observed = client.call("observe", ["service": "probe", "key": "level"], within: 30)
        #expect(observed != nil, "\(String(describing: observed))")
        #expect(Date().timeIntervalSince(started) < 10, "\(Date().timeIntervalSince(started)) s")
        #expect(try host.answersEval(within: 10) == 2, "\(host.process.stderr)")
        let ended = await host.stop()
        #expect(ended.status == 143, "\(ended)")
    }

    /// A program that answers `initialize` after the 2 s a touch outside a task may hold the
    /// loop: that touch says it is starting, and once the answer has come a later touch (outside
    /// a task too) finds the services, and calls work.
    @Test func aProgramThatAnswersLateIsFoundByALaterTouch() async throws {
        let sandbox = try await delayableSandbox(grantedIn: ["data"])
        let result = try await crescent(["--data-dir", sandbox.path + "/data", "-e", """
            print(pcall(function() return services.probe end))
            timer.after(8, function()
              local probe = services.probe
              task(function() print("echo", probe:echo("late")) end)
            end)
            """], in: sandbox, environment: ["PROBE_DELAY": "3.5"], timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.first?.contains("plugin 'probe' is starting") == true, "\(result)")
        #expect(result.stdoutLines.last == "echo\tlate\tnil", "\(result)")
    }

    /// Once a run has learnt the program's services, later runs make them at once and read the
    /// `initialize` answer on the loop: a slow answer holds neither the loop nor the script, calls
    /// made meanwhile wait for it, and past `call_timeout` they answer `unavailable`.
    @Test func aSlowInitializeHoldsNeitherTheLoopNorTheCalls() async throws {
        let sandbox = try await delayableSandbox(grantedIn: ["data"])
        // Two time limits: one far past a slow start on a loaded machine, one a start cannot meet.
        try sandbox.write("patient.toml", "[plugins]\ncall_timeout = 120\n")
        try sandbox.write("hasty.toml", "[plugins]\ncall_timeout = 2\n")
        let data = ["--data-dir", sandbox.path + "/data"]
        let first = try await crescent(data + ["-e", "task(function() print('first', services.probe:echo(1)) end)"], in: sandbox)
        #expect(first.stdoutLines == ["first\t1\tnil"], "\(first)")

        let ticking = """
            local ticks = 0
            local ticker = timer.every(0.05, function() ticks = ticks + 1 end)
            local probe = services.probe                -- made at once: the program is still starting
            print("touched", ticks)
            task(function()
              local value, err = probe:echo("x")
              print("echo", value, err and err.code, ticks >= 5)
              if err then print(err.message) end
              ticker:cancel()
            end)
            """
        let slow = try await crescent(data + ["--config", "patient.toml", "-e", ticking], in: sandbox,
                                      environment: ["PROBE_DELAY": "1.5"], timeLimit: 150)
        #expect(slow.status == 0, "\(slow)")
        #expect(slow.stdoutLines == ["touched\t0", "echo\tx\tnil\ttrue"], "\(slow)")

        let late = try await crescent(data + ["--config", "hasty.toml", "-e", ticking], in: sandbox,
                                      environment: ["PROBE_DELAY": "30"], timeLimit: 60)
        #expect(late.status == 0, "\(late)")
        #expect(late.stdoutLines == ["touched\t0", "echo\tnil\tunavailable\ttrue",
                                     "plugin 'probe' did not finish starting within 2 s ([plugins] call_timeout)"], "\(late)")
    }

    /// A plugin never seen before has no services until its `initialize` answer declares them:
    /// a task that touches it waits for that answer while the loop runs on (timers tick), every
    /// task waiting gets the same services, and a start that fails is the touch's error.
    @Test func aTaskTouchingAPluginNeverSeenBeforeWaitsWithoutHoldingTheLoop() async throws {
        let sandbox = try await delayableSandbox(grantedIn: ["fresh", "broken"])
        let script = """
            local ticks = 0
            local ticker = timer.every(0.05, function() ticks = ticks + 1 end)
            local finished = 0
            for i = 1, 2 do
              task(function()
                local ok, probe = pcall(function() return services.probe end)
                print("touched", i, ok, ticks >= 5)
                if ok then print("echo", i, probe:echo(i)) else print(probe) end
                finished = finished + 1
                if finished == 2 then ticker:cancel() end
              end)
            end
            print("main chunk done", ticks)
            """
        let fresh = ["--data-dir", sandbox.path + "/fresh"]
        let slow = try await crescent(fresh + ["-e", script], in: sandbox, environment: ["PROBE_DELAY": "1.5"], timeLimit: 150)
        #expect(slow.status == 0, "\(slow)")
        #expect(slow.stdoutLines.first == "main chunk done\t0", "\(slow)")
        #expect(Set(slow.stdoutLines.dropFirst()) == ["touched\t1\ttrue\ttrue", "touched\t2\ttrue\ttrue",
                                                     "echo\t1\t1\tnil", "echo\t2\t2\tnil"], "\(slow)")
        #expect(slow.stderr.components(separatedBy: "started in").count == 2, "one program for both tasks: \(slow)")

        try sandbox.write("garbage.toml", "[probe]\nstart = \"refuse\"\n")
        let broken = try await crescent(["--data-dir", sandbox.path + "/broken", "--config", "garbage.toml", "-e", script],
                                        in: sandbox, timeLimit: 150)
        #expect(broken.stdoutLines.first == "main chunk done\t0", "\(broken)")
        for i in 1...2 {
            #expect(broken.stdoutLines.contains { $0.hasPrefix("touched\t\(i)\tfalse\t") }, "\(broken)")
        }
        #expect(broken.stdoutLines.filter { $0.contains("services.probe cannot start") && $0.contains("answered 'initialize' with an error: no device here") }.count == 2,
                "\(broken)")
        #expect(broken.stderr.components(separatedBy: "skipped").count == 2, "reported once: \(broken)")
    }

    /// `crescent services` lists a plugin's own summary, and `help` documents its methods, from
    /// what an earlier run learnt, without starting it.
    @Test func servicesAreDocumentedFromAnEarlierRunWithoutStartingThePlugin() async throws {
        let sandbox = try self.sandbox()
        let data = ["--data-dir", sandbox.path + "/data"]
        let before = try await crescent(data + ["services"], in: sandbox)
        #expect(before.stdout.contains("its methods are known once it starts"), "\(before)")
        _ = try await crescent(data + ["-e", "task(function() services.probe:pid() end)"], in: sandbox)
        let listed = try await crescent(data + ["--log-level", "debug", "services"], in: sandbox)
        #expect(listed.stdoutLines.contains { $0.hasPrefix("  probe") && $0.hasSuffix("A test program.") }, "\(listed)")
        #expect(!listed.stderr.contains("started in"), "\(listed)")
        let documented = try await crescent(data + ["services", "probe"], in: sandbox)
        #expect(documented.stdout.contains("services.probe:echo("), "\(documented)")
        #expect(!documented.stderr.contains("started in"), "\(documented)")
        let help = try await crescent(data + ["-e", "help(\"probe\")"], in: sandbox)
        #expect(help.stdout.contains("services.probe:echo("), "\(help)")
        #expect(!help.stderr.contains("started in"), "\(help)")
        // A changed program is started again to learn its declarations.
        try sandbox.write("plugins/probe/probe.py", Self.program + "\n# changed\n")
        let changed = try await crescent(data + ["services"], in: sandbox)
        #expect(changed.stdout.contains("its methods are known once it starts"), "\(changed)")
    }

    /// A start reads no recorded declarations: the record is read when something first asks
    /// (here `help`), so a plugin changed after the host started is not documented from a record
    /// made for its old files.
    @Test func recordedDeclarationsAreReadWhenFirstAskedNotAtStart() async throws {
        let sandbox = try self.sandbox()
        let data = ["--data-dir", sandbox.path + "/data"]
        _ = try await crescent(data + ["-e", "task(function() services.probe:pid() end)"], in: sandbox)
        let unchanged = try await crescent(data + ["-e", "help(\"probe\")"], in: sandbox)
        #expect(unchanged.stdout.contains("services.probe:echo("), "\(unchanged)")
        let changedAfterStart = try await crescent(data + ["-e", """
            local file = assert(io.open("plugins/probe/probe.py", "a"))
            file:write("\\n# changed after the host started\\n")
            file:close()
            help("probe")
            """], in: sandbox)
        #expect(changedAfterStart.stdout.contains("its methods are known once it starts"), "\(changedAfterStart)")
        #expect(!changedAfterStart.stdout.contains("services.probe:echo("), "\(changedAfterStart)")
    }

    @Test func aHundredCrashesLeaveNoProcessBehind() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["-e", """
            local function descriptors()
              local ls = io.popen("ls /proc/$PPID/fd | wc -l")
              local count = tonumber(ls:read("a"))
              ls:close()
              return count
            end
            task(function()
              local pids = {}
              -- One cycle first: what the host makes once, on first need, is not a leak.
              services.probe:pid()
              services.probe:crash()
              services.probe:pid()
              local before = descriptors()
              for i = 1, 100 do
                pids[#pids + 1] = services.probe:pid()
                local _, err = services.probe:crash()
                assert(err.code == "unavailable", tostring(err))
              end
              pids[#pids + 1] = services.probe:pid()
              print(table.concat(pids, " "))
              print("descriptors", before, descriptors())
              print("subscriptions", #subscriptions())
            end)
            """], in: sandbox, timeLimit: 240)
        #expect(result.status == 0, "\(result)")
        let pids = (result.stdoutLines.first ?? "").split(separator: " ").compactMap { Int32($0) }
        let counts = result.stdoutLines.dropFirst().first?.split(separator: "\t").dropFirst().compactMap { Int($0) } ?? []
        // A descriptor kept per cycle would show as 100 more; NIO and libdispatch may open one or
        // two of their own meanwhile.
        #expect(counts.count == 2 && counts[1] <= counts[0] + 2, "descriptors before and after: \(result)")
        #expect(result.stdoutLines.dropFirst(2).first == "subscriptions\t0", "\(result)")
        #expect(pids.count == 101, "\(result)")
        #expect(Set(pids).count == 101, "\(result)")
        for pid in pids { #expect(!Self.isAlive(pid), "process \(pid) outlived the host") }
    }

    @Test func aRunThatDoesNotTouchThePluginStartsNoProcess() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["--log-level", "debug", "-e", "print(services.geocoder ~= nil)"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(!result.stderr.contains("started in"), "\(result)")
    }

    @Test func theProgramExitsWhenTheHostIsKilled() async throws {
        let sandbox = try self.sandbox()
        try sandbox.write("script.lua", """
            task(function() print("pid", services.probe:pid()) end)
            timer.every(1, function() end)
            """)
        let process = CrescentProcess(["script.lua"], directory: sandbox.path)
        try process.start()
        #expect(await process.waitForOutput("pid\t", within: 30), "\(process.stdout) \(process.stderr)")
        let line = process.stdout.split(separator: "\n").first { $0.hasPrefix("pid\t") }
        let pid = line.flatMap { $0.split(separator: "\t").dropFirst().first }.flatMap { Int32($0) }
        #expect(pid != nil)
        process.send(SIGKILL, expecting: .death)
        _ = await process.finish(timeLimit: 10)
        var gone = false
        for _ in 0..<200 where !gone {
            gone = pid.map { !Self.isAlive($0) } ?? true
            if !gone { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(gone, "the plugin \(pid ?? 0) outlived its host")
    }

    /// True while `pid` runs (a zombie waiting for a parent that never reaps it has ended).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)...].prefix(1)
        return state != "Z" && state != "X"
    }
}
