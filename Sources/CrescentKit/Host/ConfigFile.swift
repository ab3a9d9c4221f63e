import Model
#if canImport(Glibc)
import Glibc
#endif

/// The TOML config file: `--config FILE`, else `crescent.toml` in the current folder if present.
/// Each top-level table is one plugin's section. Read once; its text stays at hand so messages
/// about it can name `file:line`.
struct ConfigFile {
    static let defaultName = "crescent.toml"

    /// The file's name as given (or the default).
    let name: String
    /// The sections by name; empty when there is no file and none was asked for.
    let sections: Fields
    /// The file's UTF-8 text, made a string and split into lines only when a message needs a
    /// line number (every plugin manifest is read at start-up, and that costs more than parsing).
    private let bytes: [UInt8]?

    /// Reads and parses the file at `path` (or `crescent.toml`, which may be missing).
    static func load(_ path: String?) throws(HostSetupError) -> ConfigFile {
        let file = path ?? defaultName
        guard access(file, F_OK) == 0 || path != nil else { return ConfigFile(name: file, sections: [:], bytes: nil) }
        // Only a regular file of sensible size: `--config /dev/zero` or a FIFO would never end.
        let bytes: [UInt8]
        do throws(RegularFile.Refusal) {
            bytes = try RegularFile.read(file, limit: sizeLimit)
        } catch .unreadable(let message) {
            throw HostSetupError(description: "cannot open config file '\(file)' (\(message))")
        } catch {
            throw HostSetupError(description: "cannot use config file '\(file)': \(error.reason)")
        }
        return try parse(bytes: bytes, name: file)
    }

    /// The most a config file may hold (a few KiB is usual).
    static let sizeLimit = 16 << 20

    /// Parses `bytes`, the contents of the file `name`, checking first that they are UTF-8.
    static func parse(bytes: [UInt8], name file: String) throws(HostSetupError) -> ConfigFile {
        // TOML is UTF-8: a file that is not would have its bytes replaced, and keys collide.
        guard isASCII(bytes) || String(validating: bytes, as: UTF8.self) != nil else {
            var line = 1
            for part in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                if String(validating: part, as: UTF8.self) == nil { break }
                line += 1
            }
            throw HostSetupError(description: "\(file):\(line): the file is not valid UTF-8 (save it as UTF-8)")
        }
        return try parse(validUTF8: bytes, name: file)
    }

    /// Parses `text`, the contents of the file `name` (messages name it `file:line`).
    static func parse(_ text: String, name file: String) throws(HostSetupError) -> ConfigFile {
        try parse(validUTF8: Array(text.utf8), name: file)
    }

    /// Parses `bytes`, the contents of the file `name` checked to be UTF-8 (messages name it
    /// `file:line`).
    private static func parse(validUTF8 bytes: [UInt8], name file: String) throws(HostSetupError) -> ConfigFile {
        let sections: Fields
        do {
            sections = try TOMLReader.read(validUTF8: bytes, maxDepth: maxDepth)
        } catch {
            throw HostSetupError(description: "\(file):\(error.line): \(error.message)")
        }
        return ConfigFile(name: file, sections: sections, bytes: bytes)
    }

    /// Sections the host itself reads, whatever the plugins, with their keys (`Host.hostSettings`
    /// and `PluginsSection` read them).
    static let hostSections: [String: [String]] = [
        "host": ["listen"],
        "plugins": ["disabled", "memory_limit", "call_timeout", "allow_unsandboxed"],
    ]

    /// What is wrong in the file that can be told without starting anything: sections no plugin
    /// reads and keys a section does not have (warnings), each naming `file:line`, the section or
    /// key and what it may be. A section's unknown keys make one warning, however many there are.
    func warnings(plugins: [any Plugin]) -> [String] {
        guard !sections.isEmpty else { return [] }
        var known: [String: [String]?] = [:]
        for plugin in plugins {
            known[plugin.name] = known[plugin.name] ?? .some(nil)
            for (section, keys) in plugin.settingKeys { known[section] = keys }
        }
        for (section, keys) in Self.hostSections { known[section] = keys }
        // The file's lines are read once for every message, not once per message.
        let lines = LineIndex(bytes)
        var warnings: [String] = []
        for section in sections.keys.sorted() {
            let isTable: Bool = if case .object? = sections[section] { true } else { false }
            if !isTable {
                // `provider = "fixed:1,2"` before any [section]: a key, not a section.
                let owners = known.filter { $0.value?.contains(section) == true }.map(\.key).sorted()
                let fix = owners.isEmpty ? "put it under the [section] it belongs to"
                    : "put it under " + owners.map { "[\($0)]" }.joined(separator: " or ")
                warnings.append("\(name):\(lines.topLevelLine(of: section)): key '\(section)' comes before any [section], so no setting reads it; \(fix)")
                continue
            }
            guard let keys = known[section] else {
                let choices = NameSuggestion.listing("sections", known.keys.sorted(),
                                                     suggesting: NameSuggestion.closest(to: section, among: known.keys, prefixes: false))
                warnings.append("\(name):\(lines.line(of: section)): unknown section [\(section)] (\(choices))")
                continue
            }
            guard let keys, case .object(let fields) = sections[section] else { continue }
            let accepted = Set(keys)
            let unknown = fields.keys.filter { !accepted.contains($0) }
                .map { (key: $0, line: lines.line(of: section, key: $0)) }
                .sorted { ($0.line, $0.key) < ($1.line, $1.key) }
            guard let first = unknown.first else { continue }
            let choices = keys.isEmpty ? "it takes none" : "keys: " + keys.joined(separator: ", ")
            if unknown.count == 1 {
                let closest = NameSuggestion.closest(to: first.key, among: keys, prefixes: false)
                let suggestion = closest.map { "; did you mean '\($0)'?" } ?? ""
                warnings.append("\(name):\(first.line): unknown key '\(first.key)' in [\(section)] (\(choices)\(suggestion))")
                continue
            }
            let shown = unknown.prefix(Self.listedUnknownKeys).map { "'\($0.key)' (line \($0.line))" }
            let more = unknown.count > shown.count ? ", and \(unknown.count - shown.count) more" : ""
            warnings.append("\(name):\(first.line): \(unknown.count) unknown keys in [\(section)]: "
                            + shown.joined(separator: ", ") + more + " (\(choices))")
        }
        return warnings
    }

    /// How many of a section's unknown keys one warning names.
    static let listedUnknownKeys = 10

    /// `message` (a setting's error such as `[store] synchronous must be ...`) prefixed with the
    /// `file:line` of the key it names, when the file has that section.
    func locate(_ message: String) -> String {
        guard message.hasPrefix("["), let close = message.firstIndex(of: "]"), bytes != nil else { return message }
        let section = String(message[message.index(after: message.startIndex)..<close])
        let key = message[message.index(after: close)...].drop { $0 == " " }.prefix { $0.isLetter || $0 == "_" || $0.isNumber }
        return "\(name):\(LineIndex(bytes).line(of: section, key: key.isEmpty ? nil : String(key))): \(message)"
    }

    /// Where each `[section]` header and each `key = ...` line inside a section first appears,
    /// from one pass over the file's lines.
    private struct LineIndex {
        private var sectionLines: [String: Int] = [:]
        private var keyLines: [String: [String: Int]] = [:]

        init(_ bytes: [UInt8]?) {
            guard let bytes else { return }
            let text = String(decoding: bytes, as: UTF8.self)
            var current = ""
            for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = ConfigFile.trimmed(raw, " \t")
                if line.hasPrefix("["), let close = line.firstIndex(of: "]") {
                    let section = ConfigFile.trimmed(line[line.index(after: line.startIndex)..<close], " \t\"")
                    if sectionLines[section] == nil { sectionLines[section] = index + 1 }
                    current = section
                    continue
                }
                guard line.contains("="), !line.hasPrefix("#") else { continue }
                let written = ConfigFile.trimmed(line.prefix { $0 != "=" }, " \t\"")
                if keyLines[current, default: [:]][written] == nil { keyLines[current, default: [:]][written] = index + 1 }
            }
        }

        /// The 1-based line of a `key = ...` before any section (1 when not found).
        func topLevelLine(of key: String) -> Int { keyLines[""]?[key] ?? 1 }

        /// The 1-based line of `[section]`, or of `key = ...` inside it (1 when not found).
        func line(of section: String, key: String? = nil) -> Int {
            guard let key else { return sectionLines[section] ?? 1 }
            return keyLines[section]?[key] ?? 1
        }
    }

    fileprivate static func trimmed(_ text: Substring, _ characters: String) -> String {
        String(text.drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }

    /// True when every byte is ASCII (then the bytes are UTF-8; most config files and manifests).
    private static func isASCII(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var any: UInt8 = 0
            for byte in buffer { any |= byte }
            return any < 0x80
        }
    }

    /// How deep tables and arrays may nest (a table header's and a key's parts count).
    static let maxDepth = 100
}
