import ArgumentParser
import CrescentKit

/// `crescent plugins`: every plugin found, its services and status.
struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "List the plugins found (builtin and in plugin folders): name, version, kind, folder, services, status."
    )

    @OptionGroup var common: CommonOptions

    func run() throws {
        switch PluginCatalog.listing(plugins: [.standard], options: common.hostOptions(arguments: [])) {
        case .success(let text): ProcessIO.writeOut(text + "\n")
        case .failure(let error): Crescent.usageError(error.description)
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

        @Argument(help: ArgumentHelp("The plugin's name ([a-z][a-z0-9_]*), also its service's.", valueName: "name"))
        var name: String

        @Flag(help: "A Lua plugin (main.lua).")
        var lua = false

        @Flag(help: "A process plugin (main.py, Python 3).")
        var process = false

        @Argument(help: ArgumentHelp("The folder to write (default: plugins/NAME).", valueName: "dir"))
        var folder: String?

        func validate() throws {
            guard lua != process else { throw ValidationError("choose one of --lua or --process") }
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

        @OptionGroup var common: CommonOptions

        @Argument(help: ArgumentHelp("The plugin folder.", valueName: "dir"))
        var folder: String

        func run() throws {
            let (ok, text) = PluginCatalog.check(folder: folder, plugins: [.standard], options: common.hostOptions(arguments: []))
            ProcessIO.writeOut(text + "\n")
            if !ok { throw ExitCode(1) }
        }
    }
}
