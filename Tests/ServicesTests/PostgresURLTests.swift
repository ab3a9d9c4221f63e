import Model
@testable import Services
import Testing

/// `[store] url`: which backend it picks, the PostgreSQL URL's parts, and the form shown in
/// messages (never with the password).
@Suite struct PostgresURLTests {
    @Test func partsDefaultsAndTheShownForm() throws {
        let url = try PostgresURL("postgres://me:s%40cret@db.example:6543/notes?sslmode=require")
        #expect(url.user == "me" && url.password == "s@cret" && url.host == "db.example" && url.port == 6543)
        #expect(url.database == "notes" && url.tlsMode == .require)
        #expect(url.description == "postgres://me@db.example:6543/notes?sslmode=require")
        let bare = try PostgresURL("postgresql://localhost", defaultUser: "ann")
        #expect(bare.user == "ann" && bare.database == "ann" && bare.port == 5432 && bare.tlsMode == .prefer)
        let socket = try PostgresURL("postgres://me@%2Frun%2Fpostgresql/notes")
        #expect(socket.socketPath == "/run/postgresql/.s.PGSQL.5432")
        let query = try PostgresURL("postgres://me@/notes?host=/tmp/pg&port=7000")
        #expect(query.socketPath == "/tmp/pg/.s.PGSQL.7000")
        #expect(query.description == "postgres://me@/notes?host=/tmp/pg")
        let v6 = try PostgresURL("postgres://me:pw@[::1]:7001/x")
        #expect(v6.host == "::1" && v6.port == 7001 && v6.description == "postgres://me@[::1]:7001/x")
    }

    @Test func mistakesAreNamedWithoutThePassword() {
        #expect(throws: ServiceError(.invalidArgument, "[store] url is not a PostgreSQL URL (postgres://user:password@host:port/database): sslmode must be disable, allow, prefer, require, verify-ca or verify-full, got \"maybe\"")) {
            try PostgresURL("postgres://me:hunter2@h/db?sslmode=maybe")
        }
        #expect(throws: ServiceError(.invalidArgument, "[store] url is not a PostgreSQL URL (postgres://user:password@host:port/database): unknown parameter 'colour' (known: sslmode, host, port, user, password, dbname)")) {
            try PostgresURL("postgres://me:hunter2@h/db?colour=blue")
        }
    }

    /// A password with an unencoded `/`, `?` or `#` is refused with a message that repeats no
    /// part of it; an `@` in one of the URL's own parameters is still fine.
    @Test(arguments: ["postgres://me:Qx7/Zk9@h/db", "postgres://me:Qx7?Zk9@h/db", "postgres://me:Qx7#Zk9@h:5432/db",
                      "postgres://me:Qx7/Yv?Zk9=1@h/db", "postgresql://me:Qx7/Zk9@h"])
    func anUnencodedPasswordIsRefusedWithoutShowingIt(_ text: String) {
        let error = #expect(throws: ServiceError.self) { try PostgresURL(text) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("percent-encoded") == true, "\(String(describing: error))")
        for piece in ["Qx7", "Zk9", "Yv"] { #expect(error?.message.contains(piece) == false, "\(piece) in \(String(describing: error))") }
        #expect(throws: ServiceError.self) { try StoreSettings(PluginContext(sections: ["store": ["url": .string(text)]], dataDirectory: ":memory:")) }
    }

    @Test func anAtInAParameterIsNotAPassword() throws {
        let url = try PostgresURL("postgres://h/db?user=me@corp")
        #expect(url.user == "me@corp" && url.host == "h" && url.database == "db")
        #expect(try PostgresURL("postgres://me:pa%2Fss@h/db").password == "pa/ss")
    }

    @Test func theSettingsPickTheBackend() throws {
        func settings(_ store: Fields) throws(ServiceError) -> StoreSettings {
            try StoreSettings(PluginContext(sections: ["store": .object(store)], dataDirectory: "/data"))
        }
        #expect(try settings(["url": "sqlite:/tmp/a.sqlite"]).location == .file("/tmp/a.sqlite"))
        #expect(try settings(["url": "/tmp/b.sqlite"]).location == .file("/tmp/b.sqlite"))
        let postgres = try settings(["url": "postgres://me:pw@h:5432/db", "keep_changes": 60])
        #expect(postgres.postgres?.database == "db" && postgres.keepChanges == 60)
        #expect(postgres.location == .file("/data/store.sqlite"), "the session and feeds stay in the data folder")
        #expect(throws: ServiceError(.invalidArgument, "[store] has both path and url: keep one")) {
            try settings(["url": "postgres://h/db", "path": "/x"])
        }
    }
}
