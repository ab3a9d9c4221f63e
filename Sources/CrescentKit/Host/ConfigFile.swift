import Model
import TOMLKit
#if canImport(Glibc)
import Glibc
#endif

/// The TOML config file: `--config FILE`, else `crescent.toml` in the current folder if present.
/// Each top-level table is one plugin's section.
enum ConfigFile {
    static let defaultName = "crescent.toml"

    /// The sections by name; empty when there is no file and none was asked for.
    static func load(_ path: String?) throws(HostSetupError) -> [String: Value] {
        let file = path ?? defaultName
        guard let text = read(file) else {
            if path != nil { throw HostSetupError(description: "cannot open config file '\(file)'") }
            return [:]
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw HostSetupError(description: "\(file):\(error.source.begin.line): \(error.description)")
        } catch {
            throw HostSetupError(description: "\(file): \(error)")
        }
        guard case .object(let sections) = convert(table) else { return [:] }
        return sections
    }

    /// Sections the host itself reads, whatever the plugins.
    static let hostSections: Set<String> = ["host", "plugins"]

    /// What is wrong in the config file that can be told without starting anything: sections no
    /// plugin reads and keys a section does not have (warnings), each naming `file:line`, the
    /// section or key and what it may be.
    static func warnings(_ path: String?, sections: [String: Value], plugins: [any Plugin]) -> [String] {
        let file = path ?? defaultName
        var known: [String: [String]?] = [:]
        for plugin in plugins {
            known[plugin.name] = known[plugin.name] ?? .some(nil)
            for (section, keys) in plugin.settingKeys { known[section] = keys }
        }
        for section in hostSections { known[section] = .some(nil) }
        let lines = (read(file) ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var warnings: [String] = []
        for name in sections.keys.sorted() {
            guard let keys = known[name] else {
                let choices = known.keys.sorted().joined(separator: ", ")
                warnings.append("\(file):\(line(of: name, key: nil, in: lines)): unknown section [\(name)] (sections: \(choices))")
                continue
            }
            guard let keys, case .object(let fields) = sections[name] else { continue }
            for key in fields.keys.sorted() where !keys.contains(key) {
                let choices = keys.isEmpty ? "it takes none" : "keys: " + keys.joined(separator: ", ")
                warnings.append("\(file):\(line(of: name, key: key, in: lines)): unknown key '\(key)' in [\(name)] (\(choices))")
            }
        }
        return warnings
    }

    /// `message` (a setting's error such as `[store] synchronous must be ...`) prefixed with the
    /// `file:line` of the key it names, when the config file has it.
    static func locate(_ message: String, path: String?) -> String {
        let file = path ?? defaultName
        guard message.hasPrefix("["), let close = message.firstIndex(of: "]"), let text = read(file) else { return message }
        let section = String(message[message.index(after: message.startIndex)..<close])
        let key = message[message.index(after: close)...].drop { $0 == " " }.prefix { $0.isLetter || $0 == "_" || $0.isNumber }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return "\(file):\(line(of: section, key: key.isEmpty ? nil : String(key), in: lines)): \(message)"
    }

    /// The 1-based line of `[section]`, or of `key = ...` inside it (1 when not found).
    private static func line(of section: String, key: String?, in lines: [String]) -> Int {
        var current: String?
        for (index, raw) in lines.enumerated() {
            let line = trimmed(Substring(raw), " \t")
            if line.hasPrefix("["), let close = line.firstIndex(of: "]") {
                current = trimmed(line[line.index(after: line.startIndex)..<close], " \t\"")
                if key == nil && current == section { return index + 1 }
                continue
            }
            guard let key, current == section else { continue }
            let name = trimmed(line.prefix { $0 != "=" }, " \t\"")
            if name == key && line.contains("=") { return index + 1 }
        }
        return 1
    }

    private static func trimmed(_ text: Substring, _ characters: String) -> String {
        String(text.drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }

    private static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func convert(_ value: any TOMLValueConvertible) -> Value {
        if let table = value.table {
            var fields: [String: Value] = [:]
            for (key, item) in table { fields[key] = convert(item) }
            return .object(fields)
        }
        if let array = value.array { return .array(array.map { convert($0) }) }
        if let bool = value.bool { return .bool(bool) }
        if let integer = value.int { return .integer(Int64(integer)) }
        if let double = value.double { return .number(double) }
        if let string = value.string { return .string(string) }
        return .string(String(describing: value))
    }
}
