import Glibc
import Model

/// A path of the files service as the bytes the system gives and takes. A name need not be
/// UTF-8 (Linux allows any byte but `/` and NUL), and Lua strings are bytes: such a name is
/// listed, watched, read, written and stat'ed as exactly its bytes, never as a lossy text that
/// names another file (two names `\xFF` and `\xFE` were both listed as U+FFFD, which read a
/// third file of that name).
struct FilePath: Sendable, Hashable {
    let bytes: [UInt8]

    init(_ text: some StringProtocol) { bytes = Array(text.utf8) }
    init(bytes: some Sequence<UInt8>) { self.bytes = Array(bytes) }
    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The path from a script's argument: a string (text, or bytes that are not UTF-8).
    init?(_ value: Value) {
        switch value {
        case .string(let text): self.init(text)
        case .bytes(let bytes): self.init(bytes: bytes)
        default: return nil
        }
    }

    /// The path as text, when it is UTF-8.
    var text: String? { String(validating: bytes, as: UTF8.self) }

    /// The path as a script gets it: a string holding exactly its bytes.
    var value: Value { text.map(Value.string) ?? .bytes(bytes) }

    /// For permission checks: the path with each byte that is not UTF-8 as U+FFFD (never a `/`
    /// or a `.`, so the folders it names are the same).
    var lossyText: String { String(decoding: bytes, as: UTF8.self) }

    /// For messages: UTF-8 as it is, each other byte as `\xFF`, clipped when long.
    var shown: String { clipped(text ?? ByteText.shown(bytes)) }

    var isEmpty: Bool { bytes.isEmpty }

    /// The path split at its last slash: the folder (empty for a bare name, `/` at the root)
    /// and the name after it.
    var split: (folder: FilePath, name: FilePath) {
        let slash = UInt8(ascii: "/")
        guard let index = bytes.lastIndex(of: slash) else { return (FilePath(bytes: []), self) }
        return (FilePath(bytes: index == 0 ? [slash] : bytes[..<index]), FilePath(bytes: bytes[(index + 1)...]))
    }

    /// `name` inside this folder.
    func appending(_ name: FilePath) -> FilePath {
        // One array, sized once: a watch makes one for every change it reads.
        var joined: [UInt8] = []
        joined.reserveCapacity(bytes.count + 1 + name.bytes.count)
        joined.append(contentsOf: bytes)
        joined.append(UInt8(ascii: "/"))
        joined.append(contentsOf: name.bytes)
        return FilePath(bytes: joined)
    }

    static func == (lhs: FilePath, rhs: FilePath) -> Bool { lhs.bytes == rhs.bytes }

    /// The bytes hashed as one block rather than byte by byte: a watch looks up every path it
    /// hears of in the set of those it knows.
    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// True when this path is inside the folder `folder` (at any depth).
    func isBelow(_ folder: FilePath) -> Bool {
        bytes.count > folder.bytes.count + 1 && bytes.starts(with: folder.bytes) && bytes[folder.bytes.count] == UInt8(ascii: "/")
    }

    /// Calls `body` with the path as a C string (NUL-terminated; the service refuses paths
    /// holding a NUL before this).
    func withCString<Result>(_ body: (UnsafePointer<CChar>) throws -> Result) rethrows -> Result {
        try (bytes + [0]).withUnsafeBufferPointer { buffer in
            // Invariant: never empty (it holds the NUL at least), so it has a base address.
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}
