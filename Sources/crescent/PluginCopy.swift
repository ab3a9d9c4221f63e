import CrescentKit
import Foundation

/// Copies a plugin's folder (files and folders only: ``PluginContents`` checked it), each entry
/// opened relative to the two top folders, so the system sees paths no longer than the plugin's
/// own (``PluginContents/maximumPathBytes``). Foundation's `copyItem` cut paths past 1,024 bytes
/// with the folder in front: a file 1,006 bytes deep inside a plugin, within the bound, failed to
/// install with "File exists" (it tried to create the file's cut path, its folder).
enum PluginCopy {
    /// Copies the folder `from` to the new folder `to`: files with their bytes and permission
    /// bits (not set-id), folders with theirs. Answers why it failed ("ENTRY: reason"), or nil.
    static func copy(_ from: String, to: String) -> String? {
        let source = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard source >= 0 else { return "\(from): \(String(cString: strerror(errno)))" }
        defer { close(source) }
        var status = stat()
        guard fstat(source, &status) == 0 else { return "\(from): \(String(cString: strerror(errno)))" }
        guard mkdir(to, mode_t(status.st_mode & 0o777) | 0o700) == 0 else { return "\(to): \(String(cString: strerror(errno)))" }
        let target = open(to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard target >= 0 else { return "\(to): \(String(cString: strerror(errno)))" }
        defer { close(target) }
        var pending = [""]
        var entries = 0
        // Bounded: every round takes one folder; the entries are bounded as the contents check's.
        while let folder = pending.popLast() {
            guard let names = names(in: source, folder) else { return "\(folder.isEmpty ? "." : folder): \(String(cString: strerror(errno)))" }
            for name in names {
                entries += 1
                guard entries <= PluginContents.maximumEntries else { return "more than \(PluginContents.maximumEntries) files and folders" }
                let path = folder.isEmpty ? name : folder + "/" + name
                guard fstatat(source, path, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return "\(path): \(String(cString: strerror(errno)))" }
                let mode = mode_t(status.st_mode & 0o777)
                switch status.st_mode & S_IFMT {
                case S_IFDIR:
                    guard mkdirat(target, path, mode | 0o700) == 0 else { return "\(path): \(String(cString: strerror(errno)))" }
                    pending.append(path)
                case S_IFREG:
                    if let failure = copyFile(path, from: source, to: target, mode: mode, size: Int(status.st_size)) { return "\(path): \(failure)" }
                default:
                    return "\(path): not a regular file or a folder"
                }
            }
        }
        return nil
    }

    /// The names in the folder `relative` beneath `root` (`.` and `..` left out), nil on an error.
    private static func names(in root: Int32, _ relative: String) -> [String]? {
        let descriptor = openat(root, relative.isEmpty ? "." : relative, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0, let folder = fdopendir(descriptor) else { return nil }
        defer { closedir(folder) }
        var names: [String] = []
        // Bounded by the folder's entries.
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Copies the `size` bytes the file `path` held when listed (a file that grows meanwhile is
    /// not followed without end). Answers the reason it failed, or nil.
    private static func copyFile(_ path: String, from source: Int32, to target: Int32, mode: mode_t, size: Int) -> String? {
        let input = openat(source, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard input >= 0 else { return String(cString: strerror(errno)) }
        defer { close(input) }
        let output = openat(target, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard output >= 0 else { return String(cString: strerror(errno)) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var left = size
        // Bounded: each round copies at least one byte of `size`, or ends.
        while left > 0 {
            let count = read(input, &buffer, min(buffer.count, left))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count < 0 ? String(cString: strerror(errno)) : nil }
            var written = 0
            while written < count {
                let wrote = buffer[written..<count].withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
                if wrote < 0 && errno == EINTR { continue }
                guard wrote > 0 else { return String(cString: strerror(errno)) }
                written += wrote
            }
            left -= count
        }
        return nil
    }
}
