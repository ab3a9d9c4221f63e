import Model

/// How the session hashes passwords and slows down guessing: the `[session]` section of
/// `crescent.toml`.
///
/// ```toml
/// [session]
/// kdf_rounds = 600000          # PBKDF2-HMAC-SHA256 iterations for new passwords (default 600,000)
/// failure_delay = 0.25         # seconds before the answer after the first failure for a name
/// max_failure_delay = 8        # the delay doubles with each further failure, up to this
/// min_password_length = 8      # characters
/// ```
///
/// The default cost is OWASP's recommendation for PBKDF2-HMAC-SHA256: about 85 ms per hash in a
/// release build on a 2-core x86-64 VM (measured 85–90 ms; 210,000 rounds took 27 ms).
/// Lower `kdf_rounds` only for tests: a password hashed with fewer rounds is cheaper to guess
/// from a copy of the database. Each user's rounds are stored with their hash, so changing the
/// setting affects only passwords set afterwards.
struct SessionSettings: Sendable {
    var kdfRounds = 600_000
    /// Seconds; the n-th consecutive failure delays the next answer by `failureDelay * 2^(n-1)`.
    var failureDelay = 0.25
    var maxFailureDelay = 8.0
    var minPasswordLength = 8

    init() {}

    /// The settings of `section`; a wrong type or a value out of range is `invalid_argument`.
    init(_ section: Value) throws(ServiceError) {
        if !section["kdf_rounds"].isNull {
            guard let rounds = section["kdf_rounds"].integerValue, rounds >= 1, rounds <= 100_000_000 else {
                throw ServiceError(.invalidArgument, "[session] kdf_rounds must be an integer in [1, 100000000]")
            }
            kdfRounds = Int(rounds)
        }
        if !section["failure_delay"].isNull {
            guard let seconds = section["failure_delay"].doubleValue, seconds >= 0, seconds <= 60 else {
                throw ServiceError(.invalidArgument, "[session] failure_delay must be a number of seconds in [0, 60]")
            }
            failureDelay = seconds
        }
        if !section["max_failure_delay"].isNull {
            guard let seconds = section["max_failure_delay"].doubleValue, seconds >= 0, seconds <= 3600 else {
                throw ServiceError(.invalidArgument, "[session] max_failure_delay must be a number of seconds in [0, 3600]")
            }
            maxFailureDelay = seconds
        }
        if !section["min_password_length"].isNull {
            guard let length = section["min_password_length"].integerValue, length >= 1, length <= 1024 else {
                throw ServiceError(.invalidArgument, "[session] min_password_length must be an integer in [1, 1024]")
            }
            minPasswordLength = Int(length)
        }
    }
}
