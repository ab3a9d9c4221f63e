import ArgumentParser
import CrescentKit

/// `crescent`: run Lua controller scripts against Crescent's services.
///
/// The words after `crescent` choose a subcommand (`run`, `repl`, `services`); anything else is the
/// default `run`, so `crescent script.lua`, `crescent -e CODE` and `crescent < script.lua` all work,
/// `crescent` alone on a terminal opens the REPL, and `--help` lists the options that matter.
@main
enum Crescent {
    static let usageHint = "Usage: crescent [options] SCRIPT.lua [ARGS...]  (see 'crescent --help')"

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if let (source, scriptArguments) = plainRun(arguments) {
            ProcessIO.exit(RunCommand.execute(source, options: CommonOptions.hostOptions(arguments: scriptArguments)))
        }
        switch arguments.first {
        case "run":
            arguments.removeFirst()
        case "services":
            dispatch(ServicesCommand.self, Array(arguments.dropFirst()))
        case "repl":
            dispatch(ReplCommand.self, Array(arguments.dropFirst()))
        case "plugins":
            dispatch(PluginsCommand.self, Array(arguments.dropFirst()))
        case "plugin":
            dispatch(PluginCommand.self, Array(arguments.dropFirst()))
        default:
            break
        }
        dispatch(RunCommand.self, arguments)
    }

    /// The two commonest command lines, with no option to parse: `crescent SCRIPT.lua ARGS...` and
    /// `crescent -e CODE [ARGS...]` (arguments not starting with `-`). They skip ArgumentParser,
    /// whose first parse costs milliseconds of start-up in a binary this size, and mean exactly
    /// what the parser would make of them. Anything else returns nil and is parsed.
    static func plainRun(_ arguments: [String]) -> (ScriptSource, [String])? {
        guard let first = arguments.first else { return nil }
        if first == "-e" {
            guard arguments.count >= 2, !arguments.dropFirst(2).contains(where: { $0.hasPrefix("-") }) else { return nil }
            return (.code(arguments[1]), Array(arguments.dropFirst(2)))
        }
        guard !first.hasPrefix("-"), !["run", "services", "repl", "help", "plugins", "plugin"].contains(first) else { return nil }
        return (.file(first), Array(arguments.dropFirst()))
    }

    /// Parses `arguments` as `command` and maps every outcome to DESIGN.md's exit statuses: the
    /// script's own status, 0 for help and version, 2 for usage errors.
    static func dispatch(_ command: any ParsableCommand.Type, _ arguments: [String]) -> Never {
        do {
            var parsed = try command.parseAsRoot(arguments)
            try parsed.run()
            ProcessIO.exit(0)
        } catch let status as ExitCode {
            ProcessIO.exit(status.rawValue)
        } catch {
            if command.exitCode(for: error) == .success {
                ProcessIO.writeOut(command.fullMessage(for: error) + "\n")
                ProcessIO.exit(0)
            }
            let message = command.message(for: error)
            usageError(message.isEmpty ? "invalid command line" : message)
        }
    }

    /// Prints `crescent: reason` and the usage hint, and exits 2.
    static func usageError(_ reason: String) -> Never {
        ProcessIO.writeError("crescent: \(reason)\n\(usageHint)\n")
        ProcessIO.exit(2)
    }
}
