import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Remote control, attacked again (issue 32, the last round's open findings): a hook function
/// that loops, a sent command that loops, a hook that outlives its client's request, and
/// `os.exit` from a client.
@Suite struct HardeningRemoteHookTests {
    private func groceriesHost() async throws -> ListeningHost {
        try await ListeningHost(script: RemoteControlTests.groceries, name: "groceries", options: ["--data-dir", "data"])
    }


    private static func message(_ answer: [String: Any]?) -> String? {
        (answer?["error"] as? [String: Any])?["message"] as? String
    }

    @Test func aHookFunctionThatLoopsIsInterrupted() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        let id = client.request("eval", ["code": "debug.sethook(function() while true do end end, 'l')\nlocal x = 1\nreturn x"])
        try await Task.sleep(nanoseconds: 300_000_000)
        client.request("interrupt")
        let answer = client.response(to: id, within: 20)
        #expect(Self.message(answer)?.hasPrefix("interrupted") == true, "\(String(describing: answer))")
        #expect(try host.answersEval() == 2, "\(host.process.stderr)")
        // And from a client that hangs up instead.
        let leaving = try host.client()
        _ = leaving.request("eval", ["code": "debug.sethook(function() while true do end end, 'l')\nlocal x = 1\nreturn x"])
        try await Task.sleep(nanoseconds: 300_000_000)
        shutdown(leaving.descriptor, Int32(SHUT_RDWR))
        #expect(try host.answersEval() == 2, "\(host.process.stderr)")
        let ended = await host.stop()
        #expect(ended.status == 143, "\(ended)")
    }

    @Test func aClientsHookDoesNotOutliveItsRequest() async throws {
        let host = try await groceriesHost()
        let first = try host.client()
        // The eval's task coroutine gets a hook; the next eval (another client's) may run on the
        // same coroutine once it is free.
        let set = first.call("eval", ["code": "hookCalls = 0 debug.sethook(function() hookCalls = hookCalls + 1 end, 'l') return 'set'"])
        #expect((set?["result"] as? [String: Any])?["value"] as? String == "set", "\(String(describing: set))")
        let second = try host.client()
        for _ in 0..<3 { _ = second.call("eval", ["code": "local a = 1\nlocal b = 2\nreturn a + b"]) }
        let count = second.call("eval", ["code": "return hookCalls"])
        #expect((count?["result"] as? [String: Any])?["value"] as? Int == 0, "\(String(describing: count))")
        let hook = second.call("eval", ["code": "return debug.gethook() == nil"])
        #expect((hook?["result"] as? [String: Any])?["value"] as? Bool == true, "\(String(describing: hook))")
        _ = await host.stop()
    }

    @Test func osExitFromAClientIsRefusedAndAppExitSaysWhoEndedTheHost() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        let refused = client.call("eval", ["code": "os.exit(0)"])
        #expect(Self.message(refused)?.contains("os.exit is refused for remote code") == true, "\(String(describing: refused))")
        #expect(Self.message(refused)?.contains("app.exit(0)") == true, "\(String(describing: refused))")
        #expect(try host.answersEval() == 2, "\(host.process.stderr)")
        // The host may be gone before it answers: what counts is how it ended and what it logged.
        _ = client.call("eval", ["code": "app.exit(3)"], within: 20)
        let ended = await host.stop()
        #expect(ended.status == 3, "\(ended)")
        #expect(ended.stderr.contains("remote client") && ended.stderr.contains("called app.exit(3): the host exits"), "\(ended)")
    }

    static let spinner = """
        local Shop = controller("Shop")
        function Shop:viewDidLoad()
          self:command("spin", "spin")
          self:command("ok", "ok")
        end
        function Shop:spin() while true do end end
        function Shop:ok(what) print("ok " .. tostring(what)) end
        app.push(Shop)
        """

    @Test func aSentCommandThatLoopsIsStoppedByInterruptOrHangUp() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("shop.lua", Self.spinner)
        let host = try await ListeningHost(script: "shop.lua", name: "shop", sandbox: sandbox)
        let client = try host.client()
        let id = client.request("send", ["command": "spin"])
        try await Task.sleep(nanoseconds: 300_000_000)
        client.request("interrupt")
        let answer = client.response(to: id, within: 20)
        #expect(Self.message(answer)?.contains("interrupted") == true, "\(String(describing: answer))")
        #expect(try host.answersEval() == 2, "\(host.process.stderr)")
        // Commands run again after one was stopped.
        let ok = try await host.crescentCommand(["send", "shop", "ok", "milk"])
        #expect(ok.status == 0, "\(ok)")
        #expect(await host.process.waitForOutput("ok milk", within: 20), "\(host.process.stdout)")
        // A client that hangs up while its command loops.
        let leaving = try host.client()
        _ = leaving.request("send", ["command": "spin"])
        try await Task.sleep(nanoseconds: 300_000_000)
        shutdown(leaving.descriptor, Int32(SHUT_RDWR))
        #expect(try host.answersEval() == 2, "\(host.process.stderr)")
        let again = try await host.crescentCommand(["send", "shop", "ok", "eggs"])
        #expect(again.status == 0, "\(again)")
        #expect(await host.process.waitForOutput("ok eggs", within: 20), "\(host.process.stdout)")
        let ended = await host.stop()
        #expect(ended.status == 143, "\(ended)")
    }
}
