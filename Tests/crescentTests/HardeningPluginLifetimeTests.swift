import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Plugins, attacked a third time (issue 35, perms3): what a plugin's program starts ends with
/// the host even when it double-forks, also after kill -9 of the host (E); a Lua plugin's FIFO
/// (D), its open files (H), the grants file's bound (B), `#!` programs (I) and member names (Q).
@Suite struct HardeningPluginLifetimeTests {
    /// Forks, leaves the session, forks again: the grandchild writes its pid (the host's number)
    /// to ARGV[1] and sleeps for minutes, reparented away from everything the host started; the
    /// parent ends once the file is there.
    static let daemon = #"""
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                quiet = os.open("/dev/null", os.O_RDWR)
                for descriptor in (0, 1, 2):
                    os.dup2(quiet, descriptor)
                with open(sys.argv[1] + ".tmp", "w") as out:
                    out.write(os.readlink("/proc/self"))
                os.rename(sys.argv[1] + ".tmp", sys.argv[1])
                time.sleep(300)
            os._exit(0)
        for _ in range(200):
            if os.path.exists(sys.argv[1]):
                break
            time.sleep(0.05)
        print("parent done", flush=True)
        """#

    /// A process plugin whose `daemon(path)` runs ``daemon`` and answers when it is off.
    static let processProgram = #"""
        import json, subprocess, sys
        for line in sys.stdin:
            message = json.loads(line)
            if message.get("method") == "initialize":
                answer = {"services": [{"name": "pd", "summary": "d", "methods": [{"name": "daemon", "args": [{"name": "path", "type": "string"}], "returns": "string"}]}]}
            elif "id" in message:
                path = message["params"]["args"][0]
                answer = subprocess.run([sys.executable, "daemon.py", path], capture_output=True, text=True).stdout.strip()
            else:
                continue
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}), flush=True)
        """#

    func processSandbox() async throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/pd/plugin.toml", """
            name = "pd"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "pd.py"]
            services = ["pd"]

            [permissions]
            exec = ["sleep"]
            """)
        try sandbox.write("plugins/pd/pd.py", Self.processProgram)
        try sandbox.write("plugins/pd/daemon.py", Self.daemon)
        #expect(try await inHome(["plugins", "allow", "pd"], sandbox).status == 0)
        return sandbox
    }

    /// The pid in the file at `path`, waiting up to 10 s for it.
    func pid(at path: String) async throws -> Int32? {
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), let pid = Int32(text) { return pid }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// True when `pid` has ended within 5 s (killed by pid if not, so nothing stays behind).
    func ends(_ pid: Int32) async throws -> Bool {
        for _ in 0..<100 {
            if !PluginPermissionsTests.isRunning(pid) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        kill(pid, SIGKILL)
        return false
    }

    var dataFolder: String { "/.local/share/crescent/plugin-data" }

    /// A double-forked grandchild of a process plugin's program ended with the host before.
    @Test func aProcessPluginsDoubleForkedDaemonEndsWithTheHost() async throws {
        let sandbox = try await processSandbox()
        let run = try await inHome(["-e", "task(function() print(services.pd:daemon('\(sandbox.path)\(dataFolder)/pd/d.pid')) end)"], sandbox)
        #expect(run.stdoutLines.contains("parent done\tnil"), "\(run)")
        let pid = try #require(try await pid(at: sandbox.path + dataFolder + "/pd/d.pid"), "\(run)")
        #expect(try await ends(pid), "the plugin's daemon \(pid) outlived the host")
    }

    /// ...also when the host is killed with SIGKILL, which runs no code of the host's.
    @Test func aProcessPluginsDaemonEndsAfterKill9OfTheHost() async throws {
        let sandbox = try await processSandbox()
        let home: [String: String?] = ["HOME": sandbox.path, "XDG_DATA_HOME": nil]
        let host = CrescentProcess(["-e", "task(function() print(services.pd:daemon('\(sandbox.path)\(dataFolder)/pd/k.pid')) sleep(60) end)"],
                                   directory: sandbox.path, environment: home)
        try host.start()
        #expect(await host.waitForOutput("parent done", within: 20), "\(host.stderr)")
        let pid = try #require(try await pid(at: sandbox.path + dataFolder + "/pd/k.pid"))
        host.send(SIGKILL, expecting: .death)
        _ = await host.finish(timeLimit: 20)
        #expect(try await ends(pid), "the plugin's daemon \(pid) outlived the host's kill -9")
    }

    /// A Lua plugin granted python3 and sleep, its main made of the sandbox's path.
    func luaExecSandbox(_ main: (String) -> String) async throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/le/plugin.toml", """
            name = "le"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["le"]

            [permissions]
            exec = ["python3", "sleep"]
            """)
        try sandbox.write("plugins/le/daemon.py", Self.daemon)
        try sandbox.write("plugins/le/main.lua", main(sandbox.path))
        #expect(try await inHome(["plugins", "allow", "le"], sandbox).status == 0)
        return sandbox
    }

    /// A Lua plugin's `os.execute` and `io.popen` of a program that double-forks: the daemons
    /// end with the host; and `io.popen` handles kept open no longer hold the host's exit.
    @Test func aLuaPluginsProgramsEndWithTheHostAndDoNotHoldItsExit() async throws {
        let sandbox = try await luaExecSandbox { path in """
            local le = service("le", "Execs.")
            le:method("go", {"path: string"}, "value", "Runs the daemon twice, keeps three sleeps.", function(path)
              os.execute("python3 \(path)/plugins/le/daemon.py " .. path .. "1")
              local reply = io.popen("python3 \(path)/plugins/le/daemon.py " .. path .. "2"):read("a")
              KEEP = {}
              for i = 1, 3 do KEEP[i] = io.popen("sleep 41") end
              return reply
            end)
            """ }
        let started = Date()
        let run = try await inHome(["-e", "task(function() print(services.le:go('\(sandbox.path)\(dataFolder)/le/l')) app.exit(0) end)"],
                                   sandbox, timeLimit: 30)
        #expect(run.status == 0, "\(run)")
        #expect(Date().timeIntervalSince(started) < 20, "kept io.popen handles held the exit: \(run)")
        for name in ["l1", "l2"] {
            let pid = try #require(try await pid(at: sandbox.path + dataFolder + "/le/" + name), "\(name): \(run)")
            #expect(try await ends(pid), "\(name): the Lua plugin's daemon \(pid) outlived the host")
        }
    }

    /// A FIFO in a Lua plugin's data folder held the host's loop in open(2) for good; now
    /// io.open, io.lines and dofile answer at once that it is not a regular file.
    @Test func aLuaPluginOpeningAFIFOGetsAnErrorNotAHang() async throws {
        let sandbox = try luaPluginSandbox("ff", main: """
            local ff = service("ff", "FIFO.")
            ff:method("go", {"path: string"}, "value", "Opens it.", function(path)
              local r, rm = io.open(path)
              local w, wm = io.open(path, "w")
              local lines = pcall(io.lines, path)
              local done, dm = pcall(dofile, path)
              return tostring(r) .. " " .. tostring(rm) .. "|" .. tostring(w) .. " " .. tostring(wm) .. "|" .. tostring(lines) .. "|" .. tostring(dm)
            end)
            """)
        let folder = sandbox.path + dataFolder + "/ff"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(mkfifo(folder + "/fifo", 0o600) == 0)
        let run = try await inHome(["-e", "task(function() print(services.ff:go('\(folder)/fifo')) end)"], sandbox, timeLimit: 30)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("nil \(folder)/fifo: is a FIFO (named pipe), which a plugin may not open"), "\(run)")
        #expect(run.stdout.contains("|nil \(folder)/fifo: is a FIFO (named pipe) or a device without its other end"), "\(run)")
        #expect(run.stdout.components(separatedBy: "which a plugin may not open").count == 4, "\(run)")
    }

    /// A Lua plugin keeping every file it opens took all the host's descriptors (19,985 kept);
    /// now the 257th open fails as the system's EMFILE would, and the host's own work goes on.
    @Test func aLuaPluginHoldsAtMost256OpenFiles() async throws {
        let sandbox = try luaPluginSandbox("fd", main: """
            local fd = service("fd", "Files.")
            fd:method("go", {"path: string"}, "value", "Keeps files.", function(path)
              KEPT = {}
              for i = 1, 1000 do
                local f, message, code = io.open(path)
                if not f then
                  local count = #KEPT
                  for _, kept in ipairs(KEPT) do kept:close() end
                  local again = io.open(path)
                  return count .. " " .. message .. " " .. tostring(code) .. " again " .. io.type(again)
                end
                KEPT[#KEPT + 1] = f
              end
              return "kept 1000"
            end)
            """)
        let run = try await inHome(["-e", "task(function() print(services.fd:go('\(sandbox.path)/plugins/fd/main.lua')) end)"],
                                   sandbox, timeLimit: 30)
        #expect(run.stdout.contains("256 io.open(\"\(sandbox.path)/plugins/fd/main.lua\"): plugin 'fd' has 256 files and programs open, the most a plugin may hold"), "\(run)")
        #expect(run.stdout.contains(" 24 again file"), "\(run)")
    }

    /// `plugins allow` wrote a grants file larger than the 1 MiB it reads, which voided every
    /// grant; now the grant that would pass the bound is refused and the others stay.
    @Test func aGrantThatWouldPassTheGrantsFilesBoundIsRefused() async throws {
        let sandbox = try Sandbox()
        let paths = (0..<10000).map { "\"/nonexistent/folder/with/a/rather/long/name/number/\($0)\"" }.joined(separator: ", ")
        for name in ["big1", "big2", "small"] {
            try sandbox.write("plugins/\(name)/plugin.toml", """
                name = "\(name)"
                version = "1.0.0"
                crescent = ">=0.1.0"
                kind = "lua"
                services = ["\(name)"]

                [permissions]
                read = [\(name == "small" ? "\"/nonexistent/small\"" : paths)]
                """)
            try sandbox.write("plugins/\(name)/main.lua", "service(\"\(name)\", \"x\"):method(\"hi\", {}, \"string\", \"hi\", function() return \"hi\" end)")
        }
        #expect(try await inHome(["plugins", "allow", "small"], sandbox).status == 0)
        #expect(try await inHome(["plugins", "allow", "big1"], sandbox).status == 0)
        let refused = try await inHome(["plugins", "allow", "big2"], sandbox)
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stderr.contains("cannot record the grant: the grants file would hold"), "\(refused)")
        let run = try await inHome(["-e", "task(function() print(services.small:hi()) end)"], sandbox)
        #expect(run.stdoutLines.first?.hasPrefix("hi") == true, "\(run)")
    }

    /// A process plugin whose command is a `#!` script, and a Lua plugin granted a script, failed
    /// with "exec: Permission denied" (Landlock did not let the interpreter run).
    @Test func aScriptProgramRunsInTheSandbox() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/sc/plugin.toml", """
            name = "sc"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["./main.py"]
            services = ["sc"]
            """)
        try sandbox.write("plugins/sc/main.py", "#!/usr/bin/env python3\n" + #"""
            import json, sys
            for line in sys.stdin:
                message = json.loads(line)
                if message.get("method") == "initialize":
                    answer = {"services": [{"name": "sc", "summary": "s", "methods": [{"name": "hi", "args": [], "returns": "string"}]}]}
                elif "id" in message:
                    answer = "script runs"
                else:
                    continue
                print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}), flush=True)
            """#, executable: true)
        try sandbox.write("plugins/ls/plugin.toml", """
            name = "ls"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["ls"]

            [permissions]
            exec = ["\(sandbox.path)/plugins/ls/run.sh"]
            """)
        try sandbox.write("plugins/ls/run.sh", "#!/bin/sh\necho shell script runs\n", executable: true)
        try sandbox.write("plugins/ls/main.lua", """
            service("ls", "x"):method("hi", {}, "string", "hi", function()
              return io.popen("\(sandbox.path)/plugins/ls/run.sh"):read("a")
            end)
            """)
        #expect(try await inHome(["plugins", "allow", "ls"], sandbox).status == 0)
        let run = try await inHome(["-e", "task(function() print(services.sc:hi()) print(services.ls:hi()) end)"], sandbox)
        #expect(run.stdoutLines.contains("script runs\tnil"), "\(run)")
        #expect(run.stdoutLines.contains("shell script runs"), "\(run)")
    }

    /// A method named addObserver replaced the service object's own; empty and dotted names, and
    /// a method named as a property, were accepted.
    @Test func memberNamesAreCheckedInLuaAndProcessPlugins() async throws {
        let sandbox = try Sandbox()
        let cases = [("s:method('addObserver', {}, 'value', 'd', function() return 'hijacked' end)", "method 'addObserver' of service 'nm' would hide the service object's own addObserver"),
                     ("s:method('', {}, 'value', 'd', function() end)", "method name \"\" of service 'nm' must be an identifier"),
                     ("s:method('a.b', {}, 'value', 'd', function() end)", "method name \"a.b\" of service 'nm' must be an identifier"),
                     ("s:property('p', 'string', 'd', 'x') s:method('p', {}, 'value', 'd', function() end)", "method 'p' of service 'nm': the service already has a property or method of that name"),
                     ("s:property('on', 'string', 'd', 'x')", "property 'on' of service 'nm' would hide the service object's own on")]
        for (index, (code, message)) in cases.enumerated() {
            _ = try luaPluginSandbox("nm", main: "local s = service('nm', 'x')\n" + code, in: sandbox)
            let run = try await inHome(["-e", "print(pcall(function() return services.nm end))"], sandbox)
            #expect(run.stdout.contains(message) || run.stderr.contains(message), "case \(index): \(run)")
        }
        try sandbox.write("plugins/pm/plugin.toml", """
            name = "pm"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "pm.py"]
            services = ["pm"]
            """)
        try sandbox.write("plugins/pm/pm.py", #"""
            import json, sys
            for line in sys.stdin:
                message = json.loads(line)
                if message.get("method") == "initialize":
                    answer = {"services": [{"name": "pm", "summary": "s", "methods": [{"name": "addObserver", "args": [], "returns": "string"}]}]}
                    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}), flush=True)
            """#)
        let run = try await inHome(["-e", "task(function() print(pcall(function() return services.pm:addObserver({}) end)) end)"], sandbox)
        #expect((run.stdout + run.stderr).contains("method 'addObserver' of service 'pm' would hide the service object's own addObserver"), "\(run)")
        #expect(!run.stdout.contains("true"), "\(run)")
    }

    /// Under a hard open-file limit below 256 (a container's `nofile=128`), no process plugin
    /// could start ("setrlimit: Operation not permitted"); its limit is the lower one now.
    @Test func aProcessPluginStartsUnderAHardOpenFileLimitBelow256() async throws {
        let sandbox = try await processSandbox()
        var variables: [String: String?] = ["HOME": sandbox.path, "XDG_DATA_HOME": nil]
        variables["CRESCENT"] = CrescentProcess.binaryPath
        let run = try await crescent(["-c", "ulimit -n 128 && exec \"$CRESCENT\" \"$@\"", "sh", "-e",
                                      "task(function() print(services.pd:daemon('\(sandbox.path)\(dataFolder)/pd/n.pid')) end)"],
                                     executable: "/bin/sh", in: sandbox, environment: variables, timeLimit: 60)
        #expect(run.stdoutLines.contains("parent done\tnil"), "\(run)")
        if let pid = try await pid(at: sandbox.path + dataFolder + "/pd/n.pid") { _ = try await ends(pid) }
    }

    /// A FIFO put where a plugin's declarations are recorded held every start that read it; it
    /// is not read now (the plugin is asked again).
    @Test func aFIFOInPlaceOfTheDeclarationsRecordIsNotRead() async throws {
        let sandbox = try await processSandbox()
        let folder = sandbox.path + "/.local/share/crescent/plugin-declarations"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(mkfifo(folder + "/pd.json", 0o600) == 0)
        let run = try await inHome(["services", "pd"], sandbox, timeLimit: 30)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("daemon"), "\(run)")
    }

    /// `plugins install` of a FIFO named like an archive waited for ever.
    @Test func installingAFIFONamedLikeAnArchiveIsRefused() async throws {
        let sandbox = try Sandbox()
        #expect(mkfifo(sandbox.path + "/ff.tar.gz", 0o600) == 0)
        let run = try await inHome(["plugins", "install", "ff.tar.gz"], sandbox, timeLimit: 30)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("ff.tar.gz: not a regular file (a FIFO, a device or a socket)"), "\(run)")
    }

    /// A broken grants file made runs and `crescent plugins` say only "not granted ... run
    /// crescent plugins allow NAME", which then refused the broken file; both name it now.
    @Test func aBrokenGrantsFileIsNamedByTheRunAndTheList() async throws {
        let sandbox = try await processSandbox()
        let grants = sandbox.path + "/.local/share/crescent/plugin-grants.toml"
        let handle = try #require(FileHandle(forWritingAtPath: grants))
        handle.seekToEndOfFile()
        handle.write(Data("this is = = broken\n".utf8))
        try handle.close()
        let run = try await inHome(["-e", "task(function() print(services.pd:daemon('x')) end)"], sandbox)
        #expect((run.stdout + run.stderr).contains("the grants file cannot be read: \(grants)"), "\(run)")
        let list = try await inHome(["plugins"], sandbox)
        #expect(list.stdout.contains("the grants file cannot be read, so no grant in it holds: \(grants)"), "\(list)")
    }

    /// `plugins install` of a git URL whose server accepts and never answers waited without
    /// bound; git gives up now after 20 s without data, and the message names the URL.
    @Test func installFromAGitServerThatNeverAnswersEnds() async throws {
        let sandbox = try Sandbox()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        #expect(bound == 0 && listen(listener, 8) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        let port = UInt16(bigEndian: address.sin_port)
        // The kernel completes the connections in the backlog; nobody ever reads or writes them.
        let url = "http://127.0.0.1:\(port)/repo.git"
        let run = try await inHome(["plugins", "install", url], sandbox, timeLimit: 90)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("cloning \(url) failed"), "\(run)")
    }

    /// The grants file's refusals said "the plugin's plugin grants".
    @Test func aGrantsFileThatIsAFIFOIsNamedAsTheGrantsFile() async throws {
        let sandbox = try await processSandbox()
        let grants = sandbox.path + "/.local/share/crescent/plugin-grants.toml"
        #expect(unlink(grants) == 0 && mkfifo(grants, 0o600) == 0)
        let allow = try await inHome(["plugins", "allow", "pd"], sandbox, timeLimit: 30)
        #expect(allow.stderr.contains("\(grants): cannot use it as the grants file: it is a FIFO, not a regular file"), "\(allow)")
    }
}
