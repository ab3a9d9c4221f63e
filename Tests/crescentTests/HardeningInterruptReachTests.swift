import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every Lua thread can be interrupted (issue 32, closing attack D1): code that loops in fresh
/// coroutines, in an `xpcall` message handler or in a `__gc` finalizer is stopped by a client's
/// `interrupt`, by its hanging up, and by `--timeout`, and the host answers the next client.
@Suite struct HardeningInterruptReachTests {
    /// The loops that held the host for good, by what they are.
    static let loops: [(String, String)] = [
        ("a fresh coroutine each turn", "while true do coroutine.resume(coroutine.create(function() while true do end end)) end"),
        ("a fresh coroutine under pcall", "while true do pcall(coroutine.resume, coroutine.create(function() while true do end end)) end"),
        ("a coroutine that catches and yields",
         "local co = coroutine.create(function() while true do pcall(coroutine.yield) end end) while true do pcall(coroutine.resume, co) end"),
        ("an xpcall message handler", "xpcall(function() error('x') end, function() while true do end end)"),
        ("a handler that loops again", "while true do xpcall(function() error('x') end, function() while true do end end) end"),
        ("a finalizer", "setmetatable({}, {__gc = function() while true do end end}) collectgarbage() while true do end"),
        ("a finalizer run by the collector", "setmetatable({}, {__gc = function() while true do end end}) while true do local t = {} end"),
    ]

    private static func message(_ answer: [String: Any]?) -> String? {
        (answer?["error"] as? [String: Any])?["message"] as? String
    }

    private func host() async throws -> ListeningHost {
        try await ListeningHost(script: RemoteControlTests.groceries, name: "reach", options: ["--data-dir", ":memory:"])
    }

    @Test func aClientsInterruptStopsEveryKindOfLoop() async throws {
        let host = try await host()
        for (what, code) in Self.loops {
            let client = try host.client()
            let id = client.request("eval", ["code": code])
            try await Task.sleep(nanoseconds: 300_000_000)
            client.request("interrupt")
            let answer = client.response(to: id, within: 20)
            #expect(Self.message(answer)?.hasPrefix("interrupted") == true, "\(what): \(String(describing: answer))")
            #expect(try host.answersEval() == 2, "\(what): \(host.process.stderr)")
        }
        let ended = await host.stop()
        #expect(ended.status == 143, "\(ended)")
    }

    @Test func aClientThatHangsUpStopsEveryKindOfLoop() async throws {
        let host = try await host()
        for (what, code) in Self.loops {
            let leaving = try host.client()
            _ = leaving.request("eval", ["code": code])
            try await Task.sleep(nanoseconds: 300_000_000)
            shutdown(leaving.descriptor, Int32(SHUT_RDWR))
            #expect(try host.answersEval() == 2, "\(what): \(host.process.stderr)")
        }
        // The interrupt does not outlive the request: a handler and a finalizer run normally after.
        let client = try host.client()
        let after = client.call("eval", ["code": """
            local ok, message = xpcall(function() error('boom', 0) end, function(m) return 'handled ' .. m end)
            local finalized = false
            setmetatable({}, {__gc = function() finalized = true end}) collectgarbage() collectgarbage()
            return message .. ' ' .. tostring(finalized)
            """])
        #expect((after?["result"] as? [String: Any])?["value"] as? String == "handled boom true", "\(String(describing: after))")
        let ended = await host.stop()
        #expect(ended.status == 143, "\(ended)")
    }

    /// Locally the time limit reaches them too, as the interrupt it is, rather than the forced
    /// exit 2 s later ("the script did not stop within 2 s").
    @Test func theTimeLimitStopsEveryKindOfLoop() async throws {
        for (what, code) in Self.loops {
            let result = try await crescent(["--timeout", "1", "--data-dir", ":memory:", "-e", code], timeLimit: 30)
            #expect(result.status == 1, "\(what): \(result)")
            // "stopped after 1 s (--timeout): interrupted: time limit reached", not the forced
            // exit's "exiting with status 1: the script did not stop within 2 s".
            #expect(result.stderr.contains("(--timeout): interrupted: time limit reached"), "\(what): \(result)")
            #expect(!result.stderr.contains("did not stop"), "\(what): \(result)")
        }
    }

    /// A script's own hooks still do not run inside a finalizer, as under lua5.4, and errors of
    /// a handler or a finalizer read as Lua's.
    @Test func handlersAndFinalizersBehaveAsUnderLua() async throws {
        let result = try await crescent(["--data-dir", ":memory:", "-e", """
            local calls = 0
            local mt = {__gc = function() local a = 1 local b = 2 end}
            setmetatable({}, mt)
            debug.sethook(function() calls = calls + 1 end, "l")
            collectgarbage() collectgarbage()
            debug.sethook()
            print("hook lines in the finalizer", calls <= 2)
            print(xpcall(function() error("x") end, function() error("again") end))
            print(xpcall(function() error("x", 0) end, debug.traceback) == false)
            print(pcall(setmetatable, setmetatable({}, {__metatable = 1}), {}))
            local co = coroutine.wrap(function() local ok, m = xpcall(function() coroutine.yield(1) error("late", 0) end, function(m) return "h:" .. m end) return m end)
            print(co(), co())
            """], timeLimit: 30)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "hook lines in the finalizer\ttrue",
            "false\terror in error handling",
            "true",
            "false\tcannot change a protected metatable",
            "1\th:late",
        ], "\(result)")
    }
}
