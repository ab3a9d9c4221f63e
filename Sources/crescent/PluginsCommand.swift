import ArgumentParser
import CrescentKit
import Model

/// `crescent plugins`: every plugin found, its services, permissions, grant and status; and
/// `plugins allow NAME`, `plugins install PATH|GIT-URL|ARCHIVE`, `plugins remove NAME`.
struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "List, allow, install and remove plugins.",
        subcommands: [List.self, Allow.self, Install.self, Remove.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the plugins found (builtin and in plugin folders): name, version, kind, folder, services, permissions, grant, status."
        )

        @OptionGroup var common: SetupOptions

        func run() throws {
            switch PluginCatalog.listing(plugins: [.standard], options: common.hostOptions()) {
            case .success(let text): ProcessIO.writeOut(text + "\n")
            case .failure(let error): Crescent.usageError(error.description)
            }
        }
    }

    struct Allow: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "allow",
            abstract: "Show what a plugin asks for and grant it (asks y/n on a terminal)."
        )

        @OptionGroup var common: SetupOptions

        @Argument(help: ArgumentHelp("The plugin's name.", valueName: "name"))
        var name: String

        func run() throws {
            let options = common.hostOptions()
            let manifest: PluginManifest
            switch PluginCatalog.find(name, plugins: [.standard], options: options) {
            case .success(let found): manifest = found
            case .failure(let problem): PluginInstaller.fail(problem.message)
            }
            // Where each path leads is read once: what is shown is what is recorded, and a link
            // re-pointed before the answer records nothing.
            let shown = PluginGrants.Snapshot(of: manifest)
            ProcessIO.writeOut(PluginCatalog.permissionReport(manifest, dataDirectory: options.dataDirectory, shown: shown) + "\n")
            if !manifest.permissions.asksNothing && !PluginInstaller.confirm("Grant plugin '\(manifest.name)' these permissions?") {
                PluginInstaller.fail("not granted")
            }
            switch PluginCatalog.allow(manifest, dataDirectory: options.dataDirectory, shown: shown) {
            case .success(let text): ProcessIO.writeOut(text + "\n")
            case .failure(let problem): PluginInstaller.fail(problem.message)
            }
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install",
            abstract: "Install a plugin from a folder, a git repository (path or URL) or a .tar.gz, without running it."
        )

        @OptionGroup var common: SetupOptions

        @Argument(help: ArgumentHelp("A plugin folder, a git repository or a .tar.gz archive.", valueName: "source"))
        var source: String

        @Flag(help: "Install an older version over a newer one installed (a downgrade) without asking.")
        var force = false

        func run() throws {
            let options = common.hostOptions()
            let builtins = PluginCatalog.builtinServices(plugins: [.standard], options: options)
            // A downgrade is asked on a terminal; elsewhere it needs --force (no one to ask).
            let downgrade: (PluginManifest, PluginManifest) -> Bool = { installed, incoming in
                force || (ProcessIO.isTerminal(0) && PluginInstaller.confirm(
                    "Plugin '\(installed.name)' \(installed.version) is installed; replace it with the older \(incoming.version) (a downgrade)?"))
            }
            switch PluginInstaller.install(source, builtins: builtins, downgrade: downgrade) {
            case .success(let manifest):
                ProcessIO.writeOut(PluginCatalog.terminalSafe("installed plugin '\(manifest.name)' \(manifest.version) in \(manifest.folder)") + "\n")
                ProcessIO.writeOut(PluginCatalog.permissionReport(manifest, dataDirectory: options.dataDirectory) + "\n")
                if case .notGranted = PluginGrants(dataDirectory: options.dataDirectory).status(of: manifest) {
                    ProcessIO.writeOut("it starts once granted: crescent plugins allow \(manifest.name)\n")
                }
            case .failure(let problem):
                PluginInstaller.fail(problem.message)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a plugin installed in the user's plugin folder, and its grant."
        )

        @OptionGroup var common: SetupOptions

        @Argument(help: ArgumentHelp("The plugin's name.", valueName: "name"))
        var name: String

        func run() throws {
            let options = common.hostOptions()
            // The grant names the folder resolved, which is possible only while it is there.
            let granted = PluginSearch.userFolder().map { PluginCatalog.grantFolder($0 + "/" + name) }
            switch PluginInstaller.remove(name) {
            case .success(let folder):
                if let problem = PluginCatalog.revoke(name, folder: granted ?? folder, dataDirectory: options.dataDirectory) {
                    PluginInstaller.fail(problem.message)
                }
                ProcessIO.writeOut("removed plugin '\(name)' (\(folder)) and its grant\n")
            case .failure(let problem):
                PluginInstaller.fail(problem.message)
            }
        }
    }
}

/// `crescent plugin new NAME --lua|--process [DIR]` and `crescent plugin check DIR`.
struct PluginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin",
        abstract: "Make or check a plugin folder.",
        subcommands: [New.self, Check.self]
    )

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "new", abstract: "Write a plugin skeleton that loads and works with no edits.")

        @Argument(help: ArgumentHelp("The plugin's name ([a-z][a-z0-9_]*, at most 64 characters), also its service's.", valueName: "name"))
        var name: String

        @Flag(help: "A Lua plugin (main.lua).")
        var lua = false

        @Flag(help: "A process plugin (main.py, Python 3).")
        var process = false

        @Argument(help: ArgumentHelp("The folder to write (default: plugins/NAME).", valueName: "dir"))
        var folder: String?

        func validate() throws {
            guard lua != process else {
                // `plugin new bar --lau`: the parser left the unknown option to this check, which
                // named the kind and hid the typo.
                let words = CommandLine.arguments.drop { $0 != "new" }.dropFirst().prefix { $0 != "--" }
                if let unknown = words.first(where: { $0.hasPrefix("-") && !["--lua", "--process"].contains($0) }) {
                    let hint = NameSuggestion.closest(to: unknown, among: ["--lua", "--process"]).map { " Did you mean '\($0)'?" } ?? ""
                    throw ValidationError("Unknown option '\(unknown)'.\(hint)")
                }
                throw ValidationError("choose one of --lua or --process")
            }
            // A name it cannot take is a usage error (exit 2, with this command's usage).
            do throws(PluginProblem) { try PluginSkeleton.checkName(name) } catch { throw ValidationError(error.message) }
        }

        func run() throws {
            do throws(PluginProblem) {
                let builtins = PluginCatalog.builtinServices(plugins: [.standard], options: HostOptions())
                let files = try PluginSkeleton.write(name: name, process: process, folder: folder ?? "plugins/\(name)", builtins: builtins)
                ProcessIO.writeOut(files.map { "wrote \($0)\n" }.joined())
            } catch {
                ProcessIO.writeError("crescent: \(error.message)\n")
                throw ExitCode(1)
            }
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "check", abstract: "Validate a plugin folder: its manifest, then the services it declares.")

        @OptionGroup var common: SetupOptions

        @Argument(help: ArgumentHelp("The plugin folder.", valueName: "dir"))
        var folder: String

        func run() throws {
            let (ok, text) = PluginCatalog.check(folder: folder, plugins: [.standard], options: common.hostOptions())
            ProcessIO.writeOut(text + "\n")
            if !ok { throw ExitCode(1) }
        }
    }
}
