import CrescentKit
import Foundation

/// What `crescent plugins install` accepts inside a plugin: regular files and folders only (a
/// FIFO would hang the copy, a device or a link reach past the folder), at most ``maximumEntries``
/// entries and ``maximumBytes`` bytes unpacked (a small archive may unpack to gigabytes).
/// An archive is checked from its listing before anything is unpacked, and every folder again as
/// it lies on disk before it is copied.
enum PluginContents {
    /// The most entries (files and folders) a plugin may hold.
    static let maximumEntries = 10_000
    /// The most bytes its files may hold together, 100 MiB.
    static let maximumBytes = 100 << 20
    /// The longest path inside a plugin, in bytes: far below the system's 4096 once the plugin
    /// folder is in front (deeper, the copy failed with no cause a user could act on).
    static let maximumPathBytes = 1024

    /// Checks the folder `root` (named `shown` in messages) without following any link. With
    /// `topFolder` (an archive unpacked, its plugin in a folder of its own) the first component
    /// of a path does not count toward ``maximumPathBytes``: the bound is on paths inside the
    /// plugin, and the same plugin installs from its folder or from an archive of that folder.
    static func check(folder root: String, shown: String, topFolder: Bool = false) throws(PluginProblem) {
        var entries = 0
        var bytes = 0
        var pending = [""]
        // Bounded: every round takes one folder, and the entries are counted against the limit.
        while let relative = pending.popLast() {
            let folder = relative.isEmpty ? root : root + "/" + relative
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
                throw PluginProblem("\(shown): cannot read the folder \(relative.isEmpty ? "." : relative)")
            }
            for name in names.sorted() {
                let path = relative.isEmpty ? name : relative + "/" + name
                try checkLength(topFolder ? insideTopFolder(path) : path, in: shown)
                var status = stat()
                guard lstat(root + "/" + path, &status) == 0 else { throw PluginProblem("\(shown): cannot read \(path)") }
                switch status.st_mode & S_IFMT {
                case S_IFDIR: pending.append(path)
                case S_IFREG where status.st_nlink > 1:
                    // Another name of the same file may be anywhere (a secret of the user's): its
                    // contents would become the plugin's. Archives refuse hard links likewise.
                    throw refused(path, kind: "a hard link (a file with \(status.st_nlink) names)", in: shown)
                case S_IFREG: bytes += Int(status.st_size)
                default: throw refused(path, kind: kind(of: status.st_mode & S_IFMT), in: shown)
                }
                entries += 1
                try checkBounds(entries: entries, bytes: bytes, in: shown)
            }
        }
    }

    /// Checks the `.tar.gz` at `archive` from `tar`'s listing, stopping it at the first entry
    /// past a bound. Answers false when tar could not list it (unpacking it will say why).
    static func check(archive: String) throws(PluginProblem) -> Bool {
        let output = Pipe()
        let tar = try PluginInstaller.start(["tar", "--numeric-owner", "--quoting-style=escape", "-tvzf", archive],
                                            output: output, errors: FileHandle.nullDevice, what: "listing \(archive)")
        var entries = 0
        var bytes = 0
        var pending = Data()
        defer {
            if tar.isRunning { tar.terminate() }
            tar.waitUntilExit()
        }
        // Bounded: ends at the end of the listing, or at the first entry past a bound.
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                try checkListed(line, archive: archive, entries: &entries, bytes: &bytes)
            }
        }
        tar.waitUntilExit()
        return tar.terminationReason == .exit && tar.terminationStatus == 0
    }

    /// One line of `tar -tv`: `-rw-r--r-- 0/0 1234 2026-01-01 10:00 name`.
    private static func checkListed(_ line: String, archive: String, entries: inout Int, bytes: inout Int) throws(PluginProblem) {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count == 6, let type = fields[0].first else { return }
        var name = String(fields[5])
        if let arrow = name.range(of: " -> ") { name = String(name[..<arrow.lowerBound]) }
        if let link = name.range(of: " link to ") { name = String(name[..<link.lowerBound]) }
        // Its top folder (when it has one) is not part of the plugin's paths; an archive with
        // plugin.toml at the top is held to the whole length when unpacked (check(folder:)).
        try checkLength(insideTopFolder(name), in: archive)
        // GNU tar refuses it with a message of its own (or strips it): refused here, named.
        if name.split(separator: "/").contains("..") {
            throw PluginProblem("\(archive): \(name) leads out of the plugin's folder (its path holds '..'): an archive's entries are "
                + "paths inside the plugin; nothing was installed")
        }
        // GNU tar would unpack it inside (without its leading /), beside the plugin's folder.
        if name.hasPrefix("/") {
            throw PluginProblem("\(archive): \(name) is an absolute path: an archive's entries are paths inside the plugin "
                + "(its folder, then its files); nothing was installed")
        }
        switch type {
        case "d": break
        case "-": bytes += Int(fields[2]) ?? 0
        default:
            let kind = switch type {
            case "l": "a symbolic link"
            case "h": "a hard link"
            case "p": "a FIFO"
            case "c": "a character device"
            case "b": "a block device"
            case "s": "a socket"
            default: "not a regular file (tar type '\(type)')"
            }
            throw refused(name, kind: kind, in: archive)
        }
        entries += 1
        try checkBounds(entries: entries, bytes: bytes, in: archive)
    }

    /// `path` without its first component (the archive's top folder), itself when it has none.
    private static func insideTopFolder(_ path: String) -> String {
        guard let slash = path.firstIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    private static func checkLength(_ path: String, in shown: String) throws(PluginProblem) {
        guard path.utf8.count > maximumPathBytes else { return }
        let start = String(decoding: path.utf8.prefix(60), as: UTF8.self)
        throw PluginProblem("\(shown): \(start)... is nested too deep (a path inside a plugin holds at most \(maximumPathBytes) bytes); nothing was installed")
    }

    private static func checkBounds(entries: Int, bytes: Int, in shown: String) throws(PluginProblem) {
        if entries > maximumEntries {
            throw PluginProblem("\(shown): holds more than \(maximumEntries) files and folders, the most a plugin may hold; nothing was installed")
        }
        if bytes > maximumBytes {
            throw PluginProblem("\(shown): its files hold more than \(maximumBytes >> 20) MiB, the most a plugin may hold; nothing was installed")
        }
    }

    private static func refused(_ entry: String, kind: String, in shown: String) -> PluginProblem {
        PluginProblem("\(shown): \(entry) is \(kind): a plugin holds only regular files and folders; nothing was installed")
    }

    private static func kind(of type: mode_t) -> String {
        switch type {
        case S_IFLNK: "a symbolic link"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }
}
