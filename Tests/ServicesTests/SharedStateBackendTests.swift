import FeedTestSupport
import Foundation
import Model
@testable import Services
import Testing

/// The session's users and the feeds' state live where the store's records live: two hosts on
/// one database, each with its own data folder, share users and subscriptions and announce each
/// feed item once between them, on SQLite and on PostgreSQL alike.
@Suite struct SharedStateBackendTests {
    /// The store, session and feeds of one host on `database`, with its own data folder.
    static func host(_ database: TestDatabase, _ folder: TemporaryFolder) throws -> (store: Store, session: Session, feeds: FeedsService) {
        let sections: Fields = [
            "store": ["url": .string(database.url)],
            "session": ["kdf_rounds": 1_000, "failure_delay": 0],
            "feeds": ["min_interval": 0.05, "max_backoff": 1],
        ]
        let services = try Store.make(folder.context(sections))
        return (try #require(services[0] as? Store), try #require(services[1] as? Session), try #require(services[2] as? FeedsService))
    }

    @Test(arguments: StoreBackendKind.allCases)
    func usersRegisteredByOneHostLogInOnAnother(_ kind: StoreBackendKind) async throws {
        let database = try TestDatabase(kind)
        let folderA = try TemporaryFolder(), folderB = try TemporaryFolder()
        let a = try Self.host(database, folderA), b = try Self.host(database, folderB)
        defer { a.store.close(); b.store.close() }

        #expect(try a.session.register("ann", password: "correct horse") == "ann")
        #expect(try await b.session.login("ann", password: "correct horse")["name"] == "ann")
        #expect(throws: ServiceError(.invalidArgument, "the name 'ann' is taken")) {
            try b.session.register("ann", password: "another one")
        }
        #expect(try await b.session.changePassword(old: "correct horse", new: "battery staple") == true)
        await #expect(throws: ServiceError(.permission, Session.refusal)) {
            try await a.session.login("ann", password: "correct horse")
        }
        #expect(try await a.session.login("ann", password: "battery staple")["name"] == "ann")
        await #expect(throws: ServiceError(.permission, Session.refusal)) {
            try await a.session.login("nobody", password: "battery staple")
        }
        if kind == .postgres {
            for folder in [folderA, folderB] {
                #expect(!FileManager.default.fileExists(atPath: folder.databasePath), "no SQLite file beside PostgreSQL")
            }
        }
    }

    @Test(arguments: StoreBackendKind.allCases)
    func feedsAreSharedAndEachItemIsAnnouncedOnce(_ kind: StoreBackendKind) async throws {
        let server = try await FeedTestServer.start()
        defer { Task { await server.stop() } }
        let url = server.url("/feed")
        server.serve("/feed", .init(body: FeedSamples.rss(title: "Shared", items: FeedSamples.items(1...3))))
        let database = try TestDatabase(kind)
        let folderA = try TemporaryFolder(), folderB = try TemporaryFolder()
        let a = try Self.host(database, folderA)
        defer { a.store.close() }
        let added = try await a.feeds.add(url, interval: 60)
        #expect(added["title"] == "Shared" && added["itemCount"] == 3)

        let b = try Self.host(database, folderB)
        defer { b.store.close() }
        b.feeds.loadIfNeeded()
        #expect(b.feeds.feedList.value.arrayValue?.map { $0["title"] } == ["Shared"], "the other host follows the feed")
        #expect(b.feeds.latest.value.arrayValue?.map { $0["id"] } == ["item-3", "item-2", "item-1"])
        #expect(try await b.feeds.refresh(url).isEmpty, "items the first host announced are not new")

        server.serve("/feed", .init(body: FeedSamples.rss(title: "Shared", items: FeedSamples.items(1...5))))
        let fresh = try await b.feeds.refresh(url).map(\.id)
        #expect(fresh == ["item-5", "item-4"], "new items, in document order: \(fresh)")
        #expect(try await a.feeds.refresh(url).isEmpty, "announced once between the hosts")
        try b.feeds.remove(url)
        #expect(b.feeds.feedList.value.arrayValue?.isEmpty == true && b.feeds.latest.value.arrayValue?.isEmpty == true, "gone at once")
        // The database forgets it without holding the caller up: at once, or soon after when
        // the writer is busy.
        let folderC = try TemporaryFolder()
        #expect(await eventually {
            guard let c = try? Self.host(database, folderC) else { return false }
            defer { c.store.close() }
            c.feeds.loadIfNeeded()
            return c.feeds.feedList.value.arrayValue?.isEmpty == true
        }, "removed for every host")
        if kind == .postgres {
            #expect(!FileManager.default.fileExists(atPath: folderA.databasePath), "no SQLite file beside PostgreSQL")
        }
    }
}
