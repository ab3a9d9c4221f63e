import Crypto
import CSandbox
import Foundation
import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

/// Where a plugin may read and write, with every path resolved the way the kernel will follow it
/// (DESIGN.md, Plugins › Permissions): its own folder (read), its data folder
/// `DATA/plugin-data/NAME` (write), and what its grant holds. Lua plugins check each path against it (their `io`
/// and `os`, and their `process` and `files` services: ``serviceAccess(warn:)``); process plugins
/// get it as their Landlock ruleset.
struct PluginSandbox {
    let plugin: String
    /// The plugin folder, resolved.
    let folder: String
    /// Its data folder, resolved (made when missing).
    let dataFolder: String
    /// Granted `read` and `write` paths, `~` expanded and resolved.
    let read: [String]
    let write: [String]
    let permissions: PluginPermissions

    /// The Landlock ABI the kernel offers, 0 for none. `CRESCENT_LANDLOCK_ABI=0` in the host's
    /// environment makes it answer 0, as a kernel without Landlock would (the tests of the
    /// refusal to run unconfined need one).
    static func landlockABI() -> Int {
        if let forced = getenv("CRESCENT_LANDLOCK_ABI"), String(cString: forced) == "0" { return 0 }
        return Int(crescent_landlock_abi())
    }

    /// - Throws: ``PluginProblem`` when the data folder is a link or not the user's own
    ///   (``dataFolder(of:dataDirectory:)``).
    init(manifest: PluginManifest, dataDirectory: String?) throws(PluginProblem) {
        plugin = manifest.name
        permissions = manifest.permissions
        folder = Self.resolve(manifest.folder)
        dataFolder = try Self.dataFolder(of: manifest, dataDirectory: dataDirectory)
        let home = getenv("HOME").map { String(cString: $0) }
        read = manifest.permissions.read.map { Self.resolve(PluginPermissions.expanded($0, home: home)) }
        write = manifest.permissions.write.map { Self.resolve(PluginPermissions.expanded($0, home: home)) }
    }

    /// `path` as the kernel would reach it: absolute (from the current folder), through the
    /// real path of its deepest existing ancestor (symlinks, `..`, `/proc/self/root` followed),
    /// with the components that do not exist yet appended (`..` among them taken lexically: the
    /// kernel could not walk through a folder that does not exist either).
    static func resolve(_ path: String) -> String {
        var head = path
        if !head.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let current = getcwd(&buffer, buffer.count) != nil ? String(cString: buffer) : "/"
            head = current + "/" + head
        }
        var tail: [Substring] = []
        // Bounded: each round removes one component.
        for _ in 0...head.utf8.count {
            if let real = realpath(head, nil) {
                // realpath's answer is absolute and canonical (no trailing slash but in "/").
                var resolved = String(cString: real)
                free(real)
                // Appended and cut by hand, last removed first, rather than split, reversed and
                // joined: the runtime builds those generic types on first use by scanning every
                // protocol conformance in the binary, which cost half of reading a manifest.
                var remaining = tail.count
                while remaining > 0 {
                    remaining -= 1
                    let component = tail[remaining]
                    if component == ".." {
                        if let slash = resolved.lastIndex(of: "/") {
                            resolved = slash == resolved.startIndex ? "/" : String(resolved[..<slash])
                        }
                    } else if component != "." && !component.isEmpty {
                        if !resolved.hasSuffix("/") { resolved += "/" }
                        resolved += component
                    }
                }
                return resolved
            }
            guard let slash = head.lastIndex(of: "/") else { break }
            tail.append(head[head.index(after: slash)...])
            head = slash == head.startIndex ? "/" : String(head[..<slash])
        }
        return path
    }

    /// True when the resolved `path` is the host process's entry in `/proc` or inside it
    /// (`/proc/self`, `/proc/thread-self` and its threads' `/proc/TID` all lead there): a Lua
    /// plugin granted `/proc` (as the shipped `system` plugin is) read the host's environment
    /// and, through `mem`, the script's and other plugins' data.
    static func isHostProcessEntry(_ path: String) -> Bool {
        guard path.hasPrefix("/proc/") else { return false }
        let number = path.dropFirst(6).prefix { $0 != "/" }
        guard !number.isEmpty, number.allSatisfy(\.isNumber), let id = Int32(number) else { return false }
        return id == getpid() || access("/proc/self/task/\(id)", F_OK) == 0
    }

    /// True when the resolved `path` is `root` or inside it.
    static func isInside(_ path: String, _ root: String) -> Bool {
        root == "/" || path == root || path.hasPrefix(root + "/")
    }

    /// Why the plugin may not reach `path` (read, or write when `write`), or nil when it may.
    /// `extraRead` are further readable folders (the system's Lua modules, for `require`).
    func refusal(_ path: String, write wants: Bool, extraRead: [String] = []) -> String? {
        if case .refused(let message) = reach(path, write: wants, extraRead: extraRead) { return message }
        return nil
    }

    /// Whether the plugin may reach a path, and where it lies.
    enum Access: Equatable {
        /// It may: `resolved` is inside the granted folder `root`.
        case granted(root: String, resolved: String)
        /// It may not: the message says why and how to grant it.
        case refused(String)

        /// `resolved` relative to `root` ("" for the folder itself): what is opened beneath it.
        var relative: String? {
            guard case .granted(let root, let resolved) = self else { return nil }
            if resolved == root { return "" }
            return String(resolved.dropFirst(root == "/" ? 1 : root.count + 1))
        }
    }

    /// The granted folder `path` (resolved) lies in, for reading or (`write`) writing, or why
    /// the plugin may not reach it.
    ///
    /// A relative `path` starts at the plugin's folder, as its programs run there:
    /// the same code must reach the same file wherever crescent was started.
    func reach(_ path: String, write wants: Bool, extraRead: [String] = []) -> Access {
        let resolved = Self.resolve(path.hasPrefix("/") ? path : folder + "/" + path)
        let shown = resolved == path ? path : "\(path) (that is \(resolved))"
        let field = wants ? "write" : "read"
        if Self.isHostProcessEntry(resolved) {
            return .refused("permission: plugin '\(plugin)' may not \(field) \(shown): it is the host's own process (its environment, memory and open files), which no grant opens to a Lua plugin: the plugin runs inside the host")
        }
        let roots = [dataFolder] + write + (wants ? [] : [folder] + read + extraRead)
        if let root = roots.first(where: { Self.isInside(resolved, $0) }) { return .granted(root: root, resolved: resolved) }
        return .refused("permission: plugin '\(plugin)' may not \(field) \(shown): not granted (add it to [permissions] \(field) in its plugin.toml, then run crescent plugins allow \(plugin))")
    }

    /// The `PATH` a confined program gets, and where its programs are looked up: the user's own
    /// (a version manager's shims, say) would be folders it cannot run from.
    static let confinedPath = "/usr/local/bin:/usr/bin:/bin"

    /// The program `name` as an absolute path: itself when it holds a `/` (relative to the plugin
    /// folder), else the first executable of that name on `path` (the host's `PATH` for none).
    static func program(_ name: String, folder: String, path searched: String? = nil) -> String? {
        if name.contains("/") {
            let path = name.hasPrefix("/") ? name : folder + "/" + name
            return isExecutableFile(path) ? path : nil
        }
        let path = searched ?? getenv("PATH").map { String(cString: $0) } ?? confinedPath
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = String(directory) + "/" + name
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    /// The program in `searched` (PATH when nil) whose name is a few edits from `name`
    /// (`python3` for `pyhton3`), or nil; read only to word the error of a program not found.
    static func nearProgram(_ name: String, path searched: String? = nil) -> String? {
        guard !name.contains("/") else { return nil }
        let path = searched ?? getenv("PATH").map { String(cString: $0) } ?? confinedPath
        let folders = path.split(separator: ":", omittingEmptySubsequences: true).map(String.init)
        let names = folders.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? [] }
        guard let closest = NameSuggestion.closest(to: name, among: Set(names).sorted(), prefixes: false),
              folders.contains(where: { isExecutableFile($0 + "/" + closest) }) else { return nil }
        return closest
    }

    /// Whether `path` leads to a regular file this process may execute. A folder passes
    /// `access(X_OK)` too, and as an `exec` entry (`exec = ["/"]`) its execute rule would let the
    /// plugin run, and read, everything beneath it.
    static func isExecutableFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }

    /// The system folders every process plugin reads: programs' libraries and data, and the
    /// few files of /etc and /dev a program needs to start.
    static let systemRead = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc/ld.so.cache",
                             "/etc/localtime", "/etc/alternatives", "/dev/urandom", "/dev/random", "/dev/zero"]
    /// What a plugin granted `net` reads besides: name resolution and certificates.
    static let networkRead = ["/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/ssl",
                              "/etc/ca-certificates", "/etc/host.conf"]
    /// The dynamic loaders, which the kernel executes with the program.
    static let loaders = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-x86-64.so.2"]
}
