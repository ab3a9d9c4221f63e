import FeedTestSupport
import Foundation
import Model
@testable import Services
import Testing

/// A feed URL's user information is used to fetch and never shown: `feeds[i].url`,
/// `latest[i].feed` and the `didUpdate` payload write `http://***@host/...`. Before, they showed
/// the password.
@Suite struct FeedCredentialsTests {
    @Test func aFeedsPasswordIsNeverShown() async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        server.serve("/rss", .init(body: FeedSamples.rss(title: "RSS news", items: FeedSamples.items(1...2))))
        let folder = try TemporaryFolder()
        let (_, feeds) = try FeedServiceTests.makeFeeds(folder)
        let events = ModelEvents(feeds)
        let plain = server.url("/rss")
        let secret = plain.replacingOccurrences(of: "http://", with: "http://bob:hunter2@")
        let shown = plain.replacingOccurrences(of: "http://", with: "http://***@")

        let info = try await feeds.add(secret, interval: 60)
        #expect(info["url"] == .string(shown))
        #expect(feeds.feedList.value.arrayValue?.map { $0["url"] } == [.string(shown)])
        let latest = try #require(feeds.latest.value.arrayValue)
        #expect(latest.count == 2 && latest.allSatisfy { $0["feed"] == .string(shown) }, "\(latest)")
        #expect(latest.first?["link"] == .string(server.url("/posts/2")), "relative links resolve without the user information")
        let update = try #require(events.payloads("didUpdate").first)
        #expect(!"\(update)".contains("hunter2") && !"\(feeds.latest.value)".contains("hunter2"))

        try feeds.remove(secret)
        #expect(feeds.feedList.value.arrayValue?.isEmpty == true)
        #expect(feeds.latest.value.arrayValue?.isEmpty == true, "the feed's items go with it")
    }
}
