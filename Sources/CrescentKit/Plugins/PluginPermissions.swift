public import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

/// The `[permissions]` table of a plugin's manifest: what it asks for beyond its own folder
/// (readable) and its data folder `DATA/plugin-data/NAME` (writable).
///
/// ```toml
/// [permissions]
/// read  = ["~/Music", "/etc/hosts"]
/// write = ["~/Music/playlists"]
/// net   = ["api.example.com:443", "127.0.0.1:6600"]
/// exec  = ["git"]
/// env   = ["HOME", "LANG"]
/// collections = ["groceries"]
/// native = false
/// memory_mib = 64
/// ```
///
/// A plugin that asks for any of `read`, `write`, `net`, `exec`, `env`, `collections` or `native` runs only once
/// its user granted it (``PluginGrants``); `memory_mib` is a limit, not a grant.
public struct PluginPermissions: Sendable, Equatable {
    public var read: [String] = []
    public var write: [String] = []
    public var net: [String] = []
    public var exec: [String] = []
    public var env: [String] = []
    /// The scripts' store collections it may use (`*`: all of them); a plugin requiring `store`
    /// has collections of its own without asking (``PluginStore``).
    public var collections: [String] = []
    public var native = false
    /// The builtin services it requires that are asked like a grant: `http` and `feeds` reach any
    /// host and `session` its users' passwords, past any list; `process` and `files` reach only
    /// what `exec`, `read` and `write` grant (``PluginSandbox/serviceAccess(warn:)``), and are
    /// asked so that the user sees the plugin runs programs or works on files.
    public var services: [String] = []
    /// Its memory limit in MiB, when the manifest sets one.
    public var memoryMiB: Int?

    /// The default memory limit of a plugin, MiB.
    public static let defaultMemoryMiB = 64

    /// The lowest memory limit a manifest may set, MiB: below it no interpreter starts (python3
    /// needs 5 MiB of data to print "ok"; with `memory_mib = 1` a process plugin only "exited
    /// before answering 'initialize'"), so a lower value is a mistake, not a limit.
    public static let minimumMemoryMiB = 8

    /// The highest memory limit a manifest may set, MiB.
    public static let maximumMemoryMiB = 1 << 16

    public init() {}

    /// The fields of the table, for messages.
    static let fields = ["collections", "env", "exec", "memory_mib", "native", "net", "read", "write"]

    /// The builtin services whose use is a permission of its own.
    static let powerfulServices = ["feeds", "files", "http", "process", "session"]

    /// True when it asks for nothing that needs a grant.
    public var asksNothing: Bool {
        read.isEmpty && write.isEmpty && net.isEmpty && exec.isEmpty && env.isEmpty && collections.isEmpty && !native
            && services.isEmpty
    }

    /// Where the `read` and `write` entries lead (resolved, `~` expanded), in order; "" for one
    /// that leads where it reads (`~` expanded): most do, and the grants file, read up to 1 MiB,
    /// then holds no second copy of them.
    struct Targets: Sendable, Equatable {
        var read: [String]
        var write: [String]
    }

    /// Where its `read` and `write` entries lead now: what `crescent plugins allow` shows and a
    /// grant records.
    func targets() -> Targets {
        let home = getenv("HOME").map { String(cString: $0) }
        func target(_ entry: String) -> String {
            let expanded = Self.expanded(entry, home: home)
            let resolved = PluginSandbox.resolve(expanded)
            return resolved == expanded ? "" : resolved
        }
        return Targets(read: read.map(target), write: write.map(target))
    }

    /// Whether the granted paths cover `path`: the same path (a trailing `/` aside) or one inside
    /// a granted folder (`~/Music/playlists` within `~/Music`), and where it really leads now is
    /// within where that granted path led when it was granted (`targets`, in order; its
    /// resolution now where none was recorded). Read as written, `~/Music/../.ssh` or a symbolic
    /// link below a granted folder (one the plugin made where it may write, or one the user
    /// keeps there) was "asking for less", and an update took the whole file system without a
    /// question; and a granted link the plugin re-pointed later led its grant elsewhere: a path
    /// inside has no `.` or `..`, and it and a granted path
    /// itself must resolve within the recorded target. Checked at each start, so a link made
    /// or re-pointed later counts. The answer is nil when covered, else what to show: the path,
    /// and where it leads when that moved.
    static func paths(_ granted: [String], targets: [String]?, cover path: String) -> String? {
        func trimmed(_ path: String) -> String {
            var path = path
            while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
            return path
        }
        let asked = trimmed(path)
        let home = getenv("HOME").map { String(cString: $0) }
        let resolved = PluginSandbox.resolve(expanded(asked, home: home))
        var moved: String?
        for (index, grant) in granted.enumerated() {
            let folder = trimmed(grant)
            guard asked == folder
                    || (asked.hasPrefix(folder == "/" ? "/" : folder + "/")
                        && !asked.split(separator: "/").contains(where: { $0 == ".." || $0 == "." })) else { continue }
            let recorded = targets.flatMap { index < $0.count ? $0[index] : nil }
            let target = recorded.map { $0.isEmpty ? expanded(folder, home: home) : $0 } ?? PluginSandbox.resolve(expanded(folder, home: home))
            if PluginSandbox.isInside(resolved, target) { return nil }
            if asked == folder { moved = target }
        }
        return moved.map { "\(path) (leads to \(resolved) now; granted when it led to \($0))" } ?? path
    }

    /// Whether the granted `host:port` entries cover `address`: the same, or `*:PORT` for its port.
    static func addresses(_ granted: [String], cover address: String) -> Bool {
        granted.contains { grant in
            grant == address || (grant.hasPrefix("*:") && address.split(separator: ":").last.map { "*:" + $0 } == grant)
        }
    }

    /// What it asks for beyond `granted`, one entry per line (`read ~/Music`); `targets`, where
    /// the granted paths led when granted (nil: where they lead now).
    func beyond(_ granted: PluginPermissions, targets: Targets? = nil) -> [String] {
        var extra: [String] = []
        for item in read {
            if let shown = Self.paths(granted.read, targets: targets?.read, cover: item) { extra.append("read \(shown)") }
        }
        for item in write {
            if let shown = Self.paths(granted.write, targets: targets?.write, cover: item) { extra.append("write \(shown)") }
        }
        for item in net where !Self.addresses(granted.net, cover: item) { extra.append("net \(item)") }
        for (field, asked, had) in [("exec", exec, granted.exec), ("env", env, granted.env), ("requires", services, granted.services)] {
            let had = Set(had)   // a list of thousands of entries checked against another was quadratic
            for item in asked where !had.contains(item) { extra.append("\(field) \(item)") }
        }
        if !granted.collections.contains("*") {
            for item in collections where !granted.collections.contains(item) { extra.append("collections \(item)") }
        }
        if native && !granted.native { extra.append("native") }
        // A higher memory limit is more of the machine (a process plugin's RLIMIT_DATA went from
        // 64 MiB to 64 GiB in an update with no question).
        let limit = memoryMiB ?? Self.defaultMemoryMiB, grantedLimit = granted.memoryMiB ?? Self.defaultMemoryMiB
        if limit > grantedLimit { extra.append("memory_mib \(limit) (granted \(grantedLimit))") }
        return extra
    }

    /// The permissions in one canonical text (sorted lists), part of what a grant's hash signs.
    var canonicalText: String {
        func list(_ items: [String]) -> String { items.sorted().joined(separator: "\u{1F}") }
        // `collections` only when asked: the grants signed before it existed keep their hash.
        return (["read=" + list(read), "write=" + list(write), "net=" + list(net), "exec=" + list(exec),
                 "env=" + list(env), "native=\(native)", "services=" + list(services),
                 "memory_mib=\(memoryMiB ?? Self.defaultMemoryMiB)"] + (collections.isEmpty ? [] : ["collections=" + list(collections)]))
            .joined(separator: "\n")
    }

    /// One line per entry saying what it lets the plugin do (`crescent plugin check`,
    /// `crescent plugins allow`).
    public var explanation: [String] { explanation(targets: nil) }

    /// ``explanation``, each path shown leading to where `targets` says (``targets()`` read
    /// once, what a grant then records), else where it leads now.
    func explanation(targets: Targets?) -> [String] {
        var lines: [String] = []
        func shown(_ path: String, _ index: Int, _ recorded: [String]?) -> (entry: String, target: String) {
            guard let recorded, index < recorded.count else { return Self.shown(path) }
            let target = recorded[index]
            let expanded = Self.expanded(path, home: getenv("HOME").map { String(cString: $0) })
            return target.isEmpty || target == expanded || target + "/" == expanded ? (path, path) : ("\(path) (that is \(target))", target)
        }
        for (index, path) in read.enumerated() {
            let (entry, target) = shown(path, index, targets?.read)
            lines.append("read \(entry): may read the files in \(target) (and below it)")
        }
        for (index, path) in write.enumerated() {
            let (entry, target) = shown(path, index, targets?.write)
            lines.append("write \(entry): may create, change and delete the files in \(target) (and below it)")
        }
        for address in net {
            let port = Self.port(of: address).map(String.init) ?? "?"
            lines.append("net \(address): may connect to \(address.hasPrefix("*:") ? "any host on port \(port)" : address)"
                         + " (a process plugin: any host on port \(port), the kernel checks ports only)")
        }
        if !net.isEmpty {
            lines.append("net (a process plugin, and the programs a Lua plugin runs): name lookups over TCP port 53 of any host too; no UDP at all")
        }
        for program in exec {
            let found = PluginExecEntry.isInstalled(program)
                ? (program.hasPrefix("/") ? "" : " (found on \(PluginSandbox.confinedPath))")
                : " (not installed here: no such program\(program.hasPrefix("/") ? "" : " on " + PluginSandbox.confinedPath); "
                    + "running it fails until it is installed)"
            lines.append("exec \(program): may run \(program)\(found), confined to these permissions as the plugin is")
        }
        for name in env { lines.append("env \(name): may read the environment variable \(name)") }
        for name in collections {
            lines.append("collections \(name): may read, change and clear "
                         + (name == "*" ? "every store collection of your scripts" : "your scripts' store collection '\(name)'"))
        }
        if native { lines.append("native: may load C modules (Lua): FULL ACCESS, as much as you have") }
        for service in services {
            let what = switch service {
            case "process": exec.isEmpty ? "may use the process service, which runs only the programs exec grants: none"
                : "may run the programs exec grants (above) through the process service, and no other"
            case "files": "may use the files service, which reaches only what read and write grant (above), its own folder and its data folder"
            case "session": "may register users, log them in and out and try their passwords through the session service"
            default: "may connect to any host through the \(service) service"
            }
            lines.append("requires \(service): \(what)")
        }
        lines.append("memory_mib \(memoryMiB ?? Self.defaultMemoryMiB): its memory limit in MiB"
                     + (memoryMiB == nil ? " (the default)" : ""))
        lines.append("always: reads its own folder, writes its data folder DATA/plugin-data/NAME; nothing else")
        return lines
    }

    /// A granted path as the user is shown it: itself, and where it really leads when that is
    /// not what it reads as (`..`, a link): `~/../../etc (that is /etc)`, and that real folder.
    static func shown(_ path: String) -> (entry: String, target: String) {
        let home = getenv("HOME").map { String(cString: $0) }
        let expanded = expanded(path, home: home)
        let resolved = PluginSandbox.resolve(expanded)
        return resolved == expanded || resolved + "/" == expanded ? (path, path) : ("\(path) (that is \(resolved))", resolved)
    }

    /// The paths with `~` spelled out as the home folder `home`.
    static func expanded(_ path: String, home: String?) -> String {
        guard let home, path == "~" || path.hasPrefix("~/") else { return path }
        return home + path.dropFirst()
    }

    /// The port of a `net` entry (`host:port`).
    static func port(of address: String) -> UInt16? {
        guard let colon = address.lastIndex(of: ":") else { return nil }
        return UInt16(address[address.index(after: colon)...])
    }

    /// The host of a `net` entry, `*` for any.
    static func host(of address: String) -> String {
        guard let colon = address.lastIndex(of: ":") else { return address }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// True for a character that shows as nothing (or as a plain line break) where a grant is
    /// shown: zero-width spaces and joiners, the Arabic letter mark, line and paragraph
    /// separators, the byte order mark, the combining grapheme joiner, soft hyphens. They passed
    /// the control-character check in a manifest's entries and were printed raw in the question.
    /// Refused in permission entries only: a plugin's docs may
    /// hold them (an emoji's joiner).
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0xAD, 0x34F, 0x61C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B...0x180F, 0x200B...0x200D, 0x2028, 0x2029,
             0x2060...0x206F, 0x3164, 0xFE00...0xFE0F, 0xFEFF, 0xFFA0, 0xFFF0...0xFFFB, 0xE0000...0xE0FFF: true
        default: false
        }
    }

    /// A value as a manifest wrote it, for messages: JSON text showed `inf` and `nan` as `null`.
    static func described(_ value: Value) -> String {
        guard case .number(let number) = value, !number.isFinite else { return value.jsonText }
        return (number.isNaN ? "nan" : number < 0 ? "-inf" : "inf") + " (not a number of MiB)"
    }

    /// Reads the `[permissions]` table `value` of the manifest at `path`.
    ///
    /// - Throws: ``PluginProblem`` naming the manifest and the field (`permissions.read`).
    static func read(_ value: Value?, path: String, isGrant: Bool = false) throws(PluginProblem) -> PluginPermissions {
        var permissions = PluginPermissions()
        guard let value else { return permissions }
        func problem(_ field: String, _ message: String) -> PluginProblem {
            PluginProblem("\(path): field 'permissions\(field.isEmpty ? "" : "." + field)' \(message)")
        }
        guard case .object(let table) = value else { throw problem("", "must be a table ([permissions])") }
        if let unknown = table.keys.sorted().first(where: { !fields.contains($0) && !(isGrant && $0 == "services") }) {
            throw problem(unknown, "is not a permission (" + NameSuggestion.listing("permissions", fields, suggesting: NameSuggestion.closest(to: unknown, among: fields)) + ")")
        }
        func strings(_ field: String, example: String, valid: (String) -> String?) throws(PluginProblem) -> [String] {
            guard let value = table[field] else { return [] }
            guard let items = value.arrayValue else { throw problem(field, "must be an array of strings, e.g. \(example)") }
            var result: [String] = []
            var seen = NameSet()
            for item in items {
                guard let text = item.stringValue else { throw problem(field, "must hold strings, got \(item.typeName); e.g. \(example)") }
                // What a person grants is what they were shown: nothing may change how it prints.
                if let hazard = displayHazard(in: text) {
                    throw problem(field, "holds the control character \(codePoint(hazard)) in \"\(visible(text))\", "
                                  + "which would change what a terminal shows of it; write it plainly")
                }
                if let hidden = text.unicodeScalars.first(where: Self.isInvisible) {
                    throw problem(field, "holds the invisible character \(codePoint(hidden)) in \"\(visible(text))\", "
                                  + "which a person granting it would not see; write it plainly")
                }
                if let why = valid(text) { throw problem(field, "\(why), got \"\(visible(text))\"; e.g. \(example)") }
                guard seen.insert(text) else { throw problem(field, "names \"\(visible(text))\" twice") }
                result.append(text)
            }
            return result
        }
        let isPath: (String) -> String? = { text in
            if text.utf8.contains(0) { return "holds a NUL character" }
            return text.hasPrefix("/") || text == "~" || text.hasPrefix("~/") ? nil : "must be an absolute path or start with ~/"
        }
        permissions.read = try strings("read", example: "[\"~/Music\", \"/etc/hosts\"]", valid: isPath)
        permissions.write = try strings("write", example: "[\"~/Music/playlists\"]", valid: isPath)
        permissions.net = try strings("net", example: "[\"api.example.com:443\", \"*:443\"]") { text in
            guard let port = Self.port(of: text), port > 0 else { return "must be host:port with a port from 1 to 65535" }
            let host = Self.host(of: text)
            guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "\0" }) else { return "must be host:port with a host name, an address or *" }
            return nil
        }
        permissions.exec = try strings("exec", example: "[\"git\"]") { text in
            guard !text.isEmpty, !text.contains(where: { $0 == " " || $0 == "\0" || $0 == "\t" }) else {
                return "must be a program's name or absolute path (no spaces, no arguments)"
            }
            if text.contains("/") && !text.hasPrefix("/") { return "must be a program's name (found on PATH) or an absolute path" }
            // Recorded grants keep what was granted then; only a manifest is held to the rules.
            return isGrant ? nil : PluginExecEntry.problem(text, manifest: path)
        }
        permissions.env = try strings("env", example: "[\"HOME\", \"LANG\"]") { text in
            let valid = text.unicodeScalars.first.map { $0 == "_" || ("A"..."Z").contains($0) || ("a"..."z").contains($0) } ?? false
                && text.unicodeScalars.allSatisfy { $0 == "_" || ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
            return valid ? nil : "must be an environment variable's name ([A-Za-z_][A-Za-z0-9_]*)"
        }
        permissions.collections = try strings("collections", example: "[\"groceries\"] (or [\"*\"] for all)") { text in
            if text == "*" { return nil }
            if text.isEmpty || text.utf8.count > 200 || text.utf8.contains(0) { return "must be a store collection's name (1 to 200 bytes, no NUL) or *" }
            if text.hasPrefix(PluginStore.reservedPrefix) { return "must name a collection of your scripts (\(PluginStore.reservedPrefix) names are plugins' own)" }
            return nil
        }
        if let native = table["native"] {
            guard let flag = native.boolValue else { throw problem("native", "must be true or false, got \(native.typeName)") }
            permissions.native = flag
        }
        if isGrant {
            permissions.services = try strings("services", example: "[\"process\"]") { text in
                powerfulServices.contains(text) ? nil : "must name one of \(powerfulServices.joined(separator: ", "))"
            }
        }
        if let memory = table["memory_mib"] {
            let lowest = isGrant ? 1 : Int64(minimumMemoryMiB)
            guard let mib = memory.integerValue, mib >= lowest, mib <= Int64(maximumMemoryMiB) else {
                throw problem("memory_mib", "must be a whole number of MiB from \(minimumMemoryMiB) to \(maximumMemoryMiB) "
                              + "(below \(minimumMemoryMiB) MiB no interpreter starts: python3 needs 5), got \(Self.described(memory))")
            }
            permissions.memoryMiB = Int(mib)
        }
        return permissions
    }
}
