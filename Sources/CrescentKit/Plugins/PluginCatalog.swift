public import Model
import NIOCore
import NIOPosix

/// What the plugin commands print: `crescent plugins` and `crescent plugin check DIR`.
public enum PluginCatalog {
    /// Every plugin found, builtins first: name, version, kind, folder, services and status (ok,
    /// disabled, shadowed, or the error).
    public static func listing(plugins: [any Plugin], options: HostOptions) -> Result<String, HostSetupError> {
        let builtins: [ServiceEntry]
        let found: [DiscoveredPlugin]
        let disabledNames: [String]
        do throws(HostSetupError) {
            var builtinOptions = options
            builtinOptions.pluginSearch = nil
            builtins = try ServiceFactory.entries(plugins: plugins, options: builtinOptions)
            disabledNames = PluginsSection(try ConfigFile.load(options.configPath).sections["plugins"]).disabled
        } catch {
            return .failure(error)
        }
        found = PluginDiscovery.discover(options.pluginSearch ?? PluginSearch(), disabledNames: disabledNames,
                                         builtins: builtins.map(\.name))
        let grants = PluginGrants(dataDirectory: options.dataDirectory)
        var rows: [[String]] = [["NAME", "VERSION", "KIND", "FOLDER", "SERVICES", "PERMISSIONS", "GRANT", "STATUS"]]
        for plugin in plugins {
            rows.append([plugin.name, CrescentVersion.current, "builtin", "-", builtins.map(\.name).joined(separator: ","), "-", "-", "ok"])
        }
        for plugin in found {
            let manifest = plugin.manifest
            let status = switch plugin.status {
            case .ok: "ok"
            case .disabled: "disabled"
            case .shadowed(_, let folder): "shadowed by \(folder)"
            case .broken(let problem): "error: \(problem.message)"
            }
            rows.append([manifest?.name ?? "?", manifest?.version ?? "?", manifest?.kind.name ?? "?", plugin.folder,
                         manifest?.services.joined(separator: ",") ?? "?", manifest.map { summary($0, dataDirectory: options.dataDirectory) } ?? "?",
                         manifest.map { grantText(grants.status(of: $0)) } ?? "?", status])
        }
        // Folder names and the messages naming them are outside text: one cell, one line.
        rows = rows.map { $0.map(terminalSafe) }
        let last = rows[0].count - 1
        let widths = (0..<last).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            (0..<last).map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count) }.joined(separator: "  ") + "  " + row[last]
        }
        // "not granted" alone pointed at `plugins allow`, which refuses to touch a broken file.
        var note = grants.problem.map { "\n\nthe grants file cannot be read, so no grant in it holds: \($0); fix or remove it" } ?? ""
        if let key = PluginGrantKey.problem() { note += "\n\nno grant holds: \(key)" }
        return .success(lines.joined(separator: "\n") + note)
    }

    /// Checks the plugin in `folder`: its manifest, then (starting it as a host would, without a
    /// script) the services it declares. Returns the report and whether the plugin is usable.
    public static func check(folder: String, plugins: [any Plugin], options: HostOptions) -> (ok: Bool, text: String) {
        let manifest: PluginManifest
        do throws(PluginProblem) {
            manifest = try PluginManifest.load(folder: folder, hostVersion: CrescentVersion.current)
        } catch {
            return (false, "error: \(terminalSafe(error.message))")
        }
        let header = terminalSafe("plugin '\(manifest.name)' \(manifest.version) (\(manifest.kind.name)) in \(folder)")
        let builtins = builtinServices(plugins: plugins, options: options)
        if let clash = manifest.services.first(where: builtins.contains) {
            let problem = "error: \(manifest.path): field 'services': service '\(clash)' is already provided by the builtin plugins, so every run skips this plugin; rename the service"
            return (false, [header, problem, "not usable"].joined(separator: "\n"))
        }
        let explanation = manifest.explanation(dataDirectory: options.dataDirectory)
        let permissions = ["permissions:"] + PermissionSummary(manifest.permissions, explanation: explanation, folder: manifest.folder, full: true)
            .lines.map { terminalSafe("  " + $0) }
        let status = PluginGrants(dataDirectory: options.dataDirectory).status(of: manifest)
        if case .notGranted = status {
            // Its code does not run before its user has granted what it asks.
            let key = PluginGrantKey.problem().map { "; \($0)" } ?? ""
            let note = "grant: \(grantText(status)): its services are not started (run crescent plugins allow \(manifest.name), then check again)\(key)"
            return (true, ([header] + permissions + [terminalSafe(note), "ok"]).joined(separator: "\n"))
        }
        let documented = started(manifest, services: manifest.services, plugins: plugins, options: options)
        return (documented.ok, ([header] + permissions + documented.lines + [documented.ok ? "ok" : "not usable"]).joined(separator: "\n"))
    }

    /// The full reference of service `name` when a plugin folder provides it (`crescent services
    /// NAME`): its plugin is started, as a host would, to learn its declaration; `ok` is false
    /// when it could not start. Nil when no usable plugin provides it.
    public static func documentation(ofPluginService name: String, plugins: [any Plugin], options: HostOptions) -> (ok: Bool, text: String)? {
        let builtins = builtinServices(plugins: plugins, options: options)
        guard !builtins.contains(name), let search = options.pluginSearch else { return nil }
        let found = PluginDiscovery.discover(search, disabledNames: [], builtins: builtins)
        for plugin in found {
            guard case .ok(let manifest) = plugin.status, manifest.services.contains(name) else { continue }
            let outcome = started(manifest, services: [name], plugins: plugins, options: options)
            return (outcome.ok, outcome.lines.joined(separator: "\n"))
        }
        // A plugin skipped for a broken manifest (one requiring its own service, say) says why,
        // as a run does, rather than "no service named" (harden4 H7): one whose folder has the
        // name, or whose problem names the service.
        let skipped = found.compactMap { plugin -> String? in
            guard case .broken(let problem) = plugin.status else { return nil }
            let folderName = plugin.folder.split(separator: "/").last.map(String.init)
            guard folderName == name || problem.message.contains("service '\(name)'") else { return nil }
            return "error: plugin in \(plugin.folder) skipped: \(problem.message)"
        }
        return skipped.isEmpty ? nil : (false, skipped.joined(separator: "\n"))
    }

    /// The services the builtin `plugins` provide, which no plugin folder may provide again.
    public static func builtinServices(plugins: [any Plugin], options: HostOptions) -> [String] {
        var builtinOnly = options
        builtinOnly.pluginSearch = nil
        return ((try? ServiceFactory.entries(plugins: plugins, options: builtinOnly)) ?? []).map(\.name)
    }

    /// Starts `manifest`'s plugin in a host of its own (no script runs) and documents `services`.
    private static func started(_ manifest: PluginManifest, services: [String], plugins: [any Plugin],
                                options: HostOptions) -> (ok: Bool, lines: [String]) {
        var options = options
        options.pluginSearch = PluginSearch(folders: [manifest.folder], onlyFolders: true)
        options.ui = .plain
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let outcome = Result { () throws -> (ok: Bool, lines: [String]) in
            try loop.submit { () throws -> (ok: Bool, lines: [String]) in
                let host = try Host(loop: loop, options: options, plugins: plugins) { _ in }
                defer { host.finish(status: 0) }
                var lines: [String] = []
                var ok = true
                for name in services {
                    guard let entry = host.binding.services.first(where: { $0.name == name }) else {
                        lines.append("error: service '\(name)' is not registered (see the messages above)")
                        ok = false
                        continue
                    }
                    do throws(ServiceError) {
                        lines.append(try entry.service().interface.documentation(as: "services.\(name)"))
                    } catch {
                        // Its start's error, with its traceback, is written above as the host
                        // skipped the plugin: once is enough, and "see `crescent plugin check`"
                        // is no advice inside it.
                        let skipped = error.message.hasPrefix(PluginLauncher.startFailure(of: manifest.name))
                        lines.append(skipped ? "error: plugin '\(manifest.name)' could not start (the error above)" : "error: \(error.message)")
                        ok = false
                    }
                }
                return (ok, lines)
            }.wait()
        }
        switch outcome {
        case .success(let result): return result
        case .failure(let error): return (false, ["error: \(error)"])
        }
    }
}
