/// One user as a ``UserDirectory`` stores it: the password's salt, hash and how it was derived.
struct StoredUser: Sendable {
    let name: String
    let salt: [UInt8]
    let hash: [UInt8]
    let algorithm: String
    let rounds: Int
    /// Unix seconds.
    let created: Int64
}
