import ArgumentParser
import CrescentKit

/// `crescent attach [NAME|PID]`: a REPL inside a running host.
struct AttachCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attach",
        abstract: "A REPL inside a running host: chunks run there, Ctrl-C interrupts one, Ctrl-D detaches."
    )

    @Argument(help: ArgumentHelp("The host, by name or pid (optional when one runs).", valueName: "name|pid"))
    var name: String?

    func run() throws {
        throw ExitCode(RemoteAttach.run(target: name))
    }
}
