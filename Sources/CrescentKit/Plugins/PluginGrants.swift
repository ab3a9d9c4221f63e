public import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

/// The permissions the user granted to plugins, kept in `DATA/plugin-grants.toml`: one section
/// per plugin with the lists granted, the plugin folder they were granted to and its owner,
/// where each granted path led when it was granted (`read_targets`, `write_targets`), and the
/// hash of all that, signed with the user's key (``PluginGrantKey``).
///
/// ```toml
/// [music]
/// version = "1.2.0"
/// folder = "/home/ann/.local/share/crescent/plugins/music"
/// owner = 1000
/// hash = "5d41402abc4b2a76b9719d911017c592..."
/// read = ["~/Music"]
/// read_targets = ["/home/ann/Music"]
/// net = ["127.0.0.1:6600"]
/// ```
///
/// Each plugin folder has its own grant: a second folder with a plugin of the same name (a
/// cloned project's `plugins/music` beside the installed one) is a second section, `[music-2]`
/// (a plugin name holds no `-`), and granting one leaves the other's grant as it was. A file
/// from before, one section per name, reads the same.
///
/// A plugin runs when what its manifest asks for is within its grant; an update that asks for
/// more is refused until `crescent plugins allow NAME` records the new grant. A grant holds only
/// for the plugin in the folder it was granted to, as the user who granted it made it (a grants
/// file from elsewhere grants nothing), and only while each granted path leads where it led when
/// the user saw it (a link re-pointed since asks again).
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
    /// The grants by plugin name, one for each folder granted.
    private var grants: [String: [Grant]] = [:]

    /// One plugin's grant as recorded.
    struct Grant: Sendable {
        var version: String
        /// The plugin folder it was granted to, resolved, and that folder's owner then.
        var folder: String
        var owner: UInt32
        var permissions: PluginPermissions
        /// Where each `read` and `write` entry led when it was granted (resolved), in order.
        var targets: PluginPermissions.Targets

        /// What the signed hash covers.
        func signedText(name: String) -> String {
            func pairs(_ entries: [String], _ targets: [String]) -> String {
                zip(entries, targets).map { $0 + "\u{1E}" + $1 }.sorted().joined(separator: "\u{1F}")
            }
            return "crescent plugin grant 2\nplugin=\(name)\nfolder=\(folder)\nowner=\(owner)\nuser=\(getuid())\n"
                + permissions.canonicalText
                + "\nread_targets=" + pairs(permissions.read, targets.read) + "\nwrite_targets=" + pairs(permissions.write, targets.write)
        }
    }
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
            // No key: no grant was made by this user here, so none in the file holds.
            guard let key = PluginGrantKey.load() else { return }
            for (sectionName, section) in sections {
                // `music-2`: the second folder's grant of plugin `music`.
                let name = sectionName.split(separator: "-", maxSplits: 1).first.map(String.init) ?? sectionName
                guard case .object = section,
                      let recorded = try? PluginPermissions.read(Self.permissionsTable(section), path: path, isGrant: true),
                      let folder = section["folder"].stringValue,
                      let owner = section["owner"].integerValue.flatMap({ UInt32(exactly: $0) }),
                      let read = Self.targets(section["read_targets"], count: recorded.read.count),
                      let write = Self.targets(section["write_targets"], count: recorded.write.count) else { continue }
                let grant = Grant(version: section["version"].stringValue ?? "?", folder: folder, owner: owner,
                                  permissions: recorded, targets: .init(read: read, write: write))
                // A grant edited by hand, or made by another user, elsewhere or by an older
                // release (unsigned), grants nothing.
                guard section["hash"].stringValue == key.sign(grant.signedText(name: name)) else { continue }
                grants[name, default: []].removeAll { $0.folder == grant.folder }
                grants[name, default: []].append(grant)
            }
        } catch {
            problem = error.message
        }
    }

    /// The targets of `count` entries (none recorded: each leads where it reads), nil when the
    /// field holds anything else.
    private static func targets(_ value: Value, count: Int) -> [String]? {
        if case .null = value { return Array(repeating: "", count: count) }
        guard let items = value.arrayValue else { return nil }
        let strings = items.compactMap(\.stringValue)
        return strings.count == items.count && strings.count == count ? strings : nil
    }

    /// The resolved plugin folder of `manifest` and its owner now.
    static func identity(of manifest: PluginManifest) -> (folder: String, owner: UInt32) {
        let folder = PluginSandbox.resolve(manifest.folder)
        var status = stat()
        return (folder, stat(folder, &status) == 0 ? status.st_uid : UInt32.max)
    }

    /// The data folder: `dataDirectory`, or the default one for none and `:memory:`.
    static func dataFolder(_ dataDirectory: String?) -> String {
        dataDirectory.flatMap { $0 == ":memory:" ? nil : $0 } ?? (try? StoreSettings.defaultDataFolder()) ?? "."
    }

    private static func permissionsTable(_ section: Value) -> Value {
        guard case .object(var fields) = section else { return .object([:]) }
        for field in ["hash", "version", "folder", "owner", "read_targets", "write_targets"] { fields[field] = nil }
        return .object(fields)
    }

    /// What `manifest` asks compared with its grant.
    public func status(of manifest: PluginManifest) -> Status {
        let asked = manifest.permissions
        if asked.asksNothing { return .notNeeded }
        // A grant to a plugin of that name in another folder (a cloned project's copy, a grants
        // file brought along) is no grant of this one.
        let identity = Self.identity(of: manifest)
        guard let grant = grants[manifest.name]?.first(where: { $0.folder == identity.folder && $0.owner == identity.owner }) else {
            return .notGranted(missing: asked.beyond(PluginPermissions()), update: false)
        }
        let missing = asked.beyond(grant.permissions, targets: grant.targets)
        return missing.isEmpty ? .granted : .notGranted(missing: missing, update: true)
    }

    /// The permissions granted to plugin `name` in `folder` (resolved), if any.
    public func granted(_ name: String, folder: String) -> PluginPermissions? {
        grants[name]?.first { $0.folder == folder }?.permissions
    }

    /// What a person is shown of a plugin before granting it: its folder resolved, that
    /// folder's owner, and where each `read` and `write` entry leads, read once. The grant
    /// records this, not what the paths lead to when the answer comes: a link re-pointed while
    /// the question waited was recorded, and the plugin read or wrote a place never shown
    /// (attack new27g D1).
    public struct Snapshot: Sendable, Equatable {
        let folder: String
        let owner: UInt32
        let targets: PluginPermissions.Targets

        /// What `manifest`'s folder and paths are now.
        public init(of manifest: PluginManifest) {
            let identity = PluginGrants.identity(of: manifest)
            folder = identity.folder
            owner = identity.owner
            targets = manifest.permissions.targets()
        }

        /// What changed from `self` (shown) to `now`, one phrase each; empty when nothing did.
        func changes(to now: Snapshot, of permissions: PluginPermissions) -> [String] {
            let home = getenv("HOME").map { String(cString: $0) }
            func place(_ entry: String, _ target: String) -> String {
                target.isEmpty ? PluginPermissions.expanded(entry, home: home) : target
            }
            var changes: [String] = []
            if folder != now.folder || owner != now.owner {
                changes.append("its folder was \(folder) (owner \(owner)) and is \(now.folder) (owner \(now.owner)) now")
            }
            for (field, entries, before, after) in [("read", permissions.read, targets.read, now.targets.read),
                                                    ("write", permissions.write, targets.write, now.targets.write)] {
                for (index, entry) in entries.enumerated() where index < before.count && index < after.count && before[index] != after[index] {
                    changes.append("\(field) \(entry) led to \(place(entry, before[index])) and leads to \(place(entry, after[index])) now")
                }
            }
            return changes
        }
    }

    /// Records `manifest`'s permissions as granted, to the plugin in its folder, with where its
    /// paths lead (what `plugins allow` or the question showed: `shown`, else now), and writes
    /// the file (0600, atomically). When `shown` is given and anything in it changed since (a
    /// link re-pointed while the person read the question), nothing is recorded.
    public mutating func grant(_ manifest: PluginManifest, shown: Snapshot? = nil) throws(PluginProblem) {
        let key = try PluginGrantKey.loadOrMake()
        let now = Snapshot(of: manifest)
        if let shown {
            let changes = shown.changes(to: now, of: manifest.permissions)
            if !changes.isEmpty {
                throw PluginProblem("plugin '\(manifest.name)': what you were shown changed before your answer: "
                    + changes.joined(separator: "; ") + "; nothing was granted: run crescent plugins allow \(manifest.name) "
                    + "to be shown where it leads now")
            }
        }
        let recorded = shown ?? now
        let grant = Grant(version: manifest.version, folder: recorded.folder, owner: recorded.owner,
                          permissions: manifest.permissions, targets: recorded.targets)
        // Only this folder's grant is replaced: a same-name plugin elsewhere keeps its own.
        try change(key) { grants in
            grants[manifest.name, default: []].removeAll { $0.folder == grant.folder }
            grants[manifest.name, default: []].append(grant)
        }
    }

    /// Forgets the grant of plugin `name` in `folder` (resolved; nil: in every folder) and
    /// writes the file.
    public mutating func revoke(_ name: String, folder: String?) throws(PluginProblem) {
        try change(PluginGrantKey.load()) { grants in
            grants[name]?.removeAll { folder == nil || $0.folder == folder }
            if grants[name]?.isEmpty == true { grants[name] = nil }
        }
    }

    /// Applies `edit` to the grants as the file holds them now and writes them back, under a lock
    /// (`plugin-grants.toml.lock`): two `plugins allow` at once both land, and a grant removed
    /// meanwhile stays removed. A file that cannot be read is left alone rather than replaced by
    /// the one grant (it may hold others).
    private mutating func change(_ key: PluginGrantKey?, _ edit: (inout [String: [Grant]]) -> Void) throws(PluginProblem) {
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
        try save(key)
    }

    /// Writes the grants (only those that held when read, so those signed with `key`; none
    /// without a key).
    private func save(_ key: PluginGrantKey?) throws(PluginProblem) {
        var text = "# The permissions granted to plugins (crescent plugins allow NAME). Each grant holds the hash of\n"
            + "# what was granted, signed with your key (grant-key in ~/.local/share/crescent): a plugin asking for more,\n"
            + "# a grant edited by hand or brought from elsewhere, or a granted link leading elsewhere now, is asked again.\n"
        let sections = grants.keys.sorted().flatMap { name in
            (grants[name] ?? []).sorted { $0.folder < $1.folder }.enumerated().map { index, grant in
                (name: name, section: index == 0 ? name : "\(name)-\(index + 1)", grant: grant)
            }
        }
        for (name, section, grant) in sections {
            guard let key else { continue }
            let permissions = grant.permissions
            text += "\n[\(section)]\nversion = \(Self.quoted(grant.version))\nfolder = \(Self.quoted(grant.folder))\nowner = \(grant.owner)\n"
                + "hash = \(Self.quoted(key.sign(grant.signedText(name: name))))\n"
            // Targets only where one leads elsewhere than it reads ("" for the others).
            let targets = [grant.targets.read, grant.targets.write].map { $0.allSatisfy(\.isEmpty) ? [] : $0 }
            for (field, items) in [("read", permissions.read), ("read_targets", targets[0]), ("write", permissions.write),
                                   ("write_targets", targets[1]), ("net", permissions.net),
                                   ("exec", permissions.exec), ("env", permissions.env), ("collections", permissions.collections),
                                   ("services", permissions.services)] where !items.isEmpty {
                text += "\(field) = [" + items.map(Self.quoted).joined(separator: ", ") + "]\n"
            }
            if permissions.native { text += "native = true\n" }
            if let memory = permissions.memoryMiB { text += "memory_mib = \(memory)\n" }
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
