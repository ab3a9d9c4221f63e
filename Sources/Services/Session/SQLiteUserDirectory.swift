import Foundation
import GRDB
import Model

/// The session's users in the `users` table of the store's SQLite database.
struct SQLiteUserDirectory: UserDirectory {
    static let schema = [
        """
        CREATE TABLE IF NOT EXISTS users (
            name TEXT PRIMARY KEY NOT NULL,
            salt BLOB NOT NULL,
            hash BLOB NOT NULL,
            kdf TEXT NOT NULL,
            rounds INTEGER NOT NULL,
            created INTEGER NOT NULL
        )
        """,
    ]

    let database: StoreDatabase

    /// The user named `name` (or nil) and the most rounds any stored hash takes (0 without users),
    /// read together: a check of any name can then cost what the dearest check costs.
    func user(named name: String?) throws(ServiceError) -> (user: StoredUser?, maxRounds: Int) {
        try database.read { db in
            let maxRounds = try Int.fetchOne(db, sql: "SELECT MAX(rounds) FROM users") ?? 0
            guard let name, let row = try Row.fetchOne(db, sql: "SELECT name, salt, hash, kdf, rounds, created FROM users WHERE name = ?",
                                                       arguments: [name]) else { return (nil, maxRounds) }
            let salt: [UInt8] = Array(row[1] as Data)
            let hash: [UInt8] = Array(row[2] as Data)
            return (StoredUser(name: row[0], salt: salt, hash: hash, algorithm: row[3], rounds: row[4], created: row[5]), maxRounds)
        }
    }

    /// Adds `user`; a name already present, or one that looks like it, is `invalid_argument`.
    func insert(_ user: StoredUser) throws(ServiceError) {
        try database.write({ db in
            // Every name is compared by its skeleton, inside the write transaction: two hosts
            // registering look-alikes at once cannot both pass.
            let names = try String.fetchAll(db, sql: "SELECT name FROM users")
            if let existing = UserName.lookalike(of: user.name, among: names) { throw Self.taken(user.name, by: existing) }
            try db.execute(sql: "INSERT INTO users (name, salt, hash, kdf, rounds, created) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [user.name, Data(user.salt), Data(user.hash), user.algorithm, user.rounds, user.created])
        }, committed: { _ in })
    }

    /// Replaces the password of `name`; false when there is no such user.
    func setPassword(of name: String, salt: [UInt8], hash: [UInt8], algorithm: String, rounds: Int) throws(ServiceError) -> Bool {
        try database.write({ db in
            try db.execute(sql: "UPDATE users SET salt = ?, hash = ?, kdf = ?, rounds = ? WHERE name = ?",
                           arguments: [Data(salt), Data(hash), algorithm, rounds, name])
            return db.changesCount == 1
        }, committed: { $0 })
    }
}
