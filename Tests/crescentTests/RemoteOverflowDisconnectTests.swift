import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A client disconnected because too much waited for it (issue 32, closing attack D2, D3, D10):
/// its running code stops as on hang-up, it gets a last `disconnect { reason }` line and the
/// socket closes; and `complete` of a very long line answers at once.
@Suite struct RemoteOverflowDisconnectTests {
    private func host() async throws -> ListeningHost {
        try await ListeningHost(script: RemoteControlTests.groceries, name: "flood", options: ["--data-dir", ":memory:"])
    }

    /// Reads `client` to its end: the `disconnect` notification's reason, and whether the
    /// stream then ended. Every line must be whole JSON (the client reports a cut one).
    private static func readToEnd(_ client: RemoteTestClient, within seconds: Double) -> (reason: String?, lines: Int, ended: Bool) {
        let deadline = Date().addingTimeInterval(seconds)
        var reason: String?
        var lines = 0
        while let message = client.next(until: deadline) {
            lines += 1
            if message["method"] as? String == "disconnect" {
                reason = (message["params"] as? [String: Any])?["reason"] as? String
            }
        }
        return (reason, lines, Date() < deadline)
    }

    @Test func anEvalWhoseOutputOverflowsIsStoppedAndTheClientIsToldAndClosed() async throws {
        let host = try await host()
        let client = try host.client()
        // 70 MiB of output (past the 64 MiB bound) while the chunk holds the loop, then a loop.
        _ = client.request("eval", ["code": """
            local s = string.rep('x', 1000000)
            for i = 1, 70 do print(s) end
            G_after = 0
            while true do G_after = G_after + 1 end
            """])
        // The client stays connected without reading: the host must not wait for it.
        #expect(await host.process.waitForOutput("disconnected", onStderr: true, within: 60), "\(host.process.stderr)")
        #expect(try host.answersEval() == 2, "\(host.process.stderr)")
        let probe = try host.client()
        let after = probe.call("eval", ["code": "return G_after == nil"])
        #expect((after?["result"] as? [String: Any])?["value"] as? Bool == true, "\(String(describing: after))")
        let read = Self.readToEnd(client, within: 20)
        #expect(read.reason?.contains("did not read") == true, "\(read)")
        #expect(read.ended, "\(read)")
        // Its 70 MiB take a debug build a while on a loaded machine: more than ListeningHost.stop's
        // 30 s from the start.
        host.process.send(SIGTERM, expecting: .handled)
        let ended = await host.process.finish(timeLimit: 90)
        #expect(ended.status == 143, "\(ended)")
    }

    @Test func aClientThatStopsReadingEventsGetsTheDisconnectLineBeforeTheClose() async throws {
        let host = try await host()
        let stalled = try host.client()
        let subscribed = stalled.call("on", ["event": "my.ev"])
        #expect(subscribed?["result"] != nil, "\(String(describing: subscribed))")
        let poster = try host.client()
        let posted = poster.call("eval", ["code": "for i = 1, 5000 do post('my.ev', { i = i, pad = string.rep('y', 1000) }) end return 'posted'"],
                                 within: 60)
        #expect((posted?["result"] as? [String: Any])?["value"] as? String == "posted", "\(String(describing: posted))")
        #expect(await host.process.waitForOutput("disconnected", onStderr: true, within: 30), "\(host.process.stderr)")
        try await Task.sleep(nanoseconds: 500_000_000)
        // It reads again (within the grace the host gives the line): what had been written, then
        // the reason, then the end.
        let read = Self.readToEnd(stalled, within: 20)
        #expect(read.reason?.contains("did not read") == true && read.reason?.contains("1000") == true, "\(read)")
        #expect(read.ended, "\(read)")
        #expect(try host.answersEval() == 2, "\(host.process.stderr)")
        _ = await host.stop()
    }

    @Test func completeOfAVeryLongLineAnswersAtOnceOrIsRefused() async throws {
        let host = try await host()
        let client = try host.client()
        for (word, count) in [("x", 10000), ("services.", 2000), ("a.", 4000), ("string.rep(\"", 3000)] {
            let line = String(repeating: word, count: count)
            let started = Date()
            let answer = client.call("complete", ["line": line], within: 30)
            let seconds = Date().timeIntervalSince(started)
            #expect(answer?["result"] != nil, "\(word) × \(count): \(String(describing: answer))")
            #expect(seconds < 2, "\(word) × \(count): \(seconds) s")
        }
        // What a long line still completes: the end of it.
        let tail = client.call("complete", ["line": String(repeating: " ", count: 5000) + "services.sto"])
        #expect(((tail?["result"] as? [String: Any])?["items"] as? [String])?.contains("services.store") == true
                || ((tail?["result"] as? [String: Any])?["items"] as? [String])?.contains("store") == true, "\(String(describing: tail))")
        let huge = client.call("complete", ["line": String(repeating: "services.", count: 100000)], within: 30)
        let message = (huge?["error"] as? [String: Any])?["message"] as? String
        #expect(message?.contains("complete: line must be at most 65536 bytes") == true, "\(String(describing: huge))")
        #expect(try host.answersEval() == 2, "\(host.process.stderr)")
        _ = await host.stop()
    }
}
