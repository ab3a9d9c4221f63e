import Model
import ArgumentParser
import CrescentKit
#if canImport(Glibc)
import Glibc
#endif

/// `crescent run SCRIPT.lua [ARGS...]`, also what `crescent SCRIPT.lua`, `crescent -e` and a
/// script piped on stdin run.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a script, a chunk (-e) or stdin; the REPL when there is none and stdin is a terminal."
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .customShort("e"), help: ArgumentHelp("Run CODE instead of a script file (repeated: each chunk in order).",
                                                         valueName: "code"))
    var code: [String] = []

    @Argument(help: ArgumentHelp("The script to run ('-' for stdin), then its arguments.", valueName: "script"))
    var script: String?

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Arguments for the script (arg[1], ...).", valueName: "args"))
    var arguments: [String] = []

    func run() throws {
        let (source, arguments) = sourceAndArguments
        var options = common.hostOptions(arguments: arguments)
        options.precedingChunks = Array(code.dropLast())
        throw ExitCode(Self.start(source, options: options))
    }

    /// Runs `source`; with none, the REPL when stdin is a terminal, else the script on stdin.
    /// Returns the exit status.
    static func start(_ source: ScriptSource?, options: HostOptions) -> Int32 {
        if let source { return execute(source, options: options) }
        if ProcessIO.isTerminal(0) { return ReplCommand.start(options) }
        return execute(.standardInput, options: options)
    }

    /// What the command line names to run, and the script's arguments: nil for no script
    /// (the REPL on a terminal, else stdin).
    var sourceAndArguments: (ScriptSource?, [String]) {
        if let code = code.last {
            // With -e, every positional word is an argument of the chunk; the chunks before the
            // last run first (``HostOptions/precedingChunks``).
            return (.code(code), (script.map { [$0] } ?? []) + arguments)
        }
        if let script { return (script == "-" ? .standardInput : .file(script), arguments) }
        return (nil, arguments)
    }

    /// `; did you mean 'groc.lua'?` when a script that cannot be read is named without the
    /// `.lua` of a file that is there (`crescent groc`, `crescent proj/main`); `; did you mean
    /// 'crescent services'?` when it is named like a misspelled subcommand (a bare word, not a
    /// path or a `.lua` file); else nothing.
    static func subcommandHint(_ source: ScriptSource) -> String {
        if case .file(let path) = source, !path.hasSuffix(".lua"), access(path + ".lua", F_OK) == 0 {
            return "; did you mean '\(path).lua'?"
        }
        guard case .file(let path) = source, !path.contains("/"), !path.hasSuffix(".lua"),
              let closest = NameSuggestion.closest(to: path, among: Crescent.subcommandNames, prefixes: false)
        else { return "" }
        return "; did you mean 'crescent \(closest)'?"
    }

    /// A note when the script's arguments hold crescent's own options (`crescent opt.lua
    /// --location fixed:1,2`): they go to the script, as `lua` passes them, so the run does not
    /// have them; the note says so and shows the command line with them before the script.
    /// Nil when there are none.
    static func misplacedOptionNote(script: String, arguments: [String]) -> String? {
        var moved: [String] = [], corrected: [String] = [], misspelled: [String] = []
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            var option = CommonOption.spelled(word)
            // A letter or two from crescent's own (`--lcoation`): most likely meant for crescent
            // too. Short words (`--uid`) are left alone: too many scripts' own options are near `--ui`.
            if option == nil, word.hasPrefix("--"), word.count >= 7, !word.contains("="),
               let closest = NameSuggestion.closest(to: String(word.dropFirst(2)), among: CommonOption.all.map(\.name), prefixes: false) {
                option = CommonOption.all.first { $0.name == closest }
                if let option { misspelled.append("\(word) is not one of crescent's options; did you mean '\(option.spelling)'?") }
            }
            guard let option else {
                index += 1
                continue
            }
            moved.append(word)
            corrected.append(word.hasPrefix(option.spelling) ? word : option.spelling)
            if option.takesValue, index + 1 < arguments.count {
                moved.append(arguments[index + 1])
                corrected.append(arguments[index + 1])
            }
            index += option.takesValue ? 2 : 1
        }
        guard !moved.isEmpty else { return nil }
        let shown = moved.joined(separator: " ")
        let tail = misspelled.isEmpty ? "" : " (" + misspelled.joined(separator: "; ") + ")"
        return "crescent: note: \(shown) comes after \(script), so it is the script's argument (arg), not crescent's option; "
            + "to give it to crescent, put it before the script: crescent \(corrected.joined(separator: " ")) \(script)\(tail)\n"
    }

    /// Reads `source` and runs it; returns the exit status (an unreadable script is a usage error).
    static func execute(_ source: ScriptSource, options: HostOptions) -> Int32 {
        var options = options
        if case .file(let path) = source { options.pluginSearch?.scriptPath = path }
        options.asksForPermissions = true
        let bytes: [UInt8]
        do {
            bytes = try source.read()
        } catch {
            Crescent.usageError(error.description + subcommandHint(source))
        }
        if case .file(let path) = source, let note = misplacedOptionNote(script: path, arguments: options.arguments) {
            ProcessIO.writeError(note)
        }
        let readsStdin: Bool = if case .standardInput = source { false } else { true }
        // A person at a terminal drives the app with keys: stdin and stdout both a terminal, and
        // the view drawn live (`--ui plain` and `--ui json` keep the terminal as it is).
        let readsKeys = readsStdin && options.ui == .live && ProcessIO.isTerminal(0) && ProcessIO.isTerminal(1)
        // Otherwise stdin's lines are commands: piped ones, and lines typed on a terminal whose
        // keys the app does not take (they were echoed and dropped).
        let readsCommands = readsStdin && !readsKeys
        let status = ScriptRunner.run(source, bytes: bytes, options: options, plugins: [.standard],
                                      readsCommands: readsCommands, readsKeys: readsKeys)
        // `-e '1+1'` and `echo '1+1' | crescent`: typed as at the REPL's prompt.
        let typed: Bool = if case .file = source { false } else { true }
        if status != 0, typed, let note = PipedReplNote.valueAloneNote(for: bytes) {
            ProcessIO.writeError("crescent: note: \(note)\n")
        }
        return status
    }
}
