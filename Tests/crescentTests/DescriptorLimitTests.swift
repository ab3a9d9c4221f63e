import Foundation
import HTTPTestServer
import Testing

/// A script that keeps every file it opens cannot take the descriptors the host's own libraries
/// need: under `prlimit --nofile=64` its opens are refused, naming the call, the reserve and the
/// fix, while the store, http and the session go on working with its files still open. Before,
/// the script took them all: the services' first calls failed with EMFILE, and libdispatch's
/// worker monitor, which opens /proc/<tid>/stat every second, could stop the process by SIGILL.
@Suite struct DescriptorLimitTests {
    static let script = #"""
        local base, files, refusal, code = app.args[1], {}, nil, nil
        for _ = 1, 100 do
          local file, message, errno = io.open("script.lua")
          if not file then refusal, code = message, errno break end
          files[#files + 1] = file
        end
        print("refused", #files > 0, code, refusal and refusal:find(
          'io.open("script.lua"): too many open files (EMFILE): the last 32 of the 64 descriptors', 1, true) ~= nil)
        print("popen", select(2, io.popen("true")):find('^io.popen%("true"%): too many open files') ~= nil)
        print("tmpfile", select(2, io.tmpfile()):find("^io.tmpfile: too many open files") ~= nil)
        print("lines", select(2, pcall(io.lines, "script.lua")):find('^io.lines%("script.lua"%): too many open files') ~= nil)
        print("input", (pcall(io.input, "script.lua")), io.input() == io.stdin)
        services.session:register("ann", "correct horse", function(name, registerErr)
          print("register", name, registerErr)
          services.http:get(base .. "/", function(response, err)
            print("http", response and response.status, err)
            files[#files]:close()
            files[#files] = nil
            print("one closed", io.type(io.open("script.lua")))
            for _, file in ipairs(files) do file:close() end
          end)
        end)
        """#

    @Test func aScriptCannotTakeTheDescriptorsTheServicesNeed() async throws {
        let server = try await HTTPTestServer.start { _ in .respond(status: 200, body: Array("ok".utf8)) }
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", Self.script)
        let unset: String? = nil
        let result = try await crescent(
            ["--nofile=64", CrescentProcess.binaryPath, "--data-dir", "data", "script.lua", server.baseURL], executable: "/usr/bin/prlimit",
            in: sandbox, environment: ["http_proxy": unset, "HTTP_PROXY": unset])
        await server.stop()
        #expect(!result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["refused\ttrue\t24\ttrue", "popen\ttrue", "tmpfile\ttrue", "lines\ttrue", "input\tfalse\ttrue",
                                       "register\tann\tnil", "http\t200\tnil", "one closed\tfile"], "\(result)")
    }

    /// A Lua plugin's files are the host's descriptors too: it meets the same reserve, and the
    /// script calling it still opens its store.
    @Test func aLuaPluginCannotTakeThemEither() async throws {
        let sandbox = try luaPluginSandbox("fd", main: """
            local fd = service("fd", "Files.")
            fd:method("go", {"path: string"}, "value", "Keeps files.", function(path)
              KEPT = KEPT or {}
              while true do
                local file, message, code = io.open(path)
                if not file then return #KEPT > 0 and code .. " " .. message end
                KEPT[#KEPT + 1] = file
              end
            end)
            fd:method("free", {}, "value", "Closes them.", function()
              for _, file in ipairs(KEPT) do file:close() end
              return #KEPT
            end)
            """)
        try sandbox.write("script.lua", """
            task(function()
              print(services.fd:go("\(sandbox.path)/plugins/fd/main.lua"))
              print("register", services.session:register("ann", "correct horse"))
              print("freed", services.fd:free() > 0)
            end)
            """)
        let unset: String? = nil
        let result = try await crescent(
            ["--nofile=80", CrescentProcess.binaryPath, "--data-dir", "data", "script.lua"], executable: "/usr/bin/prlimit",
            in: sandbox, environment: ["HOME": sandbox.path, "XDG_DATA_HOME": unset], timeLimit: 30)
        #expect(!result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        let refusal = "24 io.open(\"\(sandbox.path)/plugins/fd/main.lua\"): too many open files (EMFILE): the last 32 of the 80 descriptors"
        #expect(result.stdoutLines.first?.hasPrefix(refusal) == true, "\(result)")
        #expect(Array(result.stdoutLines.dropFirst()) == ["register\tann\tnil", "freed\ttrue"], "\(result)")
    }

    /// Remote clients are the host's descriptors too (two each): past the reserve a client is
    /// told why it is not served and disconnected, and the host serves again once they leave.
    /// Before, the host accepted until EMFILE and the later clients waited, unanswered.
    @Test func remoteClientsPastTheReserveAreToldAndTheHostGoesOn() async throws {
        let host = try await ListeningHost(script: RemoteControlTests.groceries, name: "full", options: ["--data-dir", "data"])
        let limited = try await crescent(["--pid", "\(host.pid)", "--nofile=100"], executable: "/usr/bin/prlimit", in: host.sandbox)
        #expect(limited.status == 0, "\(limited)")
        var clients: [RemoteTestClient] = []
        var reason: String?
        for _ in 0..<40 where reason == nil {
            let client = try host.client()
            clients.append(client)
            let id = client.request("eval", ["code": "return 1"])
            var served = false
            let deadline = Date().addingTimeInterval(10)
            while !served && reason == nil, let message = client.next(until: deadline) {
                served = message["id"] as? Int == id
                if message["method"] as? String == "disconnect" { reason = (message["params"] as? [String: Any])?["reason"] as? String }
            }
            if !served && reason == nil { break }
        }
        #expect(clients.count > 5, "\(clients.count) clients")
        #expect(reason?.hasPrefix("the host has too many clients and open files (the last 16 of its 100 descriptors") == true,
                "\(String(describing: reason)) after \(clients.count) clients: \(host.process.stderr)")
        clients.removeAll()
        // The host sees the clients leave on its loop, a moment after they close.
        var answer: Int?
        for _ in 0..<100 where answer == nil {
            answer = try host.answersEval(within: 5)
            if answer == nil { try await Task.sleep(nanoseconds: 100_000_000) }
        }
        #expect(answer == 2, "\(host.process.stderr)")
        let ended = await host.stop()
        #expect(ended.status == 143 && !ended.killedBySignal, "\(ended)")
    }

    /// Remote clients may use the first half of the reserve: a script (here a remote `eval`)
    /// holding all it may is still reached by the next `eval`, which closes its files. Before,
    /// every later client was refused and only killing the host helped.
    @Test func aScriptHoldingAllItMayCanStillBeReached() async throws {
        let host = try await ListeningHost(script: RemoteControlTests.groceries, name: "held", options: ["--data-dir", "data"])
        let limited = try await crescent(["--pid", "\(host.pid)", "--nofile=100"], executable: "/usr/bin/prlimit", in: host.sandbox)
        #expect(limited.status == 0, "\(limited)")
        let held = try await host.crescentCommand(["eval", "held",
            "F = {} for i = 1, 1000 do local f = io.open('/etc/hostname') if not f then break end F[#F + 1] = f end return #F > 0"])
        #expect(held.status == 0 && held.stdout == "true\n", "\(held)")
        let again = try await host.crescentCommand(["eval", "held", "local n = #F for _, f in ipairs(F) do f:close() end return n > 0"])
        #expect(again.status == 0 && again.stdout == "true\n", "\(again)")
        let ended = await host.stop()
        #expect(ended.status == 143 && !ended.killedBySignal, "\(ended)")
    }

    /// Under a limit that leaves scripts almost nothing, the refusal says to raise the limit
    /// instead of "the last 32 of the 40 descriptors" and advice to close files that cannot help.
    @Test func aLimitTooSmallForScriptsSaysToRaiseIt() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", "print((select(2, io.open('script.lua'))))")
        let result = try await crescent(["--nofile=40", CrescentProcess.binaryPath, "script.lua"], executable: "/usr/bin/prlimit", in: sandbox)
        #expect(result.status == 0 && !result.killedBySignal, "\(result)")
        #expect(result.stdout == "io.open(\"script.lua\"): too many open files (EMFILE): the open-file limit of 40 (ulimit -n) leaves "
                + "scripts almost nothing beside the 32 descriptors crescent keeps for itself; raise it (ulimit -n 1024)\n", "\(result)")
    }

    /// The programs a script starts and the folders it watches take descriptors of the host's
    /// too (pipes, a pidfd, an inotify instance): past the reserve `spawn` and `watch` fail with
    /// `io` naming it, and the store still opens while they run.
    @Test func programsAndWatchersMeetTheReserveToo() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.makeFolder("w")
        try sandbox.write("script.lua", #"""
            local children, refusal = {}, nil
            for _ = 1, 100 do
              local ok, child = pcall(services.process.spawn, services.process, {"sleep", "30"})
              if not ok then refusal = child.message break end
              children[#children + 1] = child
            end
            print("spawn", #children > 0, refusal and refusal:find(
              "cannot start 'sleep': too many open files (EMFILE): the last 32 of the 64 descriptors", 1, true) ~= nil)
            local watched, problem = 0, nil
            for _ = 1, 100 do
              local ok, watcher = pcall(services.files.watch, services.files, "w")
              if not ok then problem = watcher.message break end
              watched = watched + 1
            end
            print("watch", problem and problem:find("cannot watch 'w': too many inotify instances or open files", 1, true) ~= nil)
            services.session:register("ann", "correct horse", function(name, err)
              print("register", name, err)
              for _, child in ipairs(children) do child:kill("SIGKILL") end
              app.exit(0)
            end)
            """#)
        let result = try await crescent(["--nofile=64", CrescentProcess.binaryPath, "--data-dir", "data", "script.lua"],
                                        executable: "/usr/bin/prlimit", in: sandbox, timeLimit: 30)
        #expect(!result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        #expect(result.stdoutLines == ["spawn\ttrue\ttrue", "watch\ttrue", "register\tann\tnil"], "\(result)")
    }
}
