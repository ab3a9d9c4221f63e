import ArgumentParser
import CrescentKit

/// `crescent`: run Lua controller scripts against Crescent's services.
///
/// One root command with subcommands; `run` is the default, so `crescent script.lua`,
/// `crescent -e CODE` and `crescent < script.lua` all run, and `crescent` alone on a terminal
/// opens the REPL. Options may come before the subcommand's name (`crescent --data-dir X
/// services`) as the usage text shows them. Every outcome maps to DESIGN.md's exit statuses: the
/// script's own, 0 for help and version, 2 for usage errors.
@main
struct Crescent: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crescent",
        abstract: "A scripting host: Lua 5.4 controllers over a Swift model of services.",
        usage: """
            crescent [options] SCRIPT.lua [ARGS...]   run a script (same as: crescent run SCRIPT.lua)
              crescent [options] -e 'CODE' [ARGS...]    run a chunk
              crescent [options] < SCRIPT.lua           run the script on stdin
              crescent [options] [repl]                 the interactive REPL (stdin a terminal)
              crescent [options] services [NAME]        the services and their documentation
              crescent test [PATH...]                   run *_spec.lua files in virtual time
              crescent stubs [--out DIR]                LuaLS annotations and .luarc.json
              crescent init [DIR]                       a new project
              crescent ls                               running hosts that listen (--listen)
              crescent attach [NAME|PID]                a REPL inside a running host
              crescent eval [NAME] 'CODE' [--json]      run a chunk in a running host
              crescent send [NAME] COMMAND [ARGS...]    a command to a running host's top controller
              crescent view [NAME] [--watch] [--json]   a running host's view
              crescent observe [NAME] SERVICE KEY       a running host's property, one JSON line per change
              crescent [options] plugins                the plugins found, their services and status
              crescent plugin new NAME --lua|--process [DIR]   a working plugin skeleton
              crescent [options] plugin check DIR       validate a plugin folder
            """,
        discussion: """
            Exit status: 0 success; 1 an uncaught error, or an error reported from a handler \
            (timer, task, observer) during the run; 2 a usage error; 130 after SIGINT, 143 after SIGTERM.
            """,
        version: CrescentVersion.current,
        subcommands: [RunCommand.self, ReplCommand.self, ServicesCommand.self, TestCommand.self, StubsCommand.self, InitCommand.self,
                      LsCommand.self, AttachCommand.self, EvalCommand.self, SendCommand.self, ViewCommand.self, ObserveCommand.self,
                      PluginsCommand.self, PluginCommand.self],
        defaultSubcommand: RunCommand.self
    )

    static let usageHint = "Usage: crescent [options] SCRIPT.lua [ARGS...]  (see 'crescent --help')"

    /// The names of the subcommands, which a script's file name cannot shadow.
    static let subcommandNames: Set<String> = Set(configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"])

    static func main() {
        ProcessTuning.apply()
        let arguments = bareListen(Array(CommandLine.arguments.dropFirst()))
        if let (source, scriptArguments) = plainRun(arguments) {
            ProcessIO.exit(RunCommand.execute(source, options: CommonOptions.defaultHostOptions(arguments: scriptArguments)))
        }
        if arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
            // The root's help, then the options of the default command, which are what most people want.
            ProcessIO.writeOut(helpMessage() + "\n\n" + helpMessage(for: RunCommand.self) + "\n")
            ProcessIO.exit(0)
        }
        dispatch(hoistingSubcommand(arguments))
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
        guard !first.hasPrefix("-"), !subcommandNames.contains(first) else { return nil }
        return (.file(first), Array(arguments.dropFirst()))
    }

    /// `crescent [options] services` as `crescent services [options]`: the first word that is not
    /// an option or an option's value, when it names a subcommand, moves to the front. A script's
    /// name stops the search (what follows it is the script's), and so does `-e` (every word after
    /// its code is the chunk's argument).
    static func hoistingSubcommand(_ arguments: [String]) -> [String] {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "-e" || word == "--" { return arguments }
            if word.hasPrefix("-") {
                index += CommonOptions.valuedOptions.contains(word) ? 2 : 1
                continue
            }
            guard subcommandNames.contains(word), index > 0 else { return arguments }
            var reordered = arguments
            reordered.remove(at: index)
            reordered.insert(word, at: 0)
            return reordered
        }
        return arguments
    }

    /// `--listen` takes its name only as `--listen=NAME`, so a bare one (before the script: later
    /// words are the script's) becomes `--listen=-`, the default name.
    static func bareListen(_ arguments: [String]) -> [String] {
        var result = arguments
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "-e" || word == "--" || !word.hasPrefix("-") { break }
            if word == "--listen" { result[index] = "--listen=" + CommonOptions.defaultListenName }
            index += CommonOptions.valuedOptions.contains(word) ? 2 : 1
        }
        return result
    }

    /// Parses `arguments` and runs the command they name, mapping every outcome to an exit status.
    static func dispatch(_ arguments: [String]) -> Never {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            ProcessIO.exit(0)
        } catch let status as ExitCode {
            ProcessIO.exit(status.rawValue)
        } catch {
            if exitCode(for: error) == .success {
                ProcessIO.writeOut(fullMessage(for: error) + "\n")
                ProcessIO.exit(0)
            }
            let message = message(for: error)
            usageError(message.isEmpty ? "invalid command line" : message)
        }
    }

    /// Prints `crescent: reason` and the usage hint, and exits 2.
    static func usageError(_ reason: String) -> Never {
        ProcessIO.writeError("crescent: \(reason)\n\(usageHint)\n")
        ProcessIO.exit(2)
    }
}
