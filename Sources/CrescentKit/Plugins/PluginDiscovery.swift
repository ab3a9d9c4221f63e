import Model
import Services
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where a host looks for plugin folders, and what it found.
///
/// The order is DESIGN.md's: each `--plugin DIR`, `plugins/` beside the running script, `plugins/`
/// in the current folder, `$XDG_DATA_HOME/crescent/plugins` (default
/// `~/.local/share/crescent/plugins`). A DIR that holds a `plugin.toml` is one plugin; any other
/// folder is searched one level down. The first plugin of a name wins; a later one of the same
/// name is listed as shadowed and not loaded.
public struct PluginSearch: Sendable {
    /// `--plugin DIR`, in order.
    public var folders: [String] = []
    /// The running script, whose folder may hold `plugins/`.
    public var scriptPath: String?
    /// `--no-plugins`: only the builtin plugins.
    public var disabled = false
    /// Only the `folders` given (`crescent plugin check DIR`), not the usual places.
    public var onlyFolders = false
    /// Keeps what the first discovery found for the hosts that follow (`crescent test` makes a
    /// host per test; the folders do not change within one run). Nil: every host looks again.
    public var memo: DiscoveryMemo?

    public init(folders: [String] = [], scriptPath: String? = nil, disabled: Bool = false, onlyFolders: Bool = false) {
        self.folders = folders
        self.scriptPath = scriptPath
        self.disabled = disabled
        self.onlyFolders = onlyFolders
    }

    /// The folders searched, in order, without repeats.
    func roots() -> [(path: String, isGiven: Bool)] {
        var roots = folders.map { ($0, true) }
        if onlyFolders { return roots }
        if let scriptPath {
            let folder = scriptPath.contains("/") ? String(scriptPath[..<(scriptPath.lastIndex(of: "/") ?? scriptPath.endIndex)]) : "."
            roots.append(((folder.isEmpty ? "" : folder) + "/plugins", false))
        }
        roots.append(("plugins", false))
        if let user = Self.userFolder() { roots.append((user, false)) }
        // An array, not a `Set<String>`: a handful of folders, and a run's first `Set<String>`
        // costs the Swift runtime a scan of every protocol conformance in the binary.
        var seen: [String] = []
        return roots.filter { root in
            let path = Self.canonical(root.0)
            guard !seen.contains(path) else { return false }
            seen.append(path)
            return true
        }
    }

    /// The user's plugin folder, `$XDG_DATA_HOME/crescent/plugins` (default
    /// `~/.local/share/crescent/plugins`): where `crescent plugins install` puts plugins.
    public static func userFolder() -> String? {
        (try? StoreSettings.defaultDataFolder()).map { $0 + "/plugins" }
    }

    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// One plugin folder found, and whether it can be used.
public struct DiscoveredPlugin: Sendable {
    public enum Status: Sendable {
        case ok(PluginManifest)
        /// Named in `[plugins] disabled`.
        case disabled(PluginManifest)
        /// A plugin of the same name was found first, in `folder`.
        case shadowed(PluginManifest, by: String)
        /// Cannot be used; the problem names the file and the field.
        case broken(PluginProblem)
    }

    public let folder: String
    public var status: Status

    /// The manifest when it could be read.
    public var manifest: PluginManifest? {
        switch status {
        case .ok(let manifest), .disabled(let manifest), .shadowed(let manifest, _): manifest
        case .broken: nil
        }
    }
}

/// Finds and checks the plugins of a run.
public enum PluginDiscovery {
    /// The plugin folders `search` finds, each with its status, in search order. Nothing runs.
    ///
    /// - Parameters:
    ///   - disabledNames: `[plugins] disabled` of `crescent.toml`.
    ///   - builtins: the services the builtin plugins provide, which no plugin may provide again.
    public static func discover(_ search: PluginSearch, disabledNames: [String], builtins: [String],
                                hostVersion: String = CrescentVersion.current) -> [DiscoveredPlugin] {
        resolve(scan(search, hostVersion: hostVersion), disabledNames: disabledNames, builtins: builtins)
    }

    /// The plugin folders `search` finds, each with its manifest read and checked on its own (or
    /// what is wrong with it), in search order: the file work of a discovery, which a memoised
    /// search does once per run.
    static func scan(_ search: PluginSearch, hostVersion: String = CrescentVersion.current) -> [DiscoveredPlugin] {
        guard !search.disabled else { return [] }
        if let memo = search.memo { return memo.found { scan(withoutMemo(search), hostVersion: hostVersion) } }
        var found: [DiscoveredPlugin] = []
        for root in search.roots() {
            for folder in pluginFolders(in: root.path, given: root.isGiven) {
                let status: DiscoveredPlugin.Status
                do throws(PluginProblem) {
                    status = .ok(try PluginManifest.load(folder: folder, hostVersion: hostVersion))
                } catch {
                    status = .broken(error)
                }
                found.append(DiscoveredPlugin(folder: folder, status: status))
            }
        }
        return found
    }

    /// What a scan `found` means for a run: a later plugin of a name already found is shadowed,
    /// one named in `disabledNames` is disabled, and one that provides a service already provided
    /// (by `builtins` or a plugin before it) or requires a service nobody provides is broken.
    static func resolve(_ found: [DiscoveredPlugin], disabledNames: [String], builtins: [String]) -> [DiscoveredPlugin] {
        guard !found.isEmpty else { return found }
        var found = found
        // Arrays searched in order rather than sets and dictionaries: a few dozen names, and a
        // run's first `Set<String>` costs the Swift runtime a scan of every protocol conformance.
        var providers: (services: [String], owners: [String]) = (builtins, builtins.map { _ in "the builtin plugins" })
        var names: (plugins: [String], folders: [String]) = ([], [])
        var available = builtins
        for plugin in found {
            for service in plugin.manifest?.services ?? [] { available.append(service) }
        }
        for index in found.indices {
            guard case .ok(let manifest) = found[index].status else { continue }
            if let first = names.plugins.firstIndex(of: manifest.name) {
                found[index].status = .shadowed(manifest, by: names.folders[first])
                continue
            }
            names.plugins.append(manifest.name)
            names.folders.append(manifest.folder)
            if disabledNames.contains(manifest.name) {
                found[index].status = .disabled(manifest)
                continue
            }
            if let provider = manifest.services.lazy.compactMap({ providers.services.firstIndex(of: $0) }).first {
                found[index].status = .broken(PluginProblem("\(manifest.path): field 'services': service '\(providers.services[provider])' is already provided by \(providers.owners[provider]) (two plugins cannot provide one service; disable one in [plugins] disabled)"))
                continue
            }
            if let missing = manifest.requires.first(where: { !available.contains($0) }) {
                // The services there are, and the closest (`locaton` named none).
                let listing = NameSuggestion.listing("services", available.sorted(), suggesting: NameSuggestion.closest(to: missing, among: available))
                found[index].status = .broken(PluginProblem("\(manifest.path): field 'requires': no plugin provides service '\(missing)' (\(listing))"))
                continue
            }
            for service in manifest.services {
                providers.services.append(service)
                providers.owners.append("the plugin in \(manifest.folder)")
            }
        }
        refuseCycles(in: &found)
        return found
    }

    /// Marks broken every usable plugin on a cycle of requirements (`a` requires a service of
    /// `b`, which requires one of `a`), naming the cycle: starting either would touch the other
    /// while it is still starting.
    static func refuseCycles(in found: inout [DiscoveredPlugin]) {
        let usable = found.indices.filter { index in
            if case .ok = found[index].status { return true }
            return false
        }
        // For each plugin, the usable plugins whose services it requires, and through which service.
        var edges = [[(to: Int, service: String)]](repeating: [], count: found.count)
        for index in usable {
            for service in found[index].manifest?.requires ?? [] {
                if let provider = usable.first(where: { found[$0].manifest?.services.contains(service) == true }) {
                    edges[index].append((provider, service))
                }
            }
        }
        guard edges.contains(where: { !$0.isEmpty }) else { return }
        enum Mark { case unseen, onPath, done }
        var marks = [Mark](repeating: .unseen, count: found.count)
        var path: [Int] = []
        var via: [String] = []
        var cycles: [(plugins: [Int], services: [String])] = []
        func visit(_ node: Int) {
            marks[node] = .onPath
            path.append(node)
            for edge in edges[node] {
                switch marks[edge.to] {
                case .onPath:
                    // Invariant: a plugin marked onPath is on `path`.
                    let start = path.firstIndex(of: edge.to) ?? 0
                    cycles.append((Array(path[start...]), Array(via[start...]) + [edge.service]))
                case .unseen:
                    via.append(edge.service)
                    visit(edge.to)
                    via.removeLast()
                case .done:
                    break
                }
            }
            path.removeLast()
            marks[node] = .done
        }
        for index in usable where marks[index] == .unseen { visit(index) }
        for cycle in cycles {
            let names = cycle.plugins.map { found[$0].manifest?.name ?? "?" }
            for (position, plugin) in cycle.plugins.enumerated() {
                guard case .ok(let manifest) = found[plugin].status else { continue }
                // The cycle told from this plugin round to it again.
                var steps: [String] = []
                for step in 0..<cycle.plugins.count {
                    let at = (position + step) % cycle.plugins.count
                    let next = names[(at + 1) % cycle.plugins.count]
                    steps.append("service '\(cycle.services[at])' of plugin '\(next)'")
                }
                let told = "plugin '\(manifest.name)' requires " + steps.joined(separator: ", which requires ")
                found[plugin].status = .broken(PluginProblem("\(manifest.path): field 'requires': \(told): plugins cannot require each other's services in a cycle (remove one of these requirements)"))
            }
        }
    }

    /// `root` itself when it holds a manifest, else its subfolders that do (a given `--plugin`
    /// folder that holds neither is reported as broken).
    private static func pluginFolders(in root: String, given: Bool) -> [String] {
        if access(PluginManifest.path(in: root), F_OK) == 0 { return [root] }
        guard let names = Folders.names(in: root) else { return given ? [root] : [] }
        var folders: [String] = []
        for name in names {
            guard !name.hasPrefix(".") else { continue }
            let folder = root + "/" + name
            if access(PluginManifest.path(in: folder), F_OK) == 0 { folders.append(folder) }
        }
        return folders.sorted()
    }
}

private func withoutMemo(_ search: PluginSearch) -> PluginSearch {
    var search = search
    search.memo = nil
    return search
}

/// What the first scan of a run found, for the hosts that follow (see ``PluginSearch/memo``).
public final class DiscoveryMemo: Sendable {
    private let remembered = Mutex<[DiscoveredPlugin]?>(nil)

    public init() {}

    /// What was found, scanning with `scan` the first time.
    func found(_ scan: () -> [DiscoveredPlugin]) -> [DiscoveredPlugin] {
        if let remembered = remembered.withLock({ $0 }) { return remembered }
        let found = scan()
        remembered.withLock { $0 = found }
        return found
    }
}
