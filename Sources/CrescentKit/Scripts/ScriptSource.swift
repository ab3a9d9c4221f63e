import Foundation
import Model
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a script comes from.
public enum ScriptSource: Sendable {
    /// A file; a first line starting with `#` (a shebang) is skipped as `lua5.4` does.
    case file(String)
    /// A chunk given on the command line (`crescent -e 'CODE'`).
    case code(String)
    /// The whole of standard input.
    case standardInput
}

/// Why a script could not be read. The message follows `lua5.4`'s wording.
public struct ScriptReadError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

extension ScriptSource {
    /// The chunk name Lua reports in messages: the path for files (`script.lua:3:`).
    var chunkName: String {
        switch self {
        case .file(let path): "@" + path
        case .code: "=(command line)"
        case .standardInput: "=stdin"
        }
    }

    /// Reads the source's bytes, with a shebang line blanked (line numbers stay right).
    public func read() throws(ScriptReadError) -> [UInt8] {
        var bytes: [UInt8]
        switch self {
        case .code(let code): return Array(code.utf8)
        case .standardInput: bytes = try Self.readAll(descriptor: 0, name: "stdin", chunkSize: 65536)
        case .file(let path):
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                let missing = errno == ENOENT
                let reason = Self.lastError()
                throw ScriptReadError(description: "cannot open '\(path)' (\(reason))" + (missing ? Self.nearFileHint(path) : ""))
            }
            defer { close(descriptor) }
            var status = stat()
            if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
                throw ScriptReadError(description: "cannot read '\(path)' (Is a directory)")
            }
            // Chunks of the file's size and a byte (the last read finds the end), at most 64 KiB:
            // a small file's read does not fill 64 KiB with zeros first (start-up reads several).
            // A size of 0 may be a pipe's or a device's, whose contents are not known beforehand.
            let size = Int(status.st_size)
            bytes = try Self.readAll(descriptor: descriptor, name: path, chunkSize: size > 0 ? min(size + 1, 65536) : 65536)
        }
        Self.blankShebang(&bytes)
        return bytes
    }

    /// Drops a UTF-8 BOM and blanks a first line starting with `#`, as `lua5.4` does.
    static func blankShebang(_ bytes: inout [UInt8]) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }  // a UTF-8 BOM, as lua5.4 skips it
        if bytes.first == UInt8(ascii: "#") {
            let end = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            bytes.removeSubrange(0..<end)
        }
    }

    private static func readAll(descriptor: Int32, name: String, chunkSize: Int) throws(ScriptReadError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ScriptReadError(description: "cannot read '\(name)' (\(lastError()))")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// `; did you mean 'a001.lua'?` for a missing `a001.lau` beside a file of a close name; empty
    /// when there is none, or when `path.lua` is there (the command line names that one).
    private static func nearFileHint(_ path: String) -> String {
        guard access(path + ".lua", F_OK) != 0, let closest = nearFile(path) else { return "" }
        let slash = path.lastIndex(of: "/")
        return "; did you mean '\(slash.map { String(path[...$0]) } ?? "")\(closest)'?"
    }

    /// The name of the file beside the missing `path` whose name is a few edits from its own
    /// (`main.lua` for `plugins/tune/mian.lua`), or nil when there is none.
    static func nearFile(_ path: String) -> String? {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder) else { return nil }
        return NameSuggestion.closest(to: name, among: entries.sorted(), prefixes: false)
    }

    private static func lastError() -> String {
        guard let message = strerror(errno) else { return "error \(errno)" }
        return String(cString: message)
    }
}
