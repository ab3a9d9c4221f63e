import Foundation
import Services

#if canImport(Glibc)
import Glibc
#endif

/// Writing the files of `crescent init`, `crescent stubs` and the reports of `crescent test`, with
/// failures a person can act on:
/// the path and the system's reason ("cannot write types/globals.lua: Permission denied"), not a
/// Foundation error dump.
package enum ProjectFiles {
    /// A file or folder that could not be made.
    package struct Failure: Error, CustomStringConvertible {
        package let path: String
        package let reason: String
        package var action = "write"
        package var description: String { "cannot \(action) \(path): \(reason)" }
    }

    /// Writes `text` to `path`, making its folders first, through a temporary file beside it renamed
    /// over it, so a failure leaves the old file whole.
    package static func write(_ text: String, to path: String) throws(Failure) {
        try makeFolder(Folders.split(path).folder)
        let temporary = path + ".crescent-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Failure(path: path, reason: reason(errno)) }
        var bytes = Array(text.utf8)
        var offset = 0
        var failure: Int32 = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += written
        }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw Failure(path: path, reason: reason(failure))
        }
    }

    /// Makes the folder `path` and its parents; an existing folder is fine, a file in the way is not.
    package static func makeFolder(_ path: String) throws(Failure) {
        guard !path.isEmpty, !isFolder(path) else { return }
        let parent = Folders.split(path).folder
        if parent != path { try makeFolder(parent) }
        if mkdir(path, 0o755) != 0 && !(errno == EEXIST && isFolder(path)) {
            throw Failure(path: path, reason: errno == EEXIST ? "it is a file, not a folder" : reason(errno))
        }
    }

    /// The file's text, nil when there is no file at `path`.
    package static func read(_ path: String) throws(Failure) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        if isFolder(path) { throw Failure(path: path, reason: "it is a folder, where a file belongs; move it away", action: "read") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(path: path, reason: access(path, R_OK) != 0 ? reason(errno) : "it cannot be read", action: "read")
        }
        return String(decoding: data, as: UTF8.self)
    }

    private static func isFolder(_ path: String) -> Bool {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &folder) && folder.boolValue
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
