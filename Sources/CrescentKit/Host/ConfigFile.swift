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
