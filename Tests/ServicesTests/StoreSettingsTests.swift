import Foundation
import GRDB
import Model
@testable import Services
import Testing

/// Where the database lives (`--data-dir`, `[store] path`, XDG) and what happens when it cannot.
@Suite(.serialized) struct StoreSettingsTests {
    @Test func theDataFolderHoldsStoreSqliteCreatedOnFirstUse() throws {
        let folder = try TemporaryFolder()
        let dataDirectory = folder.path + "/a/b"
        let services = try Store.make(PluginContext(dataDirectory: dataDirectory))
        #expect(services.map(\.interface.name) == ["store", "session", "feeds"])
        let store = try #require(services.first as? Store)
        #expect(store.path == dataDirectory + "/store.sqlite")
        #expect(!FileManager.default.fileExists(atPath: dataDirectory), "nothing is created before the store is used")
        _ = try store.collection(named: "x").add(["n": 1])
        #expect(FileManager.default.fileExists(atPath: store.path))
        let mode = try store.database.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
    }

    @Test func memoryAsDataFolderOrPathIsAThrowawayDatabase() throws {
        #expect(try StoreSettings(PluginContext(dataDirectory: ":memory:")).location == .memory)
        let fromPath = try StoreSettings(PluginContext(sections: ["store": ["path": ":memory:"]], dataDirectory: "/nonexistent"))
        #expect(fromPath.location == .memory)
        let store = try #require(Store.make(PluginContext(dataDirectory: ":memory:")).first as? Store)
        _ = try store.collection(named: "x").add(["n": 1])
        #expect(store.path == ":memory:")
    }

    /// `--data-dir :memory:` on the command line is stronger than `[store] path` in the config.
    @Test func memoryOnTheCommandLineWinsOverTheConfigPath() throws {
        let folder = try TemporaryFolder()
        let settings = try StoreSettings(PluginContext(sections: ["store": ["path": .string(folder.path + "/mine.db")]], dataDirectory: ":memory:"))
        #expect(settings.location == .memory)
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/mine.db"))
    }

    @Test func theConfigPathOverridesTheDataFolder() throws {
        let folder = try TemporaryFolder()
        let settings = try StoreSettings(PluginContext(sections: ["store": ["path": .string(folder.path + "/mine.db"), "synchronous": "full",
                                                                            "poll_interval": 0.5, "write_on_loop": true]],
                                                       dataDirectory: "/elsewhere"))
        #expect(settings.location == .file(folder.path + "/mine.db"))
        #expect(settings.synchronous == .full)
        #expect(settings.pollInterval == 500_000_000)
        #expect(settings.writesOnLoop)
    }

    static let badSettings: [(section: Value, message: String)] = [
        (["path": 5], "[store] path must be a string, got number"),
        (["path": ""], "[store] path must not be empty"),
        (["path": "/tmp/a\u{0}b.db"], "[store] path must not contain a NUL character (\\0)"),
        (["url": "/tmp/a\u{0}b.db"], "[store] url must not contain a NUL character (\\0)"),
        (["synchronous": "sometimes"], "[store] synchronous must be \"normal\" or \"full\", got \"sometimes\""),
        (["poll_interval": 0], "[store] poll_interval must be a number of seconds in [0.01, 60]"),
        (["write_on_loop": "yes"], "[store] write_on_loop must be true or false, got string"),
    ]

    @Test(arguments: badSettings)
    func badSettingsAreInvalidArguments(section: Value, message: String) {
        #expect(throws: ServiceError(.invalidArgument, message)) {
            try StoreSettings(PluginContext(sections: ["store": section], dataDirectory: ":memory:"))
        }
    }

    @Test func withoutADataFolderXDGDataHomeThenHomeDecide() throws {
        let savedXDG = ProcessInfo.processInfo.environment["XDG_DATA_HOME"]
        defer {
            if let savedXDG { setenv("XDG_DATA_HOME", savedXDG, 1) } else { unsetenv("XDG_DATA_HOME") }
        }
        setenv("XDG_DATA_HOME", "/xdg/data", 1)
        #expect(try StoreSettings(PluginContext()).location == .file("/xdg/data/crescent/store.sqlite"))
        unsetenv("XDG_DATA_HOME")
        let home = try #require(ProcessInfo.processInfo.environment["HOME"])
        #expect(try StoreSettings(PluginContext()).location == .file(home + "/.local/share/crescent/store.sqlite"))
    }

    @Test func anUnusableLocationIsAnIOErrorNamingThePath() throws {
        let folder = try TemporaryFolder()
        let file = folder.path + "/plain-file"
        _ = FileManager.default.createFile(atPath: file, contents: Data("hello".utf8))
        // Made at once (nothing is opened); the first use answers why it cannot open.
        let inFile = try #require(Store.make(PluginContext(dataDirectory: file)).first as? Store)
        #expect(throws: ServiceError(.io, "cannot open the store database \(file)/store.sqlite: \(file) is not a folder")) {
            try inFile.collection(named: "x")
        }
        let notADatabase = folder.path + "/notes.txt"
        _ = FileManager.default.createFile(atPath: notADatabase, contents: Data(String(repeating: "not sqlite ", count: 10).utf8))
        let notSQLite = try #require(Store.make(folder.context(["store": ["path": .string(notADatabase)]])).first as? Store)
        #expect(throws: ServiceError(.io, "cannot open the store database \(notADatabase): it is not an SQLite database; \(DatabaseLocation.moveAside)")) {
            try notSQLite.collection(named: "x")
        }
    }

    @Test func aDatabaseThatFailsToOpenLaterIsAnIOErrorToo() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/store.sqlite"
        let store = try Store(path: path)
        // Corrupted after the check: the header is right, the rest is not.
        _ = FileManager.default.createFile(atPath: path, contents: Data("SQLite format 3\0".utf8 + Array(repeating: 0xFF, count: 200)))
        #expect {
            try store.collection(named: "x")
        } throws: { error in
            guard let error = error as? ServiceError else { return false }
            return error.code == .io && error.message.hasPrefix("cannot open the store database \(path): ")
        }
    }
}

extension StoreSettingsTests {
    @Test func writeOnLoopIsOnByDefaultAndCanBeTurnedOff() throws {
        #expect(try StoreSettings(PluginContext(sections: [:], dataDirectory: ":memory:")).writesOnLoop)
        #expect(try !StoreSettings(PluginContext(sections: ["store": ["write_on_loop": false]], dataDirectory: ":memory:")).writesOnLoop)
    }
}
