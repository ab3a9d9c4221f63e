import Model
import NIOCore
import PostgresNIO

/// The session's users in the store's PostgreSQL database (`crescent_users`, see
/// ``PostgresSchema``), so every host on that database knows the same users.
struct PostgresUserDirectory: UserDirectory {
    let backend: PostgresBackend

    func user(named name: String?) throws(ServiceError) -> (user: StoredUser?, maxRounds: Int) {
        // One row whatever the name: the most rounds, and the user's columns when there is one.
        let result = try backend.execute("""
            SELECT COALESCE((SELECT max(rounds) FROM crescent_users), 0), u.name, u.salt, u.hash, u.kdf, u.rounds, u.created
            FROM (SELECT 1) AS one LEFT JOIN crescent_users AS u ON u.name = \(name)
            """, doing: "reading its users")
        for row in result {
            let columns = try backend.decode {
                try row.decode((Int64, String?, ByteBuffer?, ByteBuffer?, String?, Int64?, Int64?).self)
            }
            let maxRounds = Int(clamping: columns.0)
            guard let name = columns.1, let salt = columns.2, let hash = columns.3, let algorithm = columns.4,
                  let rounds = columns.5, let created = columns.6 else { return (nil, maxRounds) }
            let user = StoredUser(name: name, salt: Array(salt.readableBytesView), hash: Array(hash.readableBytesView),
                                  algorithm: algorithm, rounds: Int(clamping: rounds), created: created)
            return (user, maxRounds)
        }
        return (nil, 0)
    }

    /// Adds `user` unless its name, or one that looks like it, is present. The look-alike check
    /// reads the names before the insert: two hosts registering look-alikes in the same instant
    /// can both pass it (the same name cannot: the primary key refuses the second).
    func insert(_ user: StoredUser) throws(ServiceError) {
        let names = try backend.execute("SELECT name FROM crescent_users", doing: "reading its users")
        var existing: [String] = []
        for row in names { existing.append(try backend.decode { try row.decode(String.self) }) }
        if let lookalike = UserName.lookalike(of: user.name, among: existing) { throw Self.taken(user.name, by: lookalike) }
        let result = try backend.execute("""
            INSERT INTO crescent_users (name, salt, hash, kdf, rounds, created)
            VALUES (\(user.name), \(ByteBuffer(bytes: user.salt)), \(ByteBuffer(bytes: user.hash)), \(user.algorithm),
                    \(Int64(user.rounds)), \(user.created))
            ON CONFLICT (name) DO NOTHING
            RETURNING name
            """, doing: "registering a user")
        guard result.rows.count == 1 else { throw Self.taken(user.name) }
    }

    func setPassword(of name: String, salt: [UInt8], hash: [UInt8], algorithm: String, rounds: Int) throws(ServiceError) -> Bool {
        let result = try backend.execute("""
            UPDATE crescent_users SET salt = \(ByteBuffer(bytes: salt)), hash = \(ByteBuffer(bytes: hash)),
                kdf = \(algorithm), rounds = \(Int64(rounds))
            WHERE name = \(name)
            RETURNING name
            """, doing: "changing a password")
        return result.rows.count == 1
    }
}
