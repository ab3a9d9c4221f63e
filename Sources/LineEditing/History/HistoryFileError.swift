#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the history file could not be written. Reading never fails: a missing, unreadable or corrupt
/// file gives what could be read, or nothing.
///
/// ```swift
/// do { try file.append("print(1)") } catch {
///     print("warning: \(error)")   // cannot save history to /ro/history: Read-only file system
/// }
/// ```
public struct HistoryFileError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case createDirectory(String)
        case write
        case replace
        case notRegular(String)
    }

    private let kind: Kind
    /// The history file.
    public let path: String
    /// The `errno` of the failing call (0 when no call failed).
    public let code: Int32

    static func createDirectory(_ directory: String, for path: String, code: Int32) -> HistoryFileError {
        HistoryFileError(kind: .createDirectory(directory), path: path, code: code)
    }

    static func write(_ path: String, code: Int32) -> HistoryFileError {
        HistoryFileError(kind: .write, path: path, code: code)
    }

    static func replace(_ path: String, code: Int32) -> HistoryFileError {
        HistoryFileError(kind: .replace, path: path, code: code)
    }

    static func notRegular(_ path: String, reason: String) -> HistoryFileError {
        HistoryFileError(kind: .notRegular(reason), path: path, code: 0)
    }

    public var description: String {
        let reason = String(cString: strerror(code))
        switch kind {
        case .createDirectory(let directory):
            return "cannot save history to \(path): cannot create \(directory): \(reason)"
        case .write:
            return "cannot save history to \(path): \(reason)"
        case .replace:
            return "cannot save history to \(path): cannot replace the file: \(reason)"
        case .notRegular(let why):
            return "cannot save history to \(path): \(why) (history stays in memory)"
        }
    }
}
