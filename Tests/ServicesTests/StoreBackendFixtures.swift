import Foundation
import Model
import PostgresTestSupport
@testable import Services
import Testing

/// The two places a store keeps its records; the store suite runs on both.
enum StoreBackendKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// One test's database: an SQLite file in a temporary folder, or a new database in the test
/// run's PostgreSQL cluster. Opening it twice gives two hosts on one database.
final class TestDatabase: Sendable {
    let url: String
    let kind: StoreBackendKind
    private let folder: TemporaryFolder?

    init(_ kind: StoreBackendKind) throws {
        self.kind = kind
        switch kind {
        case .sqlite:
            let folder = try TemporaryFolder()
            self.folder = folder
            url = folder.databasePath
        case .postgres:
            folder = nil
            url = try PostgresCluster.shared().makeDatabase("store")
        }
    }

    /// A store (a host) on this database.
    func open(_ settings: Fields = [:]) throws -> Store {
        try Store(url: url, settings: settings)
    }
}

extension Store {
    /// The PostgreSQL backend (tests of its own behaviour).
    var postgres: PostgresBackend? { backend as? PostgresBackend }
}

/// The records that `changeSets` make of an empty list, given the list after each change.
func rebuild(_ changeSets: [ChangeSet], snapshots: [[Value]]) -> [Value]? {
    var list: [Value] = []
    for (change, after) in zip(changeSets, snapshots) {
        guard let next = change.replay(on: list, new: after) else { return nil }
        list = next
    }
    return list
}
