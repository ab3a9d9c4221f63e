#if canImport(Glibc)
import Glibc
#endif

/// What a long permission request shows first: how many entries of each kind it holds and the
/// sensitive places among them (``isSensitive(_:home:)``), then its first entries and where to
/// read all of them. A 10,000-entry `read` with `~/.ssh` at entry 5,000 showed only its last
/// screenful, and a `y` to what the screen showed granted `~/.ssh` (attack new27g D4).
struct PermissionSummary {
    /// The lines to show, without indent.
    let lines: [String]

    /// Past this many lines of explanation a request is summarised: with the header, the grant
    /// line and the question it still fits a 24-line terminal.
    static let shortLimit = 14
    /// The entries a summarised question shows after the summary.
    static let firstShown = 6

    /// `explanation` is `permissions`' (``PluginManifest/explanation(dataDirectory:targets:)``:
    /// its `read` lines first, then its `write` lines); `folder` the plugin's, for the command
    /// that lists them all; `full` shows every line after the summary.
    init(_ permissions: PluginPermissions, explanation: [String], folder: String, full: Bool, targets: PluginPermissions.Targets? = nil) {
        guard explanation.count > Self.shortLimit else {
            lines = explanation
            return
        }
        let counts = [("read", permissions.read.count), ("write", permissions.write.count), ("net", permissions.net.count),
                      ("exec", permissions.exec.count), ("env", permissions.env.count), ("collections", permissions.collections.count),
                      ("requires", permissions.services.count)].filter { $0.1 > 0 }
        var lines = ["in all: " + counts.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
                     + (permissions.native ? ", native (FULL ACCESS)" : "") + " entries"]
        let home = getenv("HOME").map { String(cString: $0) }
        let targets = targets ?? permissions.targets()
        var sensitive: [String] = []
        for (offset, entries, recorded) in [(0, permissions.read, targets.read), (permissions.read.count, permissions.write, targets.write)] {
            for (index, entry) in entries.enumerated() where offset + index < explanation.count {
                let target = index < recorded.count && !recorded[index].isEmpty ? recorded[index] : PluginPermissions.expanded(entry, home: home)
                if Self.isSensitive(target, home: home) { sensitive.append(explanation[offset + index]) }
            }
        }
        sensitive += explanation.filter { $0.hasPrefix("native:") || $0.hasPrefix("requires ") }
        if sensitive.isEmpty {
            lines.append("none of them is your whole home, a hidden folder in it (~/.ssh), / or /etc")
        } else {
            lines.append("the places that matter most (\(sensitive.count)):")
            lines += sensitive.prefix(Self.firstShown * 2).map { "  " + $0 }
            if sensitive.count > Self.firstShown * 2 {
                lines.append("  … and \(sensitive.count - Self.firstShown * 2) more of them")
            }
        }
        if full {
            lines.append("every entry:")
            lines += explanation.map { "  " + $0 }
        } else {
            lines.append("the first \(Self.firstShown) of \(explanation.count) lines:")
            lines += explanation.prefix(Self.firstShown).map { "  " + $0 }
            lines.append("  … and \(explanation.count - Self.firstShown) more: crescent plugin check \(folder) lists them all")
        }
        self.lines = lines
    }

    /// Whether granting `path` (resolved) reaches what a person would not give lightly: `/`,
    /// `/etc` or `/root` and below, the whole home folder `home` or a folder holding it, or a
    /// hidden file or folder in it (`~/.ssh`, `~/.config`).
    static func isSensitive(_ path: String, home: String?) -> Bool {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        if path == "/" { return true }
        for system in ["/etc", "/root"] where path == system || path.hasPrefix(system + "/") { return true }
        guard let home, home.count > 1 else { return false }
        if path == home || home.hasPrefix(path + "/") { return true }
        guard path.hasPrefix(home + "/") else { return false }
        return path.dropFirst(home.count + 1).hasPrefix(".")
    }
}
