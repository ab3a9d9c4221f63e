public import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

/// The permissions the user granted to plugins, kept in `DATA/plugin-grants.toml`: one section
/// per plugin with the lists granted and the hash of what was granted.
///
/// ```toml
/// [music]
/// version = "1.2.0"
/// hash = "5d41402abc4b2a76b9719d911017c592..."
/// read = ["~/Music"]
/// net = ["127.0.0.1:6600"]
/// ```
///
/// A plugin runs when what its manifest asks for is within its grant; an update that asks for
/// more is refused until `crescent plugins allow NAME` records the new grant.
public struct PluginGrants: Sendable {
    /// What a plugin's manifest asks compared with what was granted.
    public enum Status: Sendable, Equatable {
        /// It asks for nothing that needs a grant.
        case notNeeded
        case granted
        /// Never granted (`update` false), or granted less than it now asks (`update` true): the
        /// entries it asks beyond the grant.
        case notGranted(missing: [String], update: Bool)
    }

    /// The grants file's path.
    public let path: String
    private var grants: [String: (version: String, hash: String, permissions: PluginPermissions)] = [:]
    /// What was wrong with the file, if it could not be read (no grant is assumed then).
    public private(set) var problem: String?

    /// The file name under the data folder.
    public static let fileName = "plugin-grants.toml"

    /// The grants of the data folder `dataDirectory` (nil or `:memory:`: the default data folder).
    public init(dataDirectory: String?) {
        path = Self.dataFolder(dataDirectory) + "/" + Self.fileName
        load()
    }

    /// Reads the file at ``path`` (none: no grants).
    private mutating func load() {
        grants = [:]
        problem = nil
        guard access(path, F_OK) == 0 else { return }
        do throws(PluginProblem) {
            let sections = try PluginFile.tables(path, what: "the grants file")
            for (name, section) in sections {
                guard case .object = section else { continue }
                let recorded = try? PluginPermissions.read(Self.permissionsTable(section), path: path, isGrant: true)
                guard let recorded, let hash = section["hash"].stringValue, hash == recorded.hash else {
                    // A hand-edited grant whose lists do not match its hash grants nothing.
                    continue
                }
                grants[name] = (section["version"].stringValue ?? "?", hash, recorded)
            }
        } catch {
            problem = error.message
        }
    }

    /// The data folder: `dataDirectory`, or the default one for none and `:memory:`.
    static func dataFolder(_ dataDirectory: String?) -> String {
        dataDirectory.flatMap { $0 == ":memory:" ? nil : $0 } ?? (try? StoreSettings.defaultDataFolder()) ?? "."
    }

    private static func permissionsTable(_ section: Value) -> Value {
        guard case .object(var fields) = section else { return .object([:]) }
        fields["hash"] = nil
        fields["version"] = nil
        return .object(fields)
    }

    /// What `manifest` asks compared with its grant.
    public func status(of manifest: PluginManifest) -> Status {
        let asked = manifest.permissions
        if asked.asksNothing { return .notNeeded }
        guard let grant = grants[manifest.name] else { return .notGranted(missing: asked.beyond(PluginPermissions()), update: false) }
        if asked.isWithin(grant.permissions) { return .granted }
        return .notGranted(missing: asked.beyond(grant.permissions), update: true)
    }

    /// The permissions granted to `name`, if any.
    public func granted(_ name: String) -> PluginPermissions? { grants[name]?.permissions }

    /// Records `manifest`'s permissions as granted and writes the file (0600, atomically).
    public mutating func grant(_ manifest: PluginManifest) throws(PluginProblem) {
        try change { $0[manifest.name] = (manifest.version, manifest.permissions.hash, manifest.permissions) }
    }

    /// Forgets the grant of `name` and writes the file.
    public mutating func revoke(_ name: String) throws(PluginProblem) {
        try change { $0.removeValue(forKey: name) }
    }

    /// Applies `edit` to the grants as the file holds them now and writes them back, under a lock
    /// (`plugin-grants.toml.lock`): two `plugins allow` at once both land, and a grant removed
    /// meanwhile stays removed. A file that cannot be read is left alone rather than replaced by
    /// the one grant (it may hold others).
    private mutating func change(_ edit: (inout [String: (version: String, hash: String, permissions: PluginPermissions)]) -> Void)
        throws(PluginProblem) {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !folder.isEmpty { Folders.make(folder, mode: 0o700) }
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw PluginProblem("\(path).lock: cannot lock the grants (\(String(cString: strerror(errno))))") }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        load()
        if let problem {
            throw PluginProblem("\(problem); the grants file was left as it is: fix or remove it, then run the command again")
        }
        edit(&grants)
        try save()
    }

    private func save() throws(PluginProblem) {
        var text = "# The permissions granted to plugins (crescent plugins allow NAME). Each grant holds the hash of\n"
            + "# what was granted: a plugin asking for more, or a grant edited by hand, is asked again.\n"
        for name in grants.keys.sorted() {
            guard let grant = grants[name] else { continue }
            let permissions = grant.permissions
            text += "\n[\(name)]\nversion = \(Self.quoted(grant.version))\nhash = \(Self.quoted(grant.hash))\n"
            for (field, items) in [("read", permissions.read), ("write", permissions.write), ("net", permissions.net),
                                   ("exec", permissions.exec), ("env", permissions.env), ("services", permissions.services)] where !items.isEmpty {
                text += "\(field) = [" + items.map(Self.quoted).joined(separator: ", ") + "]\n"
            }
            if permissions.native { text += "native = true\n" }
        }
        // What is read back is bounded (PluginFile.manifestLimit): a larger file would void every
        // grant it holds, so the grant that would make it larger is not recorded.
        guard text.utf8.count <= PluginFile.manifestLimit else {
            throw PluginProblem("\(path): cannot record the grant: the grants file would hold \(text.utf8.count) bytes, past the \(PluginFile.manifestLimit >> 20) MiB it may hold (every grant in it would be void); the grants file was left as it is: a plugin asking for this many entries should ask for the folders that hold them")
        }
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PluginProblem("\(path): cannot write the grants (\(String(cString: strerror(errno))))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw PluginProblem("\(path): cannot write the grants (\(String(cString: strerror(errno))))")
        }
    }

    /// A TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML wants escaped.
    static func quoted(_ text: String) -> String {
        let json = Value.string(text).jsonText
        guard json.unicodeScalars.contains("\u{7F}") else { return json }
        var out = ""
        for scalar in json.unicodeScalars {
            if scalar == "\u{7F}" { out += "\\u007F" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }
}
