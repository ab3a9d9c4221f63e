import Crypto
import Services
#if canImport(Glibc)
import Glibc
#endif

/// The user's secret that signs the grants: 32 random bytes in `grant-key` in the user's default
/// data folder (`~/.local/share/crescent`, whatever `--data-dir` says), 0600, made at the first
/// grant.
///
/// A grant's hash was a plain hash of what was granted, so a grants file made anywhere granted
/// everywhere: a project shipping `data/plugin-grants.toml` that grants its plugin `~/.ssh`, run
/// as its README says (`crescent --data-dir data app.lua`), read the user's keys with no question.
/// Signed with this key, a grant holds only where this user made
/// it: a grants file from another user, another machine or an attacker grants nothing (its
/// plugins are asked about again). The signed text also names the plugin's folder and its owner
/// (``PluginGrants``), so a grants file copied between the user's own projects grants nothing
/// either.
struct PluginGrantKey {
    private let bytes: [UInt8]

    /// The key file's name in the default data folder.
    static let fileName = "grant-key"

    /// The key file's path, nil when there is no default data folder (no `HOME`).
    static func path() -> String? {
        (try? StoreSettings.defaultDataFolder()).map { $0 + "/" + fileName }
    }

    /// The user's key, nil when none was made yet (then no grant holds) or it cannot be read.
    static func load() -> PluginGrantKey? {
        guard let path = path(),
              let bytes = try? PluginFile.read(path, limit: 1 << 10, what: "the grant key", followLinks: false),
              bytes.count == 32 else { return nil }
        return PluginGrantKey(bytes: bytes)
    }

    /// The user's key, made when there is none: written whole to a file of its own, then linked
    /// into place (of two first grants at once, one key wins and both use it).
    static func loadOrMake() throws(PluginProblem) -> PluginGrantKey {
        if let key = load() { return key }
        guard let path = path() else {
            throw PluginProblem("cannot record the grant: HOME is not set, so there is no place for the key that signs grants (\(fileName) in ~/.local/share/crescent)")
        }
        Folders.make(String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]), mode: 0o700)
        var generator = SystemRandomNumberGenerator()
        let fresh = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let temporary = path + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            let written = fresh.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
            if written == fresh.count { _ = link(temporary, path) }
            unlink(temporary)
        }
        let code = errno
        guard let key = load() else {
            var status = stat()
            let verb = lstat(path, &status) == 0 ? "use" : "make"
            throw PluginProblem("\(path): cannot \(verb) the key that signs grants: \(unusable(path, code))")
        }
        return key
    }

    /// Why the key file cannot be used (its path, what is wrong and the fix), nil when it can or
    /// none was made yet. Runs and `crescent plugins` say it: with such a key no grant holds,
    /// and "not granted, run crescent plugins allow" alone sent the user to a command that
    /// then refused.
    static func problem() -> String? {
        guard let path = path() else { return nil }
        var status = stat()
        guard lstat(path, &status) == 0, load() == nil else { return nil }
        let probe = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        let code = probe >= 0 ? EIO : errno
        if probe >= 0 { close(probe) }
        return "the key that signs grants, \(path), cannot be used: \(unusable(path, code))"
    }

    /// Why the key file at `path` cannot be used, and what to do (`code`: the errno of the
    /// last step). A link or a folder there made the key's link fail with a bare "File exists".
    private static func unusable(_ path: String, _ code: Int32) -> String {
        let remedy = "remove it (rm \(path)) and run the command again: a new key is made, and the plugins granted "
            + "with the old one are asked about again"
        var status = stat()
        guard lstat(path, &status) == 0 else { return String(cString: strerror(code)) }
        switch status.st_mode & S_IFMT {
        case S_IFLNK:
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(path, &target, target.count - 1)
            let shown = count > 0 ? " (to \(String(decoding: target[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)))" : ""
            return "it is a symbolic link\(shown), and the key is read only from a file of its own there; \(remedy)"
        case S_IFREG where status.st_size != 32:
            return "it holds \(status.st_size) bytes, not the 32 of a key; \(remedy)"
        case S_IFREG:
            return "it cannot be read (\(String(cString: strerror(code)))); make it yours to read (chown and chmod 600 \(path)), or \(remedy)"
        default:
            return "it is not a file (a folder or another kind); \(remedy)"
        }
    }

    /// HMAC-SHA256 of `text` under the key, hex.
    func sign(_ text: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: SymmetricKey(data: bytes))
        let digits = Array("0123456789abcdef")
        return code.map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined()
    }
}
