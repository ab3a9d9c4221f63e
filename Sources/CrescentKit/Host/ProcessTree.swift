#if canImport(Glibc)
import Glibc
import Model
#endif

/// The processes descended from one process, read from /proc's parent links: its children,
/// theirs, and so on, also those that left its process group (`setsid`), which killing a group
/// misses. Read while the ancestor still runs: once it exits, its children belong to init.
enum ProcessTree {
    /// At most this many are returned (a fork bomb is not followed to its end).
    static let limit = 10_000

    /// Every process descended from `ancestor` now, nearest first.
    static func descendants(of ancestor: pid_t) -> [pid_t] {
        var children: [pid_t: [pid_t]] = [:]
        guard let folder = opendir("/proc") else { return [] }
        defer { closedir(folder) }
        while let entry = readdir(folder) {
            let name = String(decoding: DirectoryEntry.name(entry), as: UTF8.self)
            guard let child = pid_t(name), let parent = parent(of: child) else { continue }
            children[parent, default: []].append(child)
        }
        var found = children[ancestor] ?? []
        var index = 0
        while index < found.count, found.count < limit {
            found += children[found[index]] ?? []
            index += 1
        }
        return Array(found.prefix(limit))
    }

    /// Kills with SIGKILL every process descended from this one, and each process group one of
    /// them leads (a program that made a group of its own may have children there whose parent
    /// has gone). What a script's `io.popen` started runs in the host's own process group, out of
    /// ``ProcessGroups``' sight, and outlived an exit that skipped its `pclose`, holding the pipe
    /// the host's caller reads (`crescent x.lua | cat` never ended).
    static func killDescendants() {
        let own = getpgrp()
        for process in descendants(of: getpid()) {
            if getpgid(process) == process && process != own { kill(-process, SIGKILL) }
            kill(process, SIGKILL)
        }
    }

    /// The parent of `process` (the 4th field of /proc/PID/stat, after the command's parentheses).
    private static func parent(of process: pid_t) -> pid_t? {
        let descriptor = open("/proc/\(process)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0, let commandEnd = buffer[0..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = buffer[(commandEnd + 1)..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 1 else { return nil }
        return pid_t(String(decoding: fields[1], as: UTF8.self))
    }
}
