import FeedTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The feeds service through the real binary: the two shipped scripts and the two styles of
/// notification, against feeds a loopback server serves.
@Suite struct FeedScriptTests {
    static let scripts = ControllerScriptTests.scripts

    /// A config file that lets feeds be polled every 0.1 s.
    static func quickConfig(in sandbox: Sandbox) throws -> String {
        try sandbox.write("crescent.toml", "[feeds]\nmin_interval = 0.1\n")
    }

    /// The line watch-feeds.lua prints for sample item `n` of `server`'s feed titled `feed`.
    static func line(_ number: Int, feed: String = "Sample news", server: FeedTestServer) -> String {
        let hour = 12 + number
        return "2024-06-15T\(hour):00:00Z\t\(feed)\tItem \(number) & more\t\(server.url("/posts/\(number)"))"
    }

    @Test func watchFeedsPrintsEachNewItemOnceAcrossPollsAndRuns() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/feed", .sequence([.document(.init(body: FeedSamples.rss(items: FeedSamples.items(1...2)))),
                                         .document(.init(body: FeedSamples.rss(items: FeedSamples.items(1...3))))]))
        let sandbox = try Sandbox()
        let config = try Self.quickConfig(in: sandbox)
        let data = try sandbox.makeFolder("data")
        let watcher = CrescentProcess(["--keep-running", "--config", config, "--data-dir", data, "--ui", "plain", "\(Self.scripts)/watch-feeds.lua",
                                       "--interval", "0.2", server.url("/feed")], directory: sandbox.path)
        try watcher.start()
        #expect(await watcher.waitForOutput("Item 3 & more"), "\(watcher.stdout)\n\(watcher.stderr)")
        // Let a few more polls find nothing new.
        let polls = server.requests(for: "/feed").count
        while server.requests(for: "/feed").count < polls + 3 { try await Task.sleep(for: .milliseconds(50)) }
        watcher.send(SIGTERM, expecting: .handled)
        let first = await watcher.finish()
        #expect(first.status == 143, "\(first)")
        #expect(first.stdoutLines == [Self.line(1, server: server), Self.line(2, server: server), Self.line(3, server: server)], "\(first)")
        #expect(first.stderr.isEmpty, "\(first)")

        // Another run on the same data: only what it never saw.
        server.serve("/feed", .init(body: FeedSamples.rss(items: FeedSamples.items(1...4))))
        let second = try await crescent(["--config", config, "--data-dir", data, "\(Self.scripts)/watch-feeds.lua", "--once",
                                         server.url("/feed")], in: sandbox)
        #expect(second.status == 0, "\(second)")
        #expect(second.stdoutLines == [Self.line(4, server: server)], "\(second)")
    }

    @Test func watchFeedsReportsFailuresOnStderr() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/page", .init(body: "<!DOCTYPE html><html><body>not a feed</body></html>", contentType: "text/html"))
        let sandbox = try Sandbox()
        let result = try await crescent(["--data-dir", try sandbox.makeFolder("data"), "\(Self.scripts)/watch-feeds.lua", "--once",
                                         server.url("/page"), server.url("/missing")], in: sandbox)
        #expect(result.status == 1, "every feed failed: \(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderrLines.sorted() == [
            "watch-feeds.lua: HTTP 404 from \(server.url("/missing"))",
            "watch-feeds.lua: \(server.url("/page")): not RSS, Atom or JSON Feed: root element <html>",
        ], "\(result)")
        let usage = try await crescent(["\(Self.scripts)/watch-feeds.lua", "--once"], in: sandbox)
        #expect(usage.status == 2 && usage.stderr == "usage: watch-feeds.lua [--once] [--interval SECONDS] URL...\n", "\(usage)")
    }

    /// The feeds, then (`feed 1`) a feed's items, as piped commands reach them.
    @Test func newsShowsTheFeedsAFeedsItemsRefreshesAndOpens() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/news", .sequence([.document(.init(body: FeedSamples.rss(title: "Daily", items: FeedSamples.items(1...2)))),
                                         .document(.init(body: FeedSamples.rss(title: "Daily", items: FeedSamples.items(1...3))))]))
        let sandbox = try Sandbox()
        let result = try await crescent(["--data-dir", try sandbox.makeFolder("data"), "--ui", "plain", "\(Self.scripts)/news.lua",
                                         server.url("/news")], in: sandbox, stdin: "refresh\nfeed 1\nopen 1\nopen 7\nquit\n",
                                        environment: ["TZ": "UTC", "DISPLAY": nil, "WAYLAND_DISPLAY": nil])
        #expect(result.status == 0, "\(result)")
        let renders = result.stdout.components(separatedBy: "\n\n")
        #expect(renders.contains("""
              #  feed   items  state
              ─  ─────  ─────  ─────
            > 1  Daily      2  ok
            1 feed
            """), "\(result)")
        #expect(renders.contains("""
              #  feed   items  state
              ─  ─────  ─────  ─────
            > 1  Daily      3  ok
            1 feed
            """), "the refresh's new item is counted: \(result)")
        #expect(result.stdout.contains("""
              #  when              title
              ─  ────────────────  ─────────────
            > 1  2024-06-15 15:00  Item 3 & more
              2  2024-06-15 14:00  Item 2 & more
              3  2024-06-15 13:00  Item 1 & more
            3 items
            """), "feed 1 shows its items, newest first: \(result)")
        #expect(result.stdout.contains("1 new item\n"), "\(result)")
        #expect(result.stdout.contains("Item 3 & more\n\(server.url("/posts/3"))\n"), "open 1 shows the newest link: \(result)")
        #expect(result.stdout.contains("no item 7\n"), "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }

    /// The two styles side by side: `refresh`'s completion answers only the call that made it,
    /// while `didUpdate` reaches every observer (a handler, a named notification, a delegate).
    @Test func refreshAnswersItsCallerAloneWhileDidUpdateReachesEveryObserver() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/feed", .sequence([.document(.init(body: FeedSamples.rss(items: FeedSamples.items(1...2)))),
                                         .document(.init(body: FeedSamples.rss(items: FeedSamples.items(1...3))))]))
        let result = try await runScript("""
            local feeds, url = services.feeds, "\(server.url("/feed"))"
            feeds:on("didUpdate", function(update) print("handler: " .. #update.newItems) end)
            on("feeds.didUpdate", function(update) print("notification: " .. #update.newItems) end)
            feeds:addObserver({ didUpdate = function(self, update) print("delegate: " .. #update.newItems) end })
            task(function()
              print("added: " .. feeds:add(url).itemCount)
              feeds:refresh(url, function(items, err)
                print("caller A: " .. #items .. " " .. items[1].title)
                -- B asks after A's fetch: nothing is new for B, and A hears nothing of it.
                feeds:refresh(function(items, err) print("caller B: " .. #items) end)
              end)
            end)
            """, options: ["--data-dir", ":memory:"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.sorted() == [
            "added: 2", "caller A: 1 Item 3 & more", "caller B: 0",
            "delegate: 1", "delegate: 2", "handler: 1", "handler: 2", "notification: 1", "notification: 2",
        ], "\(result)")
        #expect(server.requests(for: "/feed").count == 3)
    }
}
