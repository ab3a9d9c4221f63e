import Model
import PostgresTestSupport
@testable import Services
import Testing

/// How the PostgreSQL store connects: `sslmode` is honoured against a server without TLS (the
/// test cluster), and a user who may not create temporary objects gets an error saying which
/// privilege it lacks.
@Suite(.serialized) struct StorePostgresConnectionTests {
    @Test func sslmodeIsHonoured() throws {
        let cluster = try PostgresCluster.shared()
        let database = try TestDatabase(.postgres)
        let name = StorePostgresWriteTests.name(database)
        let plain = cluster.url(database: name)

        let required = try Store(url: plain + "?sslmode=require")
        defer { required.close() }
        let refused = #expect(throws: ServiceError.self) { try required.collection(named: "x") }
        #expect(refused?.code == .unavailable)
        #expect(refused?.message.contains("the store database \"\(name)\" at 127.0.0.1:\(cluster.port)") == true, "\(String(describing: refused))")
        #expect(refused?.message.contains("does not offer TLS, which sslmode=require requires") == true, "\(String(describing: refused))")
        #expect(refused?.message.contains(cluster.password) == false)

        // prefer falls back to a plain connection, disable never asks.
        for mode in ["prefer", "disable"] {
            let store = try Store(url: plain + "?sslmode=\(mode)")
            defer { store.close() }
            let list = try store.collection(named: "x")
            _ = try list.add(["mode": .string(mode)])
            #expect(list.count == (mode == "prefer" ? 1 : 2), "sslmode=\(mode)")
        }
    }

    @Test func aUserWithoutTheTemporaryPrivilegeIsToldSo() throws {
        let cluster = try PostgresCluster.shared()
        let database = try TestDatabase(.postgres)
        let name = StorePostgresWriteTests.name(database)
        // The tables exist (made by the cluster's superuser); the other user may use them but
        // not create temporary objects.
        let owner = try database.open()
        _ = try owner.collection(named: "x")
        owner.close()
        let user = "limited_\(name)", password = "limited-pw-\(name.count)91"
        _ = try cluster.sql(name, """
            CREATE ROLE \(user) LOGIN PASSWORD '\(password)';
            GRANT CREATE, USAGE ON SCHEMA public TO \(user);
            GRANT ALL ON ALL TABLES IN SCHEMA public TO \(user);
            REVOKE TEMPORARY ON DATABASE \(name) FROM PUBLIC;
            """)
        let limited = try Store(url: "postgres://\(user):\(password)@127.0.0.1:\(cluster.port)/\(name)")
        defer { limited.close() }
        let refused = #expect(throws: ServiceError.self) { try limited.collection(named: "x") }
        #expect(refused?.message.contains("the store database \"\(name)\" at 127.0.0.1:\(cluster.port)") == true, "\(String(describing: refused))")
        #expect(refused?.message.contains("the user needs the TEMPORARY privilege on the database") == true, "\(String(describing: refused))")
        #expect(refused?.message.contains(password) == false)
    }
}
