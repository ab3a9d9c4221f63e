import Foundation
import Model
import PostgresTestSupport
@testable import Services
import Testing

/// A transaction left open anywhere in the cluster (even in another database) holds no host
/// back: a write answers once its host shows it, and other hosts read it on their next catch-up.
@Suite(.serialized) struct StorePostgresOpenTransactionTests {
    @Test(arguments: ["postgres", nil] as [String?])
    func aTransactionLeftOpenHoldsNoWriteBack(elsewhere: String?) throws {
        let cluster = try PostgresCluster.shared()
        let database = try TestDatabase(.postgres)
        let name = String(database.url.split(separator: "/").last ?? "")
        let writer = try database.open(), reader = try database.open()
        defer { writer.close(); reader.close() }
        let list = try writer.collection(named: "list")
        let watched = try reader.collection(named: "list")
        let idle = try IdleTransaction(cluster: cluster, database: elsewhere ?? name)
        defer { idle.end() }

        let record = try list.add(["n": 1])
        #expect(list.count == 1, "the writer shows its own add when it answers")
        #expect(try list.get(record.id)["n"] == 1)
        #expect(try list.update(record.id, fields: ["n": 2])["n"] == 2)
        try reader.catchUpWithOtherProcesses()
        #expect(watched.items.map { $0["n"] } == [2], "another host reads it while the transaction is open")
        #expect(try list.remove(.integer(record.id)) == 1)
        #expect(list.count == 0)
        let again = try list.add([["n": 3], ["n": 4]])
        try reader.catchUpWithOtherProcesses()
        #expect(watched.items == list.items)
        #expect(idle.isOpen, "the other transaction was open throughout")

        idle.end()
        try reader.catchUpWithOtherProcesses()
        try writer.catchUpWithOtherProcesses()
        #expect(watched.items == list.items, "nothing is applied twice once it ends: \(again)")
        #expect(list.count == 2)
    }
}

/// A `psql` session holding a transaction open until ``end()``: by default one with an id,
/// idle; `begin` and `held` (a query answering 1 while it holds) say what else it holds (a lock).
final class IdleTransaction {
    private let process: Process
    private let input: Pipe
    private let cluster: PostgresCluster
    private let database: String
    private let held: String

    static let idleWithAnID = """
        SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction' AND backend_xid IS NOT NULL
        AND query LIKE '%crescent-idle%' AND pid <> pg_backend_pid()
        """

    struct Failed: Error, CustomStringConvertible {
        var description: String { "the idle transaction did not begin" }
    }

    init(cluster: PostgresCluster, database: String,
         begin: String = "BEGIN; SELECT pg_current_xact_id(); SELECT 'crescent-idle';", held: String = idleWithAnID) throws {
        self.cluster = cluster
        self.database = database
        self.held = held
        process = Process()
        input = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", "-h", cluster.folder, "-p", "\(cluster.port)", "-U", cluster.user, "-d", database, "-q"]
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data((begin + "\n").utf8))
        // psql may take seconds to start on a loaded machine.
        var tries = 0
        while !isOpen && tries < 3000 {
            usleep(10_000)
            tries += 1
        }
        guard tries < 3000 else {
            end()
            throw Failed()
        }
    }

    /// Whether the session holds what it began (by default: idle in its transaction, which
    /// holds an id).
    var isOpen: Bool {
        (try? cluster.sql(database, held).trimmingCharacters(in: .whitespacesAndNewlines)) == "1"
    }

    /// Commits and waits for `psql` to exit; a `psql` that died by a signal fails the test.
    func end() {
        guard process.isRunning else { return }
        input.fileHandleForWriting.write(Data("COMMIT;\n".utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "psql ended with \(process.terminationStatus)")
    }
}
