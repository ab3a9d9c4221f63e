import FeedTestSupport
import Foundation
import Model
@testable import Services
import Testing

/// The feeds service against feeds served on 127.0.0.1 by the test, over its real HTTP client
/// and a real SQLite file.
@Suite struct FeedServiceTests {
    /// The store, session and feeds services over the database in `folder`, polling as often
    /// as every 50 ms.
    static func makeFeeds(_ folder: TemporaryFolder, settings: Fields = [:],
                          clock: any ServiceClock = SystemClock.shared) throws -> (store: Store, feeds: FeedsService) {
        var section: Fields = ["min_interval": 0.05, "max_backoff": 1]
        section.merge(settings)
        var sections: Fields = ["feeds": .object(section)]
        // On a manual clock the only jobs are the feeds': no file, so no store poller.
        if clock is ManualClock { sections["store"] = ["path": ":memory:"] }
        let services = try Store.make(folder.context(sections, clock: clock))
        return (try #require(services[0] as? Store), try #require(services[2] as? FeedsService))
    }

    @Test func badSettingsAreRefusedWhenTheServicesAreMade() throws {
        let folder = try TemporaryFolder()
        let cases: [(Fields, String)] = [
            (["min_interval": "soon"], "[feeds] min_interval must be a number of seconds in [0.01, 86400]"),
            (["min_interval": 60, "interval": 30], "[feeds] interval must be a number of seconds in [60, 2592000]"),
            (["timeout": 0], "[feeds] timeout must be a number of seconds in [0.01, 3600]"),
            (["max_bytes": 1.5], "[feeds] max_bytes must be an integer in [1, 1073741824]"),
        ]
        for (section, message) in cases {
            #expect(throws: ServiceError(.invalidArgument, message)) { try Store.make(folder.context(["feeds": .object(section)])) }
        }
        let settings = try FeedSettings(["min_interval": 0.5, "interval": 2, "max_bytes": 4096])
        #expect(settings.minInterval == 0.5 && settings.interval == 2 && settings.maxBytes == 4096 && settings.timeout == nil)
    }

    @Test func rssAtomAndJSONFeedsAreAddedAnnouncedAndListed() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/rss", .init(body: FeedSamples.rss(title: "RSS news", items: FeedSamples.items(1...3))))
        server.serve("/atom", .init(body: FeedSamples.atom(title: "Atom news", items: FeedSamples.items(4...5)), contentType: "application/atom+xml"))
        server.serve("/json", .init(body: FeedSamples.json(title: "JSON news", items: FeedSamples.items(6...6)), contentType: "application/feed+json"))
        let folder = try TemporaryFolder()
        let (_, feeds) = try Self.makeFeeds(folder)
        let events = ModelEvents(feeds)

        let rss = try await feeds.add(server.url("/rss"), interval: nil)
        #expect(rss["title"] == "RSS news" && rss["itemCount"] == 3 && rss["interval"].doubleValue == 900 && rss["lastError"] == .null)
        #expect(try await feeds.add(server.url("/atom"), interval: 60)["title"] == "Atom news")
        #expect(try await feeds.add(server.url("/json"), interval: 60)["itemCount"] == 1)

        let updates = events.payloads("didUpdate")
        #expect(updates.map { $0["feed"]["title"] } == ["RSS news", "Atom news", "JSON news"])
        #expect(updates.map { $0["newItems"].arrayValue?.count } == [3, 2, 1])
        let first = try #require(updates.first?["newItems"].arrayValue?.first)
        #expect(first["id"] == "item-1" && first["title"] == "Item 1 & more" && first["feed"] == .string(server.url("/rss")))
        #expect(first["link"] == .string(server.url("/posts/1")), "relative links resolve against the feed's URL")
        #expect(first["published"] == .number(FeedSamples.date(of: 1)))

        #expect(feeds.feedList.value.arrayValue?.map { $0["url"] } == ["/rss", "/atom", "/json"].map { .string(server.url($0)) })
        let latest = try #require(feeds.latest.value.arrayValue)
        #expect(latest.map { $0["id"] } == (1...6).reversed().map { .string("item-\($0)") }, "newest first across feeds")
        #expect(events.payloads("didFail").isEmpty)
    }

    @Test func refreshAnswersTheNewItemsAndAnnouncesThemOnce() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/feed", .init(body: FeedSamples.rss(items: FeedSamples.items(1...2))))
        let folder = try TemporaryFolder()
        let (_, feeds) = try Self.makeFeeds(folder)
        let events = ModelEvents(feeds)
        _ = try await feeds.add(server.url("/feed"), interval: 60)
        #expect(try await feeds.refresh(nil).isEmpty, "nothing new")
        server.serve("/feed", .init(body: FeedSamples.rss(items: FeedSamples.items(1...4))))
        let fresh = try await feeds.refresh(server.url("/feed"))
        #expect(fresh.map(\.id) == ["item-4", "item-3"], "newest first")
        #expect(try await feeds.refresh(nil).isEmpty)
        #expect(events.payloads("didUpdate").map { $0["newItems"].arrayValue?.count } == [2, 2])
    }

    @Test func addingAgainTakesTheNewIntervalAndACancelledFetchIsNoFailure() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/feed", .init(body: FeedSamples.rss(items: FeedSamples.items(1...1))))
        server.serve("/quiet", .silence)
        let folder = try TemporaryFolder()
        let (_, feeds) = try Self.makeFeeds(folder)
        _ = try await feeds.add(server.url("/feed"), interval: 60)
        let again = try await feeds.add(server.url("/feed"), interval: 120)
        #expect(again["interval"].doubleValue == 120 && again["itemCount"] == 1)
        #expect(server.requests(for: "/feed").count == 2, "each add fetches")
        #expect(feeds.feedList.value.arrayValue?.count == 1)

        let events = ModelEvents(feeds)
        let adding = Task { try await feeds.add(server.url("/quiet"), interval: 60) }
        while server.requests(for: "/quiet").isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        adding.cancel()
        await #expect(throws: ServiceError.self) { try await adding.value }
        #expect(events.payloads("didFail").isEmpty, "a cancelled fetch did not fail")
    }

    @Test func newItemsAreAnnouncedOnceAcrossARestart() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/feed", .init(body: FeedSamples.rss(title: "Kept", items: FeedSamples.items(1...3))))
        let folder = try TemporaryFolder()
        do {
            let (store, feeds) = try Self.makeFeeds(folder)
            let events = ModelEvents(feeds)
            _ = try await feeds.add(server.url("/feed"), interval: 60)
            #expect(events.payloads("didUpdate").count == 1)
            store.close()
        }

        // A new process, as far as the database is concerned: same file, new services.
        server.serve("/feed", .init(body: FeedSamples.rss(title: "Kept", items: FeedSamples.items(1...4))))
        let (_, feeds) = try Self.makeFeeds(folder)
        let events = ModelEvents(feeds)
        feeds.loadIfNeeded()                 // what the first use from a script does
        let remembered = try #require(feeds.feedList.value.arrayValue)
        #expect(remembered.map { $0["title"] } == ["Kept"], "the subscription is remembered")
        #expect(feeds.latest.value.arrayValue?.count == 3, "so are the items")
        let fresh = try await feeds.refresh(server.url("/feed"))
        #expect(fresh.map(\.id) == ["item-4"], "only the item the first run never saw")
        _ = try await feeds.add(server.url("/feed"), interval: 60)
        let updates = events.payloads("didUpdate")
        #expect(updates.count == 1 && updates.first?["newItems"].arrayValue?.map { $0["id"] } == ["item-4"])
    }

    @Test func aNotModifiedAnswerProducesNoEvent() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/etag", .init(body: FeedSamples.rss(items: FeedSamples.items(1...2)), etag: "\"v1\""))
        server.serve("/date", .init(body: FeedSamples.rss(items: FeedSamples.items(1...2)), lastModified: "Sat, 15 Jun 2024 12:00:00 GMT"))
        let folder = try TemporaryFolder()
        let (_, feeds) = try Self.makeFeeds(folder)
        _ = try await feeds.add(server.url("/etag"), interval: 60)
        _ = try await feeds.add(server.url("/date"), interval: 60)
        let events = ModelEvents(feeds)
        #expect(try await feeds.refresh(nil).isEmpty)
        #expect(server.requests(for: "/etag").map(\.status) == [200, 304])
        #expect(server.requests(for: "/etag").last?.headers["if-none-match"] == "\"v1\"")
        #expect(server.requests(for: "/date").map(\.status) == [200, 304])
        #expect(server.requests(for: "/date").last?.headers["if-modified-since"] == "Sat, 15 Jun 2024 12:00:00 GMT")
        #expect(events.payloads("didUpdate").isEmpty && events.payloads("didFail").isEmpty)
        #expect(feeds.info(server.url("/etag"))?["lastError"] == .null)

        server.serve("/etag", .init(body: FeedSamples.rss(items: FeedSamples.items(1...3)), etag: "\"v2\""))
        #expect(try await feeds.refresh(server.url("/etag")).map(\.id) == ["item-3"])
        #expect(events.payloads("didUpdate").count == 1)
    }

    @Test func aMalformedFeedFailsWithInvalidDataAndPollingBacksOff() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/feed", .init(body: "<rss><channel><item><title>cut off</channel></rss>"))
        let folder = try TemporaryFolder()
        let clock = ManualClock()
        let (_, feeds) = try Self.makeFeeds(folder, settings: ["min_interval": 60, "max_backoff": 300], clock: clock)
        let events = ModelEvents(feeds)
        await #expect(throws: ServiceError.self) { try await feeds.add(server.url("/feed"), interval: 60) }
        let failure = try #require(events.payloads("didFail").first)
        #expect(failure["error"]["code"] == "invalid_data")
        #expect(failure["error"]["message"].stringValue?.hasPrefix("malformed XML at line 1") == true, "\(failure)")
        #expect(failure["feed"]["lastError"]["code"] == "invalid_data")

        // Polls go on, backing off: 60 × 2^failures, capped at max_backoff (300 s).
        for (failures, due) in zip(1...4, [120, 360, 660, 960].map { Duration.seconds($0) }) {
            #expect(await clock.waitForOnlyJob(due: due), "poll after \(failures) failures")
            clock.advance(by: due - clock.uptime)
            #expect(await events.wait { $0.payloads("didFail").count == failures + 1 }, "poll after \(failures) failures")
        }
        // Fixed: the next poll picks it up and the interval is back to 60 s.
        server.serve("/feed", .init(body: FeedSamples.rss(items: FeedSamples.items(1...1))))
        #expect(await clock.waitForOnlyJob(due: .seconds(1_260)))
        clock.advance(by: .seconds(300))
        #expect(await events.wait { !$0.payloads("didUpdate").isEmpty }, "polling continued")
        #expect(feeds.info(server.url("/feed"))?["lastError"] == .null)
        #expect(await clock.waitForOnlyJob(due: .seconds(1_320)))
        try feeds.remove(server.url("/feed"))
        #expect(await clock.advanceJobs { clock.pendingCount == 0 }, "remove stops the polls")
    }

    @Test func pollingHonoursTheInterval() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/feed", .init(body: FeedSamples.rss(items: FeedSamples.items(1...1)), etag: "\"same\""))
        let folder = try TemporaryFolder()
        let clock = ManualClock()
        let (_, feeds) = try Self.makeFeeds(folder, settings: ["min_interval": 60], clock: clock)
        _ = try await feeds.add(server.url("/feed"), interval: 600)
        #expect(server.requests(for: "/feed").count == 1, "add fetches once")
        // One fetch every 600 s of the clock, and none in between.
        for poll in 1...6 {
            #expect(await clock.waitForOnlyJob(due: clock.uptime + .seconds(600)), "poll \(poll) waits the interval")
            clock.advance(by: .seconds(599))
            #expect(server.requests(for: "/feed").count == poll, "not before the interval")
            clock.advance(by: .seconds(1))
            #expect(await eventually { server.requests(for: "/feed").count == poll + 1 }, "poll \(poll)")
        }
        #expect(clock.uptime == .seconds(3_600))
        try feeds.remove(server.url("/feed"))
        #expect(await clock.advanceJobs { clock.pendingCount == 0 })
        clock.advance(by: .seconds(3_600))
        #expect(server.requests(for: "/feed").count == 7, "remove stops the polls")
    }

    @Test func refusalsAndHTTPErrors() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/gone", .status(410))
        server.serve("/broken", .status(503))
        server.serve("/moved", .redirect(to: "/feed"))
        server.serve("/feed", .init(body: FeedSamples.rss(items: FeedSamples.items(1...1))))
        let folder = try TemporaryFolder()
        let (_, feeds) = try Self.makeFeeds(folder, settings: ["min_interval": 30])

        await #expect(throws: ServiceError(.invalidArgument, "url must be an absolute http or https URL such as https://example.org/feed.xml, got \"feed.xml\"")) {
            try await feeds.add("feed.xml", interval: nil)
        }
        await #expect(throws: ServiceError(.invalidArgument, "interval must be at least 30 seconds ([feeds] min_interval), got 5")) {
            try await feeds.add(server.url("/feed"), interval: 5)
        }
        await #expect(throws: ServiceError(.invalidArgument, "'http://127.0.0.1:70000/feed' has the port 70000, outside 1 to 65535")) {
            try await feeds.add("http://127.0.0.1:70000/feed", interval: nil)
        }
        #expect(feeds.feedList.value == .array([]), "nothing refused is subscribed")
        await #expect(throws: ServiceError(.notFound, "HTTP 410 from \(server.url("/gone"))", service: "feeds")) {
            try await feeds.add(server.url("/gone"), interval: 30)
        }
        await #expect(throws: ServiceError(.unavailable, "HTTP 503 from \(server.url("/broken"))", service: "feeds")) {
            try await feeds.add(server.url("/broken"), interval: 30)
        }
        #expect(try await feeds.add(server.url("/moved"), interval: 30)["itemCount"] == 1, "redirects are followed")
        #expect(feeds.feedList.value.arrayValue?.count == 3, "feeds that failed stay subscribed")

        #expect(throws: ServiceError(.notFound, "no feed http://nowhere.example/ is subscribed (add it first)")) {
            try feeds.remove("http://nowhere.example/")
        }
        await #expect(throws: ServiceError(.notFound, "no feed http://nowhere.example/ is subscribed (add it first)")) {
            try await feeds.refresh("http://nowhere.example/")
        }
        try feeds.remove(server.url("/gone"))
        #expect(feeds.feedList.value.arrayValue?.count == 2)
    }

    /// The transport hands the conditional headers, the time limit and the body limit to the
    /// http service, and its answers back (the http service's own tests cover the rest).
    @Test func theTransportPassesRequestsThroughTheHTTPService() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/feed", .init(body: FeedSamples.rss(items: FeedSamples.items(1...1)), etag: "\"v1\"",
                                    lastModified: "Sat, 15 Jun 2024 12:00:00 GMT"))
        server.serve("/big", .init(body: String(repeating: "x", count: 5_000)))
        server.serve("/quiet", .silence)
        let transport = HTTPFeedTransport(http: try HTTPService())

        let first = try await transport.fetch(FeedRequest(url: server.url("/feed")))
        #expect(first.status == 200 && first.headers["etag"] == "\"v1\"")
        #expect(first.headers["last-modified"] == "Sat, 15 Jun 2024 12:00:00 GMT")
        #expect(try FeedParser.parse(first.body, url: server.url("/feed")).items.count == 1)
        let again = try await transport.fetch(FeedRequest(url: server.url("/feed"), etag: "\"v1\"", lastModified: "Sat, 15 Jun 2024 12:00:00 GMT"))
        #expect(again.status == 304 && again.body.isEmpty)
        let sent = try #require(server.requests(for: "/feed").last)
        #expect(sent.headers["if-none-match"] == "\"v1\"" && sent.headers["if-modified-since"] == "Sat, 15 Jun 2024 12:00:00 GMT")
        #expect(sent.headers["user-agent"] == "crescent-feeds/1")

        do {
            _ = try await transport.fetch(FeedRequest(url: server.url("/big"), maxBytes: 1_000))
            Issue.record("a body over the limit was accepted")
        } catch {
            // feeds:add takes no maxBytes: the error names the setting that applies.
            #expect(error.code == .io, "\(error)")
            #expect(error.message.hasSuffix("is larger than 1000 bytes: raise [feeds] max_bytes"), "\(error)")
            #expect(!error.message.contains("maxBytes"), "\(error)")
        }
        do {
            _ = try await transport.fetch(FeedRequest(url: server.url("/quiet"), timeout: 0.3))
            Issue.record("a silent server answered")
        } catch {
            #expect(error.code == .timeout, "\(error)")
        }
    }
}
