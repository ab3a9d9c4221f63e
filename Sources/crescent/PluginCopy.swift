import CrescentKit
import Foundation
import Model

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
            // Each folder is reached from the top one component at a time, never through a link,
            // and each entry is opened by name in its folder's descriptor and checked as opened:
            // a folder swapped for a link between the contents check and the copy (to ~/.ssh) is
            // refused, where a path `sub/id` went through the link to the file beyond it.
            guard let opened = openFolder(folder, in: source) else {
                return "\(folder.isEmpty ? "." : folder): \(String(cString: strerror(errno))) (it changed during the copy: a folder became a link or something else)"
            }
            defer { close(opened) }
            guard let names = names(in: opened) else { return "\(folder.isEmpty ? "." : folder): \(String(cString: strerror(errno)))" }
            for name in names {
                entries += 1
                guard entries <= PluginContents.maximumEntries else { return "more than \(PluginContents.maximumEntries) files and folders" }
                let path = folder.isEmpty ? name : folder + "/" + name
                let entry = openat(opened, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
                guard entry >= 0 else {
                    let reason = errno == ELOOP ? "a symbolic link (it changed during the copy)" : String(cString: strerror(errno))
                    return "\(path): \(reason)"
                }
                defer { close(entry) }
                guard fstat(entry, &status) == 0 else { return "\(path): \(String(cString: strerror(errno)))" }
                let mode = mode_t(status.st_mode & 0o777)
                switch status.st_mode & S_IFMT {
                case S_IFDIR:
                    guard mkdirat(target, path, mode | 0o700) == 0 else { return "\(path): \(String(cString: strerror(errno)))" }
                    pending.append(path)
                case S_IFREG where status.st_nlink > 1:
                    return "\(path): a hard link (a file with \(status.st_nlink) names; it changed during the copy)"
                case S_IFREG:
                    if let failure = copyFile(entry, named: path, to: target, mode: mode, size: Int(status.st_size)) { return "\(path): \(failure)" }
                default:
                    return "\(path): not a regular file or a folder"
                }
            }
        }
        return nil
    }

    /// The folder `relative` beneath the folder open as `root`, opened one component at a time
    /// without following a link; nil (errno set) when a component is not a folder.
    private static func openFolder(_ relative: String, in root: Int32) -> Int32? {
        var current = dup(root)
        guard current >= 0 else { return nil }
        // Bounded by the path's components.
        for component in relative.split(separator: "/") {
            let next = openat(current, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let reason = errno
            close(current)
            guard next >= 0 else {
                errno = reason
                return nil
            }
            current = next
        }
        return current
    }

    /// The names in the folder open as `descriptor` (`.` and `..` left out), nil on an error.
    private static func names(in descriptor: Int32) -> [String]? {
        let copy = dup(descriptor)
        guard copy >= 0 else { return nil }
        guard let folder = fdopendir(copy) else {
            close(copy)
            return nil
        }
        defer { closedir(folder) }
        var names: [String] = []
        // Bounded by the folder's entries.
        while let entry = readdir(folder) {
            let name = String(decoding: DirectoryEntry.name(entry), as: UTF8.self)
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Copies the `size` bytes the file open as `input` (`path` in the plugin) held when opened (a file that grows meanwhile is
    /// not followed without end). Answers the reason it failed, or nil.
    private static func copyFile(_ input: Int32, named path: String, to target: Int32, mode: mode_t, size: Int) -> String? {
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
