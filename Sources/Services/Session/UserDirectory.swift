import Model

/// Where the session keeps its users, next to the store's records: the store's SQLite file
/// (``SQLiteUserDirectory``) or its PostgreSQL database (``PostgresUserDirectory``), so hosts
/// sharing a database share their users. Passwords themselves are never stored, only their
/// salted hashes.
protocol UserDirectory: Sendable {
    /// The user named `name` (or nil) and the most rounds any stored hash takes (0 without
    /// users), read together: a check of any name can then cost what the dearest check costs.
    func user(named name: String?) throws(ServiceError) -> (user: StoredUser?, maxRounds: Int)

    /// Adds `user`; a name already present, or one that looks like it
    /// (``UserName/lookalike(of:among:)``), is `invalid_argument`.
    func insert(_ user: StoredUser) throws(ServiceError)

    /// Replaces the password of `name`; false when there is no such user.
    func setPassword(of name: String, salt: [UInt8], hash: [UInt8], algorithm: String, rounds: Int) throws(ServiceError) -> Bool
}

extension UserDirectory {
    /// The answer to registering a name already present.
    static func taken(_ name: String, by existing: String? = nil) -> ServiceError {
        guard let existing, existing != name else { return ServiceError(.invalidArgument, "the name '\(name)' is taken") }
        return ServiceError(.invalidArgument, "the name '\(name)' is taken: it looks like the name '\(existing)'")
    }
}
