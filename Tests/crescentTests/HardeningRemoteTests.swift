import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Remote control attacked as a user would: clients that hang up mid-chunk, code that loops
/// where the host did not expect it, hooks that try to shed an interrupt, commands that go
/// nowhere, clients that never read or read slowly, and a file where the socket should be.
extension ListeningHost {
    /// The value of `1 + 1` from a fresh client within `seconds`: the host serves clients again.
    func answersEval(within seconds: Double = 20) throws -> Int? {
        let probe = try client()
        let answer = probe.call("eval", ["code": "return 1 + 1"], within: seconds)
        return (answer?["result"] as? [String: Any])?["value"] as? Int
    }
}

@Suite struct HardeningRemoteTests {
    private func groceriesHost(name: String = "groceries") async throws -> ListeningHost {
        try await ListeningHost(script: RemoteControlTests.groceries, name: name, options: ["--data-dir", "data"])
    }


    @Test func aClientThatHangsUpMidLoopEndsItsChunk() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        _ = client.request("eval", ["code": "while true do end"])
        try await Task.sleep(nanoseconds: 300_000_000)
        // The client goes away without a word (as a killed process's socket does).
        shutdown(client.descriptor, Int32(SHUT_RDWR))
        #expect(try host.answersEval() == 2, "\(host.process.stderr)")
        let ended = await host.stop()
        #expect(ended.status == 143, "\(ended)")
    }

    @Test func observesExpressionIsInterruptedLikeAnEval() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        let id = client.request("observe", ["service": "(function() while true do end end)()", "key": "count"])
        try await Task.sleep(nanoseconds: 300_000_000)
        client.request("interrupt")
        let answer = client.response(to: id, within: 20)
        let error = answer?["error"] as? [String: Any]
        #expect((error?["message"] as? String)?.contains("interrupted") == true, "\(String(describing: answer))")
        #expect(try host.answersEval() == 2)
        // The same from a client that hangs up instead.
        let leaving = try host.client()
        _ = leaving.request("observe", ["service": "(function() while true do end end)()", "key": "count"])
        try await Task.sleep(nanoseconds: 300_000_000)
        shutdown(leaving.descriptor, Int32(SHUT_RDWR))
        #expect(try host.answersEval() == 2)
        // And from a client whose interrupt arrives in the same read as the request.
        let hasty = try host.client()
        hasty.send(raw: #"{"jsonrpc":"2.0","id":1,"method":"observe","params":{"service":"(function() while true do end end)()","key":"count"}}"#
            + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"interrupt"}"# + "\n")
        let stopped = hasty.response(to: 1, within: 20)
        #expect(((stopped?["error"] as? [String: Any])?["message"] as? String)?.contains("interrupted") == true, "\(String(describing: stopped))")
        #expect(try host.answersEval() == 2)
        // And when an interrupt for nothing comes first in that read: it must not use up the
        // request meant for the eval after it.
        let eager = try host.client()
        eager.send(raw: #"{"jsonrpc":"2.0","id":2,"method":"interrupt"}"# + "\n"
            + #"{"jsonrpc":"2.0","id":1,"method":"eval","params":{"code":"while true do end"}}"# + "\n"
            + #"{"jsonrpc":"2.0","id":3,"method":"interrupt"}"# + "\n")
        let evalStopped = eager.response(to: 1, within: 20)
        // The interrupt that stopped it says so.
        let third = eager.response(to: 3, within: 20)
        #expect((third?["result"] as? [String: Any])?["interrupted"] as? Bool == true, "\(String(describing: third))")
        #expect(((evalStopped?["error"] as? [String: Any])?["message"] as? String)?.contains("interrupted") == true, "\(String(describing: evalStopped))")
        #expect(try host.answersEval() == 2)
        _ = await host.stop()
    }

    @Test func aScriptsOwnSethookCannotShedAnInterrupt() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        for code in ["while true do debug.sethook() end",
                     "while true do debug.sethook(function() end, '', 1000) end"] {
            let id = client.request("eval", ["code": code])
            try await Task.sleep(nanoseconds: 300_000_000)
            client.request("interrupt")
            let answer = client.response(to: id, within: 20)
            let message = (answer?["error"] as? [String: Any])?["message"] as? String
            #expect(message?.hasPrefix("interrupted") == true, "\(code): \(String(describing: answer))")
        }
        // The script's own hook is its own again afterwards.
        let after = client.call("eval", ["code": "debug.sethook(function() end, 'l') local h = debug.gethook() debug.sethook() return type(h)"])
        #expect((after?["result"] as? [String: Any])?["value"] as? String == "function", "\(String(describing: after))")
        _ = await host.stop()
    }

    @Test func aScriptsOwnSethookCannotShedTheTimeout() async throws {
        let result = try await runScript("""
            while true do debug.sethook() end
            """, options: ["--timeout", "0.5"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("--timeout"), "\(result)")
        // Stopped where it ran, not by the forced exit of a script that would not stop.
        #expect(result.stderr.contains("script.lua:1"), "\(result)")
        #expect(!result.stderr.contains("did not stop"), "\(result)")
    }

    static let commands = """
        local Shop = controller("Shop")
        function Shop:viewDidLoad()
          self:command("ok", "ok")
          self:command("boom", "boom")
        end
        function Shop:ok(what) print("ok " .. tostring(what)) end
        function Shop:boom() error("the boom command failed") end
        app.push(Shop)
        """

    @Test func sendReportsWhatTheCommandDid() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("shop.lua", Self.commands)
        let host = try await ListeningHost(script: "shop.lua", name: "shop", sandbox: sandbox)
        let ok = try await host.crescentCommand(["send", "shop", "ok", "milk"])
        #expect(ok.status == 0, "\(ok)")
        #expect(await host.process.waitForOutput("ok milk", within: 20), "\(host.process.stdout)")
        let unknown = try await host.crescentCommand(["send", "shop", "nosuch"])
        #expect(unknown.status == 1, "\(unknown)")
        #expect(unknown.stderr.contains("unknown command 'nosuch'"), "\(unknown)")
        #expect(!unknown.stdout.contains("sent"), "\(unknown)")
        let raised = try await host.crescentCommand(["send", "shop", "boom"])
        #expect(raised.status == 1, "\(raised)")
        #expect(raised.stderr.contains("the boom command failed"), "\(raised)")
        _ = await host.stop()

        try sandbox.write("idle.lua", "timer.every(60, function() end)")
        let idle = try await ListeningHost(script: "idle.lua", name: "idle", sandbox: sandbox)
        let nowhere = try await idle.crescentCommand(["send", "idle", "ok"])
        #expect(nowhere.status == 1, "\(nowhere)")
        #expect(nowhere.stderr.contains("no controller"), "\(nowhere)")
        _ = await idle.stop()
    }

    /// A client that sends evals with large answers and never reads is disconnected once the
    /// answers waiting for it pass a bound in bytes, long before their count would.
    @Test func aClientThatNeverReadsLargeAnswersIsDisconnected() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        for _ in 1...40 { _ = client.request("eval", ["code": "return string.rep('x', 3000000)"]) }
        #expect(await host.process.waitForOutput("MiB", onStderr: true, within: 60), "\(host.process.stderr)")
        #expect(host.process.stderr.contains("did not read"), "\(host.process.stderr)")
        #expect(client.waitClosed(within: 30))
        #expect(try host.answersEval() == 2)
        _ = await host.stop()
    }

    /// Output a chunk makes while it holds the loop reaches a client that reads, however much.
    @Test func evalOfAChunkThatPrintsManyLinesSucceeds() async throws {
        let host = try await groceriesHost()
        let printed = try await host.crescentCommand(["eval", "groceries", "for i = 1, 20000 do print('line ' .. i) end return 'end'"])
        #expect(printed.status == 0, "\(printed.status) \(printed.stderr)")
        let lines = printed.stdoutLines
        #expect(lines.count == 20001 && lines.first == "line 1" && lines.dropLast().last == "line 20000" && lines.last == "\"end\"",
                "\(lines.count) lines, ending \(lines.suffix(2))")
        _ = await host.stop()
    }

    @Test func listenNeverReplacesWhatIsNotASocket() async throws {
        let sandbox = try Sandbox()
        let runtime = try sandbox.makeFolder("run")
        let folder = runtime + "/crescent"
        #expect(mkdir(folder, 0o700) == 0)
        let path = folder + "/precious.sock"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: path))
        try sandbox.write("script.lua", "print('started')")
        let result = try await crescent(["--listen=precious", "script.lua"], in: sandbox, environment: ["XDG_RUNTIME_DIR": runtime])
        // As for a name a live host holds: remote control cannot start (usage status 2).
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains(path) && result.stderr.contains("not a socket"), "\(result)")
        #expect(!result.stdout.contains("started"), "\(result)")
        #expect((try? String(contentsOfFile: path, encoding: .utf8)) == "keep me")
    }
}
