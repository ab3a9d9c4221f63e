import Model
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

    /// The names of the subcommands, which a script's file name cannot shadow: the
    /// configurations' names, written out (a test keeps them equal). Reading them from the
    /// configurations made every `crescent SCRIPT.lua` run pay for ArgumentParser's reflection,
    /// which cost more than the whole of `crescent -e ''`.
    static let subcommandNames = ["run", "repl", "services", "test", "stubs", "init", "ls", "attach", "eval", "send", "view",
                                  "observe", "plugins", "plugin", "help"]

    static func main() {
        CrashReportSetting.apply()
        ResourceFloor.check()
        ProcessTuning.apply()
        let arguments = bareListen(Array(CommandLine.arguments.dropFirst()))
        if let (source, options) = quickRun(arguments) {
            ProcessIO.exit(RunCommand.start(source, options: options))
        }
        if arguments.count == 2, arguments[0] == "help", !subcommandNames.contains(arguments[1]) {
            // ArgumentParser's `help WORD` shows the root's help for any word it does not know.
            let closest = NameSuggestion.closest(to: arguments[1], among: subcommandNames, prefixes: false)
            usageError("help: no subcommand '\(arguments[1])'" + (closest.map { "; did you mean 'crescent help \($0)'?" } ?? " (crescent --help lists them)"))
        }
        if arguments.count >= 3, arguments[0] == "help", let message = misspelledSubcommand(Array(arguments.dropFirst())) {
            // `help plugin nwe` showed plugin's help as if `nwe` were not there.
            usageError("help: " + message)
        }
        if arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
            // The root's help, then the options of the default command, which are what most people want.
            ProcessIO.writeOut(shown(helpMessage() + "\n\n" + helpMessage(for: RunCommand.self)) + "\n")
            ProcessIO.exit(0)
        }
        if let help = helpWithDefaultSubcommand(arguments) {
            ProcessIO.writeOut(shown(help) + "\n")
            ProcessIO.exit(0)
        }
        let hoisted = hoistingSubcommand(arguments)
        if hoisted.first == "send", hoisted.count > 1, !["--help", "-h"].contains(hoisted[1]), !hoisted.contains("--") {
            // Its words are the host's, read as they are (``SendCommand/send(_:)``).
            SendCommand.send(Array(hoisted.dropFirst()))
            ProcessIO.exit(0)
        }
        dispatch(hoisted)
    }

    /// The help of a command that runs a default subcommand when given none (`crescent plugins
    /// --help`, `crescent help plugins`), followed by that subcommand's, whose options the command
    /// takes: ArgumentParser's alone lists only `--help` and `--version`. Nil for other commands.
    static func helpWithDefaultSubcommand(_ arguments: [String]) -> String? {
        var words = arguments
        if words.first == "help" {
            words.removeFirst()
        } else if words.last == "--help" || words.last == "-h" {
            words.removeLast()
        } else {
            return nil
        }
        guard let first = words.first, subcommandNames.contains(first), !words.contains(where: { $0.hasPrefix("-") }) else { return nil }
        var command: any ParsableCommand.Type = Crescent.self
        for word in words {
            guard let next = command.configuration.subcommands.first(where: { $0._commandName == word }) else { return nil }
            command = next
        }
        guard let fallback = command.configuration.defaultSubcommand else { return nil }
        let name = "crescent " + words.joined(separator: " ")
        return helpMessage(for: command) + "\n\n'\(name)' alone is '\(name) \(fallback._commandName)', which takes these options:\n\n"
            + helpMessage(for: fallback)
    }

    /// The commonest command lines: `crescent [options] SCRIPT.lua ARGS...`, `crescent [options]
    /// -e CODE [ARGS...]` (arguments not starting with `-`) and `crescent [options] [-]` (stdin,
    /// or the REPL on a terminal: a nil source), with the common options
    /// written as the usage text shows them (`--data-dir DIR`, `--fail-fast`, `--listen=NAME`).
    /// They skip ArgumentParser, whose parse costs several times the whole of `crescent -e ''` in
    /// a binary this size (reflecting on each option's wrapper, every new type scanning every
    /// protocol conformance), and mean exactly what the parser would make of them
    /// (a test compares the two). Anything else, a wrong value included, returns nil and is parsed.
    static func quickRun(_ arguments: [String]) -> (ScriptSource?, HostOptions)? {
        var settings = CommonSettings()
        var given: [String] = []
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("-"), arguments[index] != "-e", arguments[index] != "-" {
            let word = arguments[index]
            let takesValue = CommonOption.takesValue(word)
            let value = takesValue && index + 1 < arguments.count ? arguments[index + 1] : nil
            // A repeated option (but `--plugin`) and a value that looks like an option
            // (`--data-dir -x`) are the parser's to judge.
            let option = word.hasPrefix("--listen=") ? "--listen" : word
            guard option == "--plugin" || !given.contains(option), !(value?.hasPrefix("-") ?? false),
                  settings.set(word, value: value) else { return nil }
            given.append(option)
            index += takesValue ? 2 : 1
        }
        guard settings.problem == nil else { return nil }
        guard index < arguments.count else { return (nil, settings.hostOptions(arguments: [])) }
        let first = arguments[index]
        let rest = arguments[(index + 1)...]
        if first == "-" { return (.standardInput, settings.hostOptions(arguments: Array(rest))) }
        if first == "-e" {
            guard let code = rest.first, !rest.dropFirst().contains(where: { $0.hasPrefix("-") }) else { return nil }
            return (.code(code), settings.hostOptions(arguments: Array(rest.dropFirst())))
        }
        guard !subcommandNames.contains(first) else { return nil }
        return (.file(first), settings.hostOptions(arguments: Array(rest)))
    }

    /// `crescent [options] services` as `crescent services [options]`: the first word that is not
    /// an option or an option's value, when it names a subcommand, moves to the front, and with it
    /// the words after it that name its own subcommands (`crescent --data-dir D plugin check DIR`
    /// is `crescent plugin check --data-dir D DIR`: the options belong to `check`, and `plugin`
    /// takes none). A script's name stops the search (what follows it is the script's), and so
    /// does `-e` (every word after its code is the chunk's argument).
    static func hoistingSubcommand(_ arguments: [String]) -> [String] {
        var path: [Int] = []
        var command: (any ParsableCommand.Type)?
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "-e" || word == "--" { break }
            if word.hasPrefix("-") {
                index += CommonOption.takesValue(word) ? 2 : 1
                continue
            }
            if let parent = command {
                guard let next = parent.configuration.subcommands.first(where: { $0._commandName == word }) else { break }
                command = next
            } else {
                guard subcommandNames.contains(word) else { return arguments }
                command = Crescent.configuration.subcommands.first { $0._commandName == word }
            }
            path.append(index)
            index += 1
        }
        // Already in front: nothing to move.
        guard path != Array(0..<path.count) else { return arguments }
        return path.map { arguments[$0] } + arguments.indices.filter { !path.contains($0) }.map { arguments[$0] }
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
            index += CommonOption.takesValue(word) ? 2 : 1
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
                ProcessIO.writeOut(shown(fullMessage(for: error)) + "\n")
                ProcessIO.exit(0)
            }
            var message = withValueHint(message(for: error))
            if subcommandUsage(arguments)?.words == "test" { message = TestCommand.withBustedOption(message) }
            if let words = subcommandUsage(arguments)?.words { message = withRunOption(message, subcommand: words) }
            if let joined = joiningNegativeValue(arguments, message: message) { dispatch(joined) }
            usageError(misspelledSubcommand(arguments) ?? (message.isEmpty ? "invalid command line" : message), usage: subcommandUsage(arguments))
        }
    }

    /// ArgumentParser takes `-1` in `--timeout -1` for an option and says the value is missing;
    /// the arguments with that value joined to its option (`--timeout=-1`), so the command says
    /// what is wrong with the value, or nil when the message is another or the value no number.
    static func joiningNegativeValue(_ arguments: [String], message: String) -> [String]? {
        guard message.hasPrefix("Missing value for '--"),
              let option = message.dropFirst("Missing value for '".count).split(separator: " ").first.map(String.init),
              let index = arguments.firstIndex(of: option), index + 1 < arguments.count,
              arguments[index + 1].hasPrefix("-"), Double(arguments[index + 1]) != nil else { return nil }
        var joined = arguments
        joined[index] = option + "=" + arguments[index + 1]
        joined.remove(at: index + 1)
        return joined
    }

    /// ArgumentParser's "The value 'abc' is invalid for '--memory-limit <mib>'" with what the
    /// option takes, by the name its value is shown with: it says only that the value is wrong.
    static func withValueHint(_ message: String) -> String {
        let hints = [
            "<seconds>'": "give a number of seconds, such as 30 or 0.5",
            "<mib>'": "give a whole number of MiB, such as 512 (0 for no limit)",
            "<columns>'": "give a whole number of columns, such as 80",
        ]
        guard message.hasPrefix("The value '"), message.contains("' is invalid for '--"),
              let hint = hints.first(where: { message.hasSuffix($0.key) })?.value else { return message }
        return message + ": " + hint
    }

    /// ArgumentParser's "Unknown option '--ui'. Did you mean '--junit'?" for an option of a
    /// script run given to a subcommand that does not take it: the closest of the subcommand's
    /// own options was no relative of it, so the message says whose option it is.
    static func withRunOption(_ message: String, subcommand words: String) -> String {
        guard message.hasPrefix("Unknown option '--"),
              let option = message.dropFirst("Unknown option '".count).split(separator: "'").first.map(String.init),
              let common = CommonOption.spelled(option) else { return message }
        return "crescent \(words) takes no option '\(option)': \(common.spelling) is an option of a script run "
            + "(crescent [options] SCRIPT.lua); leave it out of 'crescent \(words)'"
    }

    /// `plugin: no subcommand 'chek'; did you mean 'crescent plugin check'?` when the word after
    /// a command that has subcommands names none of them (ArgumentParser only says "Unexpected
    /// argument"), else nil.
    static func misspelledSubcommand(_ arguments: [String]) -> String? {
        guard let named = namedSubcommand(arguments), let word = named.unknown else { return nil }
        let names = named.command.configuration.subcommands.map { $0._commandName }
        let words = named.words.joined(separator: " ")
        guard let closest = NameSuggestion.closest(to: word, among: names) else {
            return "\(words): no subcommand '\(word)' (subcommands: \(names.joined(separator: ", ")))"
        }
        return "\(words): no subcommand '\(word)'; did you mean 'crescent \(words) \(closest)'?"
    }

    /// The usage line of the subcommand `arguments` name (`crescent plugin check <dir>`), and the
    /// words that name it, or nil when they name none (a script run). Read from the
    /// configurations, which costs ArgumentParser's reflection: only on this error path.
    static func subcommandUsage(_ arguments: [String]) -> (usage: String, words: String)? {
        guard let named = namedSubcommand(arguments) else { return nil }
        return (shown(usageString(for: named.command)), named.words.joined(separator: " "))
    }

    /// The subcommand `arguments` name, the words that name it (options between them skipped:
    /// `plugins --data-dir D allow`) and, when that subcommand has subcommands of its own, the
    /// next word if it names none of them; nil for a script run.
    private static func namedSubcommand(_ arguments: [String]) -> (command: any ParsableCommand.Type, words: [String], unknown: String?)? {
        var command: any ParsableCommand.Type = Crescent.self
        var words: [String] = []
        var skipping = 0
        for word in arguments {
            if skipping > 0 || word.hasPrefix("-") {
                skipping = skipping > 0 ? skipping - 1 : (CommonOption.takesValue(word) ? 1 : 0)
                continue
            }
            if words.isEmpty, word == "run" || !subcommandNames.contains(word) { return nil }
            let subcommands = command.configuration.subcommands
            guard let next = subcommands.first(where: { $0._commandName == word }) else {
                return (command, words, subcommands.isEmpty ? nil : word)
            }
            command = next
            words.append(word)
        }
        return words.isEmpty ? nil : (command, words, nil)
    }

    /// Help and usage as the command line reads them: `--listen` takes a name only joined to it
    /// (`--listen=NAME`; alone it listens under the default name, and the next word is not its),
    /// which ArgumentParser, having no optional values, shows as `--listen <name>`.
    static func shown(_ text: String) -> String {
        // In the options' list the two more characters come out of the padding before the text.
        text.replacing("--listen <name>  ", with: "--listen[=<name>]").replacing("--listen <name>", with: "--listen[=<name>]")
    }

    /// Prints `crescent: reason` and exits 1: the command line was right, the command failed.
    static func fail(_ reason: String) -> Never {
        ProcessIO.writeError("crescent: \(reason)\n")
        ProcessIO.exit(1)
    }

    /// Prints `crescent: reason` and the usage of the subcommand at fault (the script run's
    /// when none is), and exits 2.
    static func usageError(_ reason: String, usage: (usage: String, words: String)? = nil) -> Never {
        // A subcommand's own refusal (`services locaton`, `init` into a full folder) shows that
        // subcommand's usage, read from the command line.
        let usage = usage ?? subcommandUsage(hoistingSubcommand(bareListen(Array(CommandLine.arguments.dropFirst()))))
        let hint = usage.map { "Usage: \($0.usage)  (see 'crescent \($0.words) --help')" } ?? usageHint
        ProcessIO.writeError("crescent: \(reason)\n\(hint)\n")
        ProcessIO.exit(2)
    }
}
