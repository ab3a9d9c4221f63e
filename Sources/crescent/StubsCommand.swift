import ArgumentParser
import CrescentKit
import Foundation
import Model

/// `crescent stubs [--out DIR]`: LuaLS annotation files and `.luarc.json`, from the declarations.
struct StubsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stubs",
        abstract: "Write LuaLS (LuaCATS) annotation files for every global and service, and a .luarc.json beside them.",
        discussion: """
            The stubs go in DIR (default: types); .luarc.json goes in DIR's parent folder, pointing at DIR. \
            Stubs written before are rewritten; an existing .luarc.json keeps your settings and gets Crescent's added. \
            A file in DIR that crescent stubs did not write, or a .luarc.json that is not a JSON object, is never overwritten.
            """
    )

    @Option(help: ArgumentHelp("The folder for the annotation files.", valueName: "dir"))
    var out = "types"

    @Option(help: ArgumentHelp("The config file (default: crescent.toml in the current folder).", valueName: "file"))
    var config: String?

    func validate() throws {
        if out.isEmpty { throw ValidationError("--out is empty; name a folder (. for the current one)") }
    }

    func run() throws {
        var options = HostOptions()
        options.configPath = config
        let entries: [ServiceEntry]
        do throws(HostSetupError) {
            entries = try ServiceFactory.entries(plugins: [.standard], options: options)
        } catch {
            Crescent.usageError(error.description)
        }
        let plan: StubsPlan
        do throws(ProjectFiles.Failure) {
            plan = try StubsPlan(entries: entries, folder: out)
        } catch {
            Crescent.fail(error.description)
        }
        // Refusals for the files there, not the command line: exit 1 without a usage line.
        if !plan.refusals.isEmpty { Crescent.fail(plan.refusals.joined(separator: "; ")) }
        do throws(ProjectFiles.Failure) {
            ProcessIO.writeOut(try plan.write().joined(separator: "\n") + "\n")
            if let warning = plan.runtimeWarning { ProcessIO.writeError("crescent: " + warning + "\n") }
        } catch {
            Crescent.fail(error.description)
        }
    }
}
