public import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

/// A plugin folder's `plugin.toml`, read and checked before anything of the plugin runs.
///
/// Every mistake names the manifest's path and the field (`plugins/places/plugin.toml: field
/// 'kind' must be "lua" or "process", got "ruby"`), so a broken plugin is reported once and
/// skipped while the host and the other plugins run on.
///
/// ```toml
/// name = "places"
/// version = "1.0.0"
/// crescent = ">=0.1.0, <1.0.0"
/// kind = "lua"
/// main = "main.lua"
/// services = ["places"]
/// requires = ["location", "store"]
/// ```
public struct PluginManifest: Sendable {
    /// How the plugin runs.
    public enum Kind: Sendable, Equatable {
        /// A Lua file run in a VM of its own (`main`, relative to the folder).
        case lua(main: String)
        /// A program speaking JSON-RPC on its stdin and stdout (`command`, run in the folder).
        case process(command: [String])

        /// `lua` or `process`, as the manifest writes it.
        public var name: String {
            switch self {
            case .lua: "lua"
            case .process: "process"
            }
        }
    }

    /// The file name looked for in a plugin folder.
    public static let fileName = "plugin.toml"

    public let name: String
    public let version: String
    /// The host versions it works with, as written.
    public let crescent: String
    public let description: String
    public let kind: Kind
    /// The services it provides (known before it runs).
    public let services: [String]
    /// The services it uses; a Lua plugin sees only these.
    public let requires: [String]
    /// Its settings, each a key of its section of `crescent.toml`.
    public let settings: [PluginSetting]
    /// What it asks for beyond its own folders (`[permissions]`).
    public let permissions: PluginPermissions
    /// The plugin folder.
    public let folder: String

    /// The manifest's path, for messages.
    public var path: String { Self.path(in: folder) }

    /// What is wrong when a started plugin declared the services `declared` (`by` its main file,
    /// or its answer to `initialize`): the manifest promises exactly the services it provides.
    func mismatch(declared: [String], by source: String) -> PluginProblem? {
        let declaredNames = NameSet(declared), listed = NameSet(services)
        if let missing = services.first(where: { !declaredNames.contains($0) }) {
            let unlisted = declared.filter { !listed.contains($0) }
            let said: String
            if unlisted.isEmpty {
                let names = declared.isEmpty ? "none" : declared.map { "'\($0)'" }.joined(separator: ", ")
                said = "it declared \(names)"
            } else if let closest = NameSuggestion.closest(to: missing, among: unlisted) {
                said = "it declared '\(closest)': did you mean service(\"\(missing)\", …), or \"\(closest)\" in the manifest?"
            } else {
                let names = unlisted.map { "'\($0)'" }.joined(separator: ", ")
                said = "it declared \(names), which the manifest does not list"
            }
            return PluginProblem("\(source) did not declare service '\(missing)', which \(path) promises (\(said))")
        }
        if let extra = declared.first(where: { !listed.contains($0) }) {
            return PluginProblem("\(source) declared service '\(extra)', which \(path) does not list in field 'services'")
        }
        return nil
    }

    /// True when this manifest's version precedes `other`'s (semver precedence): installing it
    /// over `other` is a downgrade.
    public func isOlder(than other: PluginManifest) -> Bool {
        guard let mine = SemanticVersion(version), let theirs = SemanticVersion(other.version) else { return false }
        return mine < theirs
    }

    static func path(in folder: String) -> String {
        folder.hasSuffix("/") ? folder + fileName : folder + "/" + fileName
    }

    /// Reads and checks the manifest in `folder` for a host of version `hostVersion`.
    ///
    /// - Throws: ``PluginProblem`` naming the manifest and the field that is wrong.
    public static func load(folder: String, hostVersion: String) throws(PluginProblem) -> PluginManifest {
        let path = path(in: folder)
        // `--plugin nope`: the folder itself is missing, which its manifest's path did not say.
        guard access(folder, F_OK) == 0 else { throw PluginProblem("\(folder): no such folder (a plugin is a folder that holds a plugin.toml)") }
        guard access(path, R_OK) == 0 else { throw PluginProblem("\(path): cannot read the manifest (a plugin folder holds a plugin.toml)") }
        let fields = try PluginFile.tables(path, what: "the plugin's manifest", followLinks: false)
        return try ManifestReader(path: path, fields: fields).manifest(folder: folder, hostVersion: hostVersion)
    }
}

/// One setting a plugin declares (`[settings.radius]`).
public struct PluginSetting: Sendable {
    /// The types a setting may have.
    public enum Kind: String, Sendable, CaseIterable {
        case string, number, integer, boolean, array, table

        /// True when `value` has this type (an integer is a number too).
        func accepts(_ value: Value) -> Bool {
            switch (self, value) {
            case (.string, .string), (.integer, .integer), (.number, .integer), (.number, .number),
                 (.boolean, .bool), (.array, .array), (.table, .object): true
            default: false
            }
        }
    }

    public let key: String
    public let kind: Kind
    public let defaultValue: Value?
    public let doc: String
}

/// Why a plugin cannot be used: its manifest, its entry, its start. The message names the file
/// and the field or line.
public struct PluginProblem: Error, CustomStringConvertible, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// Reads the fields of one manifest, each mistake naming the path and the field.
private struct ManifestReader {
    let path: String
    let fields: Fields

    static let knownFields = ["command", "crescent", "description", "kind", "main", "name", "permissions", "requires",
                              "services", "settings", "version"]

    /// The fields of one `[settings.KEY]` table.
    static let settingFields = ["type", "default", "doc"]

    /// One of `knownFields`, compared in turn: no set to build and hash into at start-up.
    static func isKnown(_ field: String) -> Bool { knownFields.contains(field) }

    func manifest(folder: String, hostVersion: String) throws(PluginProblem) -> PluginManifest {
        if fields.keys.contains(where: { !Self.isKnown($0) }),
           let unknown = fields.keys.sorted().first(where: { !Self.isKnown($0) }) {
            let closest = NameSuggestion.closest(to: unknown, among: Self.knownFields)
            throw problem(unknown, "is not a manifest field (" + NameSuggestion.listing("fields", Self.knownFields, suggesting: closest) + ")")
        }
        let name = try string("name")
        guard PluginNames.isValid(name) else {
            throw problem("name", "must match \(PluginNames.rule), got \(PluginNames.shown(name)); choose a short lower-case name such as \"my_plugin\"")
        }
        guard !PluginNames.reserved.contains(name) else {
            throw problem("name", "is '\(name)', a name crescent uses itself (a builtin plugin or service, or a section of crescent.toml it reads, whose settings would go to the plugin); choose another name")
        }
        let version = try string("version")
        guard SemanticVersion(version) != nil else { throw problem("version", "must be a version like 1.0.0 (Semantic Versioning: MAJOR.MINOR.PATCH, numbers without leading zeros), got \"\(visible(version))\"") }
        let crescent = try string("crescent")
        let range: VersionRange
        do throws(VersionRange.RangeError) {
            range = try VersionRange(crescent)
        } catch {
            throw problem("crescent", error.message)
        }
        if let host = SemanticVersion(hostVersion), !range.contains(host) {
            throw problem("crescent", "the plugin needs crescent \(crescent); this is crescent \(hostVersion)")
        }
        let kind = try self.kind(folder: folder)
        let services = try names("services", required: true)
        guard !services.isEmpty else { throw problem("services", "must name at least one service") }
        let requires = try names("requires", required: false)
        // Starting the plugin would touch its own services while it starts.
        let provided = NameSet(services)
        if let own = requires.first(where: provided.contains) {
            throw problem("requires", "names service '\(own)', which this plugin provides itself: a plugin cannot require its own services (remove it from requires)")
        }
        var permissions = try PluginPermissions.read(fields["permissions"], path: path)
        permissions.services = requires.filter(PluginPermissions.powerfulServices.contains)
        // Granting it to a plugin that cannot use it would be a question asked for nothing.
        if !permissions.collections.isEmpty {
            guard case .lua = kind else {
                throw problem("permissions.collections", "is for Lua plugins, whose services.store reaches the scripts' collections; a process plugin has no store (remove it)")
            }
            guard requires.contains("store") else {
                throw problem("permissions.collections", "needs \"store\" in requires: the scripts' collections are reached through services.store (add it to requires)")
            }
        }
        let description = fields["description"]?.stringValue ?? ""
        if let hazard = displayHazard(in: description, allowingLines: true) {
            throw problem("description", "holds the control character \(codePoint(hazard)), which would change what a "
                          + "terminal shows where the description is printed; write it plainly")
        }
        return PluginManifest(name: name, version: version, crescent: crescent,
                              description: description,
                              kind: kind, services: services, requires: requires,
                              settings: try settings(), permissions: permissions,
                              folder: folder)
    }

    private func problem(_ field: String, _ message: String) -> PluginProblem {
        PluginProblem("\(path): field '\(field)' \(message)")
    }

    private func string(_ field: String) throws(PluginProblem) -> String {
        guard let value = fields[field] else { throw problem(field, "is missing") }
        guard let text = value.stringValue else { throw problem(field, "must be a string, got \(value.typeName)") }
        return text
    }

    private func kind(folder: String) throws(PluginProblem) -> PluginManifest.Kind {
        switch try string("kind") {
        case "lua":
            // Taken in silence, a field only the other kind reads hid a manifest copied from a
            // process plugin, or a wrong kind.
            if fields["command"] != nil {
                throw problem("command", "is read only by a process plugin (kind = \"process\"), and this one's kind is \"lua\", which runs main: "
                              + "remove command, or set kind = \"process\"")
            }
            let main = fields["main"] == nil ? "main.lua" : try string("main")
            try checkInside(main, folder: folder)
            let file = folder + "/" + main
            guard access(file, R_OK) == 0 else {
                let near = ScriptSource.nearFile(file).map { "; did you mean main = \"\($0)\"?" } ?? ""
                throw problem("main", "names \(file), which cannot be read\(near)")
            }
            return .lua(main: main)
        case "process":
            guard let value = fields["command"] else { throw problem("command", "is missing (a process plugin runs it, e.g. [\"python3\", \"main.py\"])") }
            guard let items = value.arrayValue, !items.isEmpty,
                  case let words = items.compactMap(\.stringValue), words.count == items.count, !words[0].isEmpty
            else { throw problem("command", "must be a non-empty array of strings, e.g. [\"python3\", \"main.py\"]") }
            // A C string ends at a NUL: the program would run with the word cut short.
            if let index = words.firstIndex(where: { $0.utf8.contains(0) }) {
                throw problem("command", "item \(index + 1) holds a NUL character (\\u0000), which a command cannot pass; remove it")
            }
            if fields["main"] != nil {
                throw problem("main", "is read only by a Lua plugin (kind = \"lua\"), and this one's kind is \"process\", which runs command: "
                              + "remove main, or set kind = \"lua\"")
            }
            return .process(command: words)
        case let other:
            throw problem("kind", "must be \"lua\" or \"process\", got \"\(other)\"")
        }
    }

    /// `main` is a file of the plugin's own folder: the host reads and runs it before any
    /// permission applies, so a path out of the folder (absolute, `..`, a link leading out) would
    /// make it read (and show in a syntax error) any file of the user's.
    private func checkInside(_ main: String, folder: String) throws(PluginProblem) {
        if main.isEmpty || main.utf8.contains(0) { throw problem("main", "must name a Lua file in the plugin folder, e.g. \"main.lua\"") }
        if main.hasPrefix("/") || main.split(separator: "/").contains("..") {
            throw problem("main", "must be a path inside the plugin folder (no leading / and no ..), got \"\(main)\"")
        }
        let root = PluginSandbox.resolve(folder)
        let resolved = PluginSandbox.resolve(folder + "/" + main)
        guard resolved != root, PluginSandbox.isInside(resolved, root) else {
            throw problem("main", "names \(main), which leads out of the plugin folder (to \(resolved)); main must be a file inside it")
        }
    }

    private func names(_ field: String, required: Bool) throws(PluginProblem) -> [String] {
        guard let value = fields[field] else {
            if required { throw problem(field, "is missing") }
            return []
        }
        guard let items = value.arrayValue else { throw problem(field, "must be an array of names, got \(value.typeName)") }
        var names: [String] = []
        var seen = NameSet()
        for item in items {
            guard let name = item.stringValue, PluginNames.isValid(name) else {
                throw problem(field, "must hold names matching \(PluginNames.rule), got \(item.stringValue.map(PluginNames.shown) ?? item.jsonText)")
            }
            guard seen.insert(name) else { throw problem(field, "names '\(name)' twice") }
            names.append(name)
        }
        return names
    }

    private func settings() throws(PluginProblem) -> [PluginSetting] {
        guard let value = fields["settings"] else { return [] }
        guard case .object(let table) = value else { throw problem("settings", "must be a table of [settings.KEY] tables") }
        var settings: [PluginSetting] = []
        for key in table.keys.sorted() {
            // Made for a message only: every manifest read at start-up would pay for it.
            func field(_ part: String = "") -> String { "settings." + key + part }
            guard case .object(let spec) = table[key] ?? .null else { throw problem(field(), "must be a table with type, default and doc") }
            // Before the type: a misspelled `type` would otherwise read as a missing one.
            if let unknown = spec.keys.sorted().first(where: { !Self.settingFields.contains($0) }) {
                let closest = NameSuggestion.closest(to: unknown, among: Self.settingFields)
                throw problem(field("." + unknown), "is not a field of a setting (" + NameSuggestion.listing("fields", Self.settingFields, suggesting: closest) + ")")
            }
            guard let typeName = spec["type"]?.stringValue, let kind = PluginSetting.Kind(rawValue: typeName) else {
                let kinds = PluginSetting.Kind.allCases.map(\.rawValue)
                let closest = spec["type"]?.stringValue.flatMap { NameSuggestion.closest(to: $0, among: kinds) }
                throw problem(field(".type"), "must be one of \(kinds.joined(separator: ", "))" + (closest.map { "; did you mean '\($0)'?" } ?? ""))
            }
            if let defaultValue = spec["default"], !kind.accepts(defaultValue) {
                throw problem(field(".default"), "must be \(kind.rawValue), got \(defaultValue.typeName)")
            }
            settings.append(PluginSetting(key: key, kind: kind, defaultValue: spec["default"],
                                          doc: spec["doc"]?.stringValue ?? ""))
        }
        return settings
    }
}

/// The one syntax of plugin and service names.
enum PluginNames {
    /// Names a plugin may not take: the builtin plugin's and its services', and the sections of
    /// crescent.toml the host reads. A plugin gets the section of its own name as its settings,
    /// so one named `store` read `[store] path` with its PostgreSQL password, and one named
    /// `standard` was listed beside the builtin plugin.
    static let reserved: [String] = Array(StandardServices.settingKeys.keys) + Array(ConfigFile.hostSections.keys)
        + ["standard", "builtin", "crescent"]

    /// The longest name, in characters. A name is a folder name, a part of the data folder's
    /// and the grants file's entries, and a Lua global: a 300-character name was taken, and
    /// `plugins install` then failed with "an error the system did not name (NSCocoaErrorDomain
    /// 514)" where the installed folder's hidden staging name passed the file system's 255 bytes.
    static let maximumLength = 64

    /// The rule, as messages state it.
    static let rule = "[a-z][a-z0-9_]*, at most \(maximumLength) characters"

    /// `[a-z][a-z0-9_]*`, at most ``maximumLength`` characters.
    static func isValid(_ name: String) -> Bool {
        guard name.utf8.count <= maximumLength else { return false }
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// A name as messages show it: quoted and escaped, and past ``maximumLength`` its start and
    /// its length (a 300-character name is not printed whole).
    static func shown(_ name: String) -> String {
        let count = name.count
        guard count > maximumLength else { return "\"\(visible(name))\"" }
        return "\"\(visible(String(name.prefix(24))))…\" (\(count) characters)"
    }
}
