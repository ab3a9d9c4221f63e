import Foundation
import Testing

/// Every program the host starts gets the same start, from one home (ProcessLauncher): a process
/// plugin's confined program and a script's `process:run` see the same signals at their default
/// action, an empty signal mask, only descriptors 0, 1 and 2, and a process group of their own
/// (issue 38: the plugin's start kept what the host's parent ignored, SIGUSR1 and SIGTSTP; M7:
/// every program began with signals 32 and 33, the two glibc keeps for itself, ignored).
@Suite struct SpawnPolicyTests {
    /// Prints, as JSON, what the program was started with.
    static let report = #"""
        import json, os, signal
        def is_open(fd):
            try:
                os.fstat(fd)
                return True
            except OSError:
                return False
        skip = {signal.SIGKILL, signal.SIGSTOP}
        ignored = sorted(s.name for s in signal.Signals if s not in skip and signal.getsignal(s) == signal.SIG_IGN)
        blocked = sorted(signal.Signals(s).name for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
        # The kernel's view of every signal, asked with the raw rt_sigaction (the C library's
        # refuses 32 and 33, and a confined plugin may not read /proc/self/status): the mask of
        # those ignored, as /proc shows SigIgn. Python itself ignores SIGPIPE and SIGXFSZ as it starts.
        import ctypes, platform
        libc = ctypes.CDLL(None, use_errno=True)
        rt_sigaction = {"x86_64": 13, "aarch64": 134}[platform.machine()]
        mask = 0
        for number in range(1, 65):
            action = ctypes.create_string_buffer(64)
            if libc.syscall(rt_sigaction, number, None, action, 8) == 0 and int.from_bytes(action.raw[:8], "little") == 1:
                mask |= 1 << (number - 1)
        mask &= ~((1 << (signal.SIGPIPE - 1)) | (1 << (signal.SIGXFSZ - 1)))
        policy = {"ignored": ignored, "blocked": blocked, "ownGroup": os.getpgid(0) == os.getpid(),
                  "descriptors": [fd for fd in range(3, 256) if is_open(fd)], "ignoredMask": format(mask, "016x")}
        """#

    static let manifest = """
        name = "policy"
        version = "1.0.0"
        crescent = ">=0.1.0"
        kind = "process"
        command = ["python3", "policy.py"]
        services = ["policy"]
        """

    /// A plugin with one method, `report`, answering the policy as a JSON string.
    static let plugin = report + "\n" + #"""
        import sys
        def send(message):
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()
        for line in sys.stdin:
            message = json.loads(line)
            method, id = message.get("method"), message.get("id")
            if method == "shutdown":
                break
            if id is None:
                continue
            if method == "initialize":
                send({"jsonrpc": "2.0", "id": id, "result": {"services": [{"name": "policy", "summary": "What it started with.",
                    "methods": [{"name": "report", "args": [], "returns": "string"}]}]}})
            else:
                send({"jsonrpc": "2.0", "id": id, "result": json.dumps(policy, sort_keys=True)})
        """#

    @Test func aPluginAndAScriptsProgramStartAlike() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/policy/plugin.toml", Self.manifest)
        try sandbox.write("plugins/policy/policy.py", Self.plugin)
        try sandbox.write("report.py", Self.report + "\nprint(json.dumps(policy, sort_keys=True))\n")
        try sandbox.write("script.lua", """
            task(function()
              print("plugin", (assert(services.policy:report())))
              local outcome = assert(services.process:run({ "python3", "report.py" }))
              io.write("process\t", outcome.stdout)
              -- A program that is not Python, as the kernel sees it, through run and spawn.
              io.write("run\t", assert(services.process:run({ "grep", "SigIgn", "/proc/self/status" })).stdout)
              local spawned = services.process:spawn({ "grep", "SigIgn", "/proc/self/status" })
              spawned:on("didOutput", function(output) print("spawn", output.line) end)
              spawned:wait()
              -- Through the shell, as a script's io.popen and os.execute start it.
              local popen = assert(io.popen("grep SigIgn /proc/self/status"))
              io.write("popen\t", popen:read("a"))
              print("popen close", popen:close())
              local writer = assert(io.popen("grep SigIgn /proc/self/status > written.txt; exit 3", "w"))
              print("popen-w close", writer:close())
              io.write("popen-w\t", assert(io.open("written.txt")):read("a"))
              print("execute close", os.execute("grep SigIgn /proc/self/status > executed.txt; kill -TERM $$"))
              io.write("execute\t", assert(io.open("executed.txt")):read("a"))
            end)
            """)
        // What started the host ignored these (as `nohup` or a shell's `trap ''` does): exec hands
        // that on, and each program must get its signals back. The host also ignores 32 and 33:
        // the test's posix_spawn of the shell left them so, as glibc's does for every child.
        let result = try await crescent(
            ["-c", "trap '' USR1 USR2 TSTP TTOU; exec \"$0\" \"$@\"", CrescentProcess.binaryPath, "script.lua"],
            executable: "/bin/sh", in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        let plugin = try #require(lines.first { $0.hasPrefix("plugin\t") }, "\(result)").dropFirst("plugin\t".count)
        let process = try #require(lines.first { $0.hasPrefix("process\t") }, "\(result)").dropFirst("process\t".count)
        #expect(plugin == process, "one start for both:\nplugin  \(plugin)\nprocess \(process)")
        let policy = try #require(try JSONSerialization.jsonObject(with: Data(plugin.utf8)) as? [String: Any])
        let ignored = policy["ignored"] as? [String] ?? []
        // Python itself ignores SIGPIPE and SIGXFSZ as it starts.
        #expect(Set(ignored).subtracting(["SIGPIPE", "SIGXFSZ"]).isEmpty, "ignored: \(ignored)")
        #expect((policy["blocked"] as? [String])?.isEmpty == true, "blocked: \(String(describing: policy["blocked"]))")
        #expect(policy["ownGroup"] as? Bool == true)
        #expect((policy["descriptors"] as? [Int])?.isEmpty == true, "descriptors: \(String(describing: policy["descriptors"]))")
        #expect(policy["ignoredMask"] as? String == "0000000000000000", "SigIgn: \(String(describing: policy["ignoredMask"]))")
        #expect(lines.filter { $0.hasPrefix("run\t") || $0.hasPrefix("spawn\t") } == ["run\tSigIgn:\t0000000000000000", "spawn\tSigIgn:\t0000000000000000"],
                "\(result)")
        // io.popen and os.execute start `/bin/sh -c` the same way, and answer as Lua's own do.
        let shell = ["popen", "popen-w", "execute"].map { "\($0)\tSigIgn:\t0000000000000000" }
        #expect(lines.filter { shell.contains($0) || $0.hasPrefix("popen\t") || $0.hasPrefix("popen-w\t") || $0.hasPrefix("execute\t") } == shell,
                "\(result)")
        #expect(lines.contains("popen close\ttrue\texit\t0") && lines.contains("popen-w close\tnil\texit\t3")
                    && lines.contains("execute close\tnil\tsignal\t15"), "\(result)")
    }
}
