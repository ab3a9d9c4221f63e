import Crypto
import _CryptoExtras

/// Salted password hashes from a slow key-derivation function: PBKDF2-HMAC-SHA256 from
/// swift-crypto, a random 16-byte salt per password, a 32-byte hash.
struct PasswordHasher: Sendable {
    /// The name stored with each hash, so the scheme can change later.
    static let algorithm = "pbkdf2-sha256"
    static let saltLength = 16
    static let hashLength = 32

    /// Iterations for new hashes.
    let rounds: Int

    /// The hash of `password` with `salt` and `rounds` iterations.
    func hash(_ password: String, salt: [UInt8], rounds: Int? = nil) -> [UInt8] {
        let key: SymmetricKey
        do {
            key = try KDF.Insecure.PBKDF2.deriveKey(from: Array(password.utf8), salt: salt, using: .sha256,
                                                    outputByteCount: Self.hashLength,
                                                    unsafeUncheckedRounds: max(rounds ?? self.rounds, 1))
        } catch {
            // BoringSSL's PBKDF2 fails only on allocation failure; no hash matches then.
            return []
        }
        return key.withUnsafeBytes { Array($0) }
    }

    /// A fresh random salt (the system's cryptographic generator).
    static func makeSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<saltLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// True when the two hashes are equal, in time that depends only on their length.
    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count, !left.isEmpty else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
