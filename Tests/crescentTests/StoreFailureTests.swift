import Foundation
import Glibc
import Testing

/// Services start on first use: a store file that cannot be used fails only what uses the store,
/// with a message naming the file; every other part of the run works.
@Suite struct StoreFailureTests {
    /// What the data folder holds in place of a good store.
    enum Damage: String, CaseIterable, CustomStringConvertible {
        case corrupt, truncated, directory, unreadable, readOnly

        var description: String { rawValue }

        /// Permissions do not stop root, which CI may be: those two need another user.
        var needsUnprivilegedUser: Bool { self == .unreadable || self == .readOnly }
    }

    /// A data folder in `sandbox` whose store.sqlite has `damage`; nil when the damage cannot be
    /// made here (permissions, as root).
    static func damagedFolder(_ damage: Damage, in sandbox: Sandbox) async throws -> String? {
        if damage.needsUnprivilegedUser && geteuid() == 0 { return nil }
        let folder = sandbox.path + "/data"
        let file = folder + "/store.sqlite"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        switch damage {
        case .corrupt:
            _ = FileManager.default.createFile(atPath: file, contents: Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }))
        case .directory:
            try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: true)
        case .truncated, .unreadable, .readOnly:
            // A real store with records, moved from the write-ahead log into the main file by
            // SQLite itself (Python's sqlite3), so cutting the file cuts records.
            let made = try await crescent(["--data-dir", folder, "-e", """
                local c = services.store:collection("notes")
                task(function() for i = 1, 200 do c:add({ n = i, text = string.rep("x", 100) }) end end)
                """], in: sandbox)
            try #require(made.status == 0, "\(made)")
            let checkpoint = Process()
            checkpoint.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            checkpoint.arguments = ["python3", "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                                    + "c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()", file]
            try checkpoint.run()
            checkpoint.waitUntilExit()
            try #require(checkpoint.terminationStatus == 0)
            if damage == .truncated {
                var info = stat()
                try #require(stat(file, &info) == 0 && info.st_size > 16_384, "the records are in the main file")
                try #require(truncate(file, info.st_size / 3) == 0)
            } else {
                try #require(chmod(file, damage == .unreadable ? 0 : 0o444) == 0)
            }
        }
        return folder
    }

    @Test(arguments: Damage.allCases)
    func aRunThatDoesNotUseTheStoreRuns(_ damage: Damage) async throws {
        let sandbox = try Sandbox()
        guard let folder = try await Self.damagedFolder(damage, in: sandbox) else { return }
        let result = try await crescent(["--data-dir", folder, "-e", """
            print(1 + 1, services.geocoder ~= nil, services.session.currentUser)
            """], in: sandbox)
        #expect(result.status == 0, "\(damage): \(result)")
        #expect(result.stdout == "2\ttrue\tnil\n", "\(damage): \(result)")
        #expect(result.stderr == "", "\(damage): \(result)")
    }

    @Test(arguments: Damage.allCases)
    func aRunThatUsesTheStoreGetsAClearError(_ damage: Damage) async throws {
        let sandbox = try Sandbox()
        guard let folder = try await Self.damagedFolder(damage, in: sandbox) else { return }
        let result = try await crescent(["--data-dir", folder, "-e", """
            local notes = services.store:collection("notes")
            task(function() local record, err = notes:add({ text = "new" }); print(record, err) end)
            """], in: sandbox)
        #expect(result.status == 1, "\(damage): \(result)")
        #expect(result.stderr.contains("\(folder)/store.sqlite"), "the message names the file: \(damage): \(result)")
        #expect(result.stderr.contains("io:"), "\(damage): \(result)")
        #expect(result.stderrShowsNoCrash, "\(damage): \(result)")
    }

    @Test func crescentServicesDocumentsEveryServiceWithoutOpeningAny() async throws {
        let sandbox = try Sandbox()
        let folder = try #require(try await Self.damagedFolder(.corrupt, in: sandbox))
        // The default data folder, $XDG_DATA_HOME/crescent, is the damaged one.
        let dataHome = sandbox.path + "/xdg"
        try FileManager.default.createDirectory(atPath: dataHome, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dataHome + "/crescent", withDestinationPath: folder)
        let broken = try await crescent(["-e", "print(services.store:collection('x'))"], in: sandbox, environment: ["XDG_DATA_HOME": dataHome])
        #expect(broken.status == 1 && broken.stderr.contains("\(dataHome)/crescent/store.sqlite"), "the store there is broken: \(broken)")
        let result = try await crescent(["services"], in: sandbox, environment: ["XDG_DATA_HOME": dataHome])
        #expect(result.status == 0, "\(result)")
        for name in ["location", "geocoder", "store", "session", "feeds", "http"] {
            #expect(result.stdout.contains("  \(name)"), "\(name): \(result)")
        }
        let store = try await crescent(["services", "store"], in: sandbox, environment: ["XDG_DATA_HOME": dataHome])
        #expect(store.status == 0 && store.stdout.contains("collection"), "\(store)")
    }
}
