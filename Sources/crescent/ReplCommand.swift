import ArgumentParser
import CrescentKit

/// `crescent repl`: the interactive prompt (also what `crescent` opens on a terminal). With stdin
/// not a terminal there is nobody to prompt: the input runs as a script, so pipes and tests work
/// (and input that does not compile says so: ``PipedReplNote``).
struct ReplCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "The interactive REPL: Lua at a prompt while the event loop keeps running.",
        // ArgumentParser shortens a long option list to a bare `<options>`, which reads as one
        // required argument; the options are listed below it.
        usage: "crescent repl [options]"
    )

    @OptionGroup var common: CommonOptions

    func run() throws {
        throw ExitCode(Self.start(common.hostOptions(arguments: [])))
    }

    /// Opens the REPL on a terminal, else runs stdin as a script; returns the exit status.
    static func start(_ options: HostOptions) -> Int32 {
        var options = options
        options.asksForPermissions = true
        guard ProcessIO.isTerminal(0) && ProcessIO.isTerminal(1) else {
            let bytes: [UInt8]
            do {
                bytes = try ScriptSource.standardInput.read()
            } catch {
                Crescent.usageError(error.description)
            }
            let status = ScriptRunner.run(.standardInput, bytes: bytes, options: options, plugins: [.standard])
            if status != 0, let note = PipedReplNote.note(for: bytes) { ProcessIO.writeError("crescent: note: \(note)\n") }
            return status
        }
        let banner = "Crescent \(CrescentVersion.current) (Lua 5.4). .help for help, Ctrl-D to leave."
        return ReplRunner.run(options: options, plugins: [.standard], banner: banner)
    }
}
