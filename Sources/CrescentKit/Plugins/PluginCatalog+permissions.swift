public import Model

/// The permission side of the plugin commands: the listing's PERMISSIONS and GRANT columns and
/// `crescent plugins allow NAME`.
extension PluginCatalog {
    /// The permissions in one cell of the listing (`read ~/Music; net *:443`), `-` for none.
    static func summary(_ manifest: PluginManifest, dataDirectory: String?) -> String {
        let permissions = manifest.permissions
        var parts: [String] = []
        for (field, items) in [("read", permissions.read), ("write", permissions.write), ("net", permissions.net),
                               ("exec", permissions.exec), ("env", permissions.env), ("collections", permissions.collections)] where !items.isEmpty {
            parts.append(field + " " + items.joined(separator: ","))
        }
        if permissions.native { parts.append("native (full access)") }
        if !permissions.services.isEmpty { parts.append("requires " + permissions.services.joined(separator: ",")) }
        if manifest.mayAdoptOwnCollection(dataDirectory: dataDirectory) { parts.append("may adopt your store collection \(manifest.name) once") }
        return parts.isEmpty ? "-" : parts.joined(separator: "; ")
    }

    /// A grant status in a word or three.
    static func grantText(_ status: PluginGrants.Status) -> String {
        switch status {
        case .notNeeded: "-"
        case .granted: "granted"
        case .notGranted(_, update: false): "not granted"
        case .notGranted(_, update: true): "asks for more than granted"
        }
    }

    /// The usable plugin named `name` that `options` finds (the first of that name).
    public static func find(_ name: String, plugins: [any Plugin], options: HostOptions) -> Result<PluginManifest, PluginProblem> {
        let found = PluginDiscovery.discover(options.pluginSearch ?? PluginSearch(), disabledNames: [],
                                             builtins: builtinServices(plugins: plugins, options: options))
        for plugin in found {
            switch plugin.status {
            case .ok(let manifest) where manifest.name == name, .disabled(let manifest) where manifest.name == name:
                return .success(manifest)
            case .broken(let problem) where plugin.folder.split(separator: "/").last.map(String.init) == name:
                // A manifest that does not load has no name: its folder's stands for it (also
                // `--plugin pc1`, a folder named without a slash).
                return .failure(problem)
            default:
                continue
            }
        }
        // `plugins allow fo` with plugins/foo: the name closest to one found.
        let names = found.compactMap { plugin -> String? in
            switch plugin.status {
            case .ok(let manifest), .disabled(let manifest): manifest.name
            default: nil
            }
        }
        let hint = NameSuggestion.closest(to: name, among: names).map { "; did you mean '\($0)'?" } ?? ""
        return .failure(PluginProblem("no plugin '\(name)' found\(hint) (crescent plugins lists the plugins found)"))
    }

    /// What `manifest` asks, as `crescent plugins allow`, `install` and the first touch's
    /// question show it: each path leading where `shown` says (else where it leads now). A long
    /// request opens with a summary (``PermissionSummary``); unless `full`, it then shows only
    /// its first entries and says where to read them all. Every line is ``terminalSafe(_:)``: a
    /// folder name (a cloned project's `plugins/NAME`) or a link's target is outside text.
    public static func permissionReport(_ manifest: PluginManifest, dataDirectory: String?,
                                        shown: PluginGrants.Snapshot? = nil, full: Bool = false) -> String {
        let status = PluginGrants(dataDirectory: dataDirectory).status(of: manifest)
        var lines = ["plugin '\(manifest.name)' \(manifest.version) (\(manifest.kind.name)) in \(manifest.folder) asks:"]
        let explanation = manifest.explanation(dataDirectory: dataDirectory, targets: shown?.targets)
        lines += PermissionSummary(manifest.permissions, explanation: explanation, folder: manifest.folder, full: full,
                                   targets: shown?.targets)
            .lines.map { "  " + $0 }
        if case .notGranted(let missing, let update) = status, update {
            lines.append("  beyond its earlier grant: " + missing.joined(separator: ", "))
        }
        lines.append("grant: " + grantText(status))
        return lines.map(terminalSafe).joined(separator: "\n")
    }

    /// `line` with what would change how a terminal shows it written as escapes: control
    /// characters (escape sequences, carriage returns, a newline that would start a forged
    /// line), bidirectional marks and invisible characters (``PluginPermissions/isInvisible``).
    /// Folder names and link targets come from whoever made them (attack new27g D2: a folder
    /// named with `ESC [2K CR` erased the question's header and wrote "grant: granted").
    public static func terminalSafe(_ line: String) -> String { terminalSafe(line, keepingLines: false) }

    /// ``terminalSafe(_:)``; with `keepingLines`, text of several lines keeps its newlines and tabs.
    public static func terminalSafe(_ line: String, keepingLines: Bool) -> String {
        func kept(_ scalar: Unicode.Scalar) -> Bool { keepingLines && (scalar == "\n" || scalar == "\t") }
        guard line.unicodeScalars.contains(where: { !kept($0) && (isDisplayHazard($0) || PluginPermissions.isInvisible($0)) }) else {
            return line
        }
        var shown = ""
        for scalar in line.unicodeScalars {
            switch scalar {
            case _ where kept(scalar): shown.unicodeScalars.append(scalar)
            case "\n": shown += "\\n"
            case "\r": shown += "\\r"
            case "\t": shown += "\\t"
            case _ where isDisplayHazard(scalar) || PluginPermissions.isInvisible(scalar):
                shown += escapeSequence(scalar)
            default: shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// `crescent plugins allow NAME`: records `manifest`'s permissions as granted. Answers what
    /// was recorded, or why not.
    /// `shown`: what the person was shown (``permissionReport(_:dataDirectory:shown:full:)``);
    /// nothing is recorded when it changed since.
    public static func allow(_ manifest: PluginManifest, dataDirectory: String?,
                             shown: PluginGrants.Snapshot? = nil) -> Result<String, PluginProblem> {
        var grants = PluginGrants(dataDirectory: dataDirectory)
        if manifest.permissions.asksNothing {
            return .success("plugin '\(manifest.name)' asks for nothing beyond its own folders: nothing to grant")
        }
        do throws(PluginProblem) {
            try grants.grant(manifest, shown: shown)
        } catch {
            return .failure(error)
        }
        return .success("granted: plugin '\(manifest.name)' \(manifest.version) (recorded in \(grants.path))")
    }

    /// The folder `path` as a grant names it (resolved): read before the folder is removed.
    public static func grantFolder(_ path: String) -> String { PluginSandbox.resolve(path) }

    /// Forgets the grant of plugin `name` in `folder` (``grantFolder(_:)``; `crescent plugins
    /// remove NAME`): a plugin of that name in another folder keeps its grant.
    public static func revoke(_ name: String, folder: String, dataDirectory: String?) -> PluginProblem? {
        var grants = PluginGrants(dataDirectory: dataDirectory)
        do throws(PluginProblem) {
            try grants.revoke(name, folder: folder)
        } catch {
            return error
        }
        return nil
    }
}

extension PluginManifest {
    /// What its permissions let it do (its data folder's owner read from `dataDirectory`), one line each (``PluginPermissions/explanation``), and
    /// for a Lua plugin requiring `store`, that its collections are its own: what a user
    /// reviewing it would otherwise take for the scripts' collections; and that it may copy
    /// your scripts' collection of its own name without a grant (``PluginStore/adopt(_:)``),
    /// which nothing showed.
    func explanation(dataDirectory: String?, targets: PluginPermissions.Targets? = nil) -> [String] {
        var lines = permissions.explanation(targets: targets)
        if case .lua = kind, requires.contains("store") {
            lines.append("always: keeps store collections of its own (plugin:\(name):NAME), apart from your scripts' "
                         + "and other plugins' (yours only as collections grants them)")
        }
        if mayAdoptOwnCollection(dataDirectory: dataDirectory) {
            lines.append("once: may copy your scripts' store collection '\(name)' into its own (store:adopt, which needs no grant for "
                         + "the collection named after the plugin; from another folder than the first with a plugin '\(name)' it needs "
                         + "collections = [\"\(name)\"])")
        } else if mayAdoptOwnCollection(dataDirectory: nil, anyFolder: true),
                  let first = PluginSandbox.dataFolderOwner(of: self, dataDirectory: dataDirectory) {
            lines.append("never: may not copy your scripts' store collection '\(name)' (store:adopt answers permission): the plugin '\(name)' "
                         + "in \(visible(first, limit: 1024)) ran first and owns that name; this copy needs collections = [\"\(name)\"] for it")
        }
        return lines
    }

    /// Whether it may adopt your scripts' store collection of its own name without asking: a
    /// Lua plugin requiring `store` whose `collections` does not already grant it, in the folder
    /// that owns its data folder (the first to run with that name, or none ran yet: the store
    /// lets only that one adopt, ``PluginSandbox/dataFolder(of:dataDirectory:)``). With
    /// `anyFolder` the folder is not looked at.
    func mayAdoptOwnCollection(dataDirectory: String?, anyFolder: Bool = false) -> Bool {
        guard case .lua = kind, requires.contains("store") else { return false }
        guard !permissions.collections.contains(name) && !permissions.collections.contains("*") else { return false }
        if anyFolder { return true }
        guard let first = PluginSandbox.dataFolderOwner(of: self, dataDirectory: dataDirectory) else { return true }
        return first == PluginSandbox.resolve(folder)
    }
}
