public import Model
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `session` service: users registered in the store's database (SQLite or PostgreSQL, see
/// ``UserDirectory``) and the one logged in.
///
/// `currentUser` is nil or a read-only `user { name, since }` (`since`: Unix seconds of the
/// login); only the service changes it. Passwords are kept as salted PBKDF2-HMAC-SHA256 hashes
/// (see ``SessionSettings`` for the cost). A wrong password and an unknown name fail alike —
/// same `permission` error, same work (the hash is computed against a dummy salt for unknown
/// names) — and failures for a name slow its next attempts down exponentially (``LoginThrottle``).
///
/// ```lua
/// local session = services.session
/// session:observe("currentUser", function(user) print(user and user.name or "(nobody)") end)
/// session:login("ann", "correct horse", function(user, err) if err then print(err.message) end end)
/// ```
public final class Session: Service {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    /// The logged-in user, or nil.
    let currentUser: Property<DataModel?>
    let settings: SessionSettings
    private let directory: any UserDirectory
    private let hasher: PasswordHasher
    private let clock: any ServiceClock
    /// The slow-down after failed attempts (internal so tests can read its count).
    let throttle: LoginThrottle
    /// Orders changes of the current user with their events.
    private let transition = Mutex(())
    /// What unknown names are checked against, so they cost what known ones do.
    private let dummySalt = PasswordHasher.makeSalt()

    /// The one message for a wrong name or password.
    static let refusal = "wrong name or password"

    /// The fields of the `user` data model, declared once (a misspelled read names them).
    static let userSchema = ModelSchema("user", ["name", "since"])

    init(directory: any UserDirectory, settings: SessionSettings, clock: any ServiceClock) {
        self.settings = settings
        self.clock = clock
        self.directory = directory
        hasher = PasswordHasher(rounds: settings.kdfRounds)
        throttle = LoginThrottle(base: settings.failureDelay, cap: settings.maxFailureDelay, clock: clock)
        currentUser = Property("currentUser", nil, changes)
    }

    // MARK: The API

    /// Creates user `name` with `password` (it does not log in). Returns the name.
    public func register(_ name: String, password: String) throws(ServiceError) -> Value {
        let name = try UserName.normalized(name)
        try checkPassword(password)
        let salt = PasswordHasher.makeSalt()
        let user = StoredUser(name: name, salt: salt, hash: hasher.hash(password, salt: salt),
                                            algorithm: PasswordHasher.algorithm, rounds: hasher.rounds, created: Int64(clock.wallTime))
        try directory.insert(user)
        return .string(name)
    }

    /// Logs `name` in (replacing whoever was logged in) and returns the new current user.
    public func login(_ name: String, password: String) async throws(ServiceError) -> Value {
        // A name that cannot be registered is checked like an unknown one (same answer, same work).
        let name = (try? UserName.normalized(name)) ?? name
        let user: DataModel? = try await throttle.attempt(name) { () throws(ServiceError) in
            let verified = try verify(name, password)
            return (verified, verified ? DataModel(Self.userSchema, [.string(name), .integer(Int64(clock.wallTime))]) : nil)
        }
        guard let user else { throw ServiceError(.permission, Self.refusal) }
        replaceCurrentUser(with: user)
        return .model(user)
    }

    /// Logs the current user out; returns that user, or nil when nobody was logged in.
    public func logout() -> Value {
        replaceCurrentUser(with: nil).map(Value.model) ?? .null
    }

    /// Changes the current user's password after checking the old one (slowed down like logins).
    public func changePassword(old: String, new: String) async throws(ServiceError) -> Value {
        guard let name = currentUser.value?["name"].stringValue else {
            throw ServiceError(.permission, "nobody is logged in")
        }
        try checkPassword(new)
        let verified = try await throttle.attempt(name) { () throws(ServiceError) in
            let verified = try verify(name, old)
            return (verified, verified)
        }
        guard verified else { throw ServiceError(.permission, Self.refusal) }
        let salt = PasswordHasher.makeSalt()
        guard try directory.setPassword(of: name, salt: salt, hash: hasher.hash(new, salt: salt),
                                        algorithm: PasswordHasher.algorithm, rounds: hasher.rounds) else {
            throw ServiceError(.permission, Self.refusal)
        }
        return .bool(true)
    }

    // MARK: Checks

    /// True when `password` is the password of `name`.
    ///
    /// Every check costs the same work, whoever asks: as many rounds as the dearest of the
    /// stored hashes and of new ones. An unknown name hashes against a dummy salt, and a user
    /// whose hash is cheaper (stored before `kdf_rounds` was raised) pads with dummy rounds, so
    /// the time of an answer never tells whether a name exists.
    private func verify(_ name: String, _ password: String) throws(ServiceError) -> Bool {
        let (stored, maxRounds) = try directory.user(named: (try? UserName.normalized(name)) == name ? name : nil)
        let cost = min(max(maxRounds, hasher.rounds), Self.maxRounds)
        let usable = stored.flatMap { $0.algorithm == PasswordHasher.algorithm && (1...Self.maxRounds).contains($0.rounds) ? $0 : nil }
        let rounds = usable?.rounds ?? cost
        let derived = hasher.hash(password, salt: usable?.salt ?? dummySalt, rounds: rounds)
        if rounds < cost { _ = hasher.hash(password, salt: dummySalt, rounds: cost - rounds) }
        guard let usable else { return false }
        return PasswordHasher.constantTimeEqual(derived, usable.hash)
    }

    /// The most rounds a stored hash may ask for (the bound of `kdf_rounds`): a database that says
    /// more is damaged, and its checks would hang the service.
    static let maxRounds = 100_000_000

    private func checkPassword(_ password: String) throws(ServiceError) {
        guard password.count >= settings.minPasswordLength else {
            throw ServiceError(.invalidArgument, "a password must be at least \(settings.minPasswordLength) characters")
        }
    }

    /// Sets the current user and reports `didLogout` for the one replaced, then `didLogin`.
    @discardableResult
    private func replaceCurrentUser(with user: DataModel?) -> DataModel? {
        transition.withLock { _ in
            let previous = currentUser.value
            guard previous != nil || user != nil else { return nil }
            currentUser.set(user)
            if let previous { changes.emit("didLogout", .model(previous)) }
            if let user { changes.emit("didLogin", .model(user)) }
            return previous
        }
    }
}
