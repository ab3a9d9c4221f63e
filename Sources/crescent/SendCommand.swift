import ArgumentParser
import CrescentKit
import Model

/// `crescent send [NAME] COMMAND [ARGS...]`: a command to a running host's top controller.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a command to a running host's top controller (as app.send or a stdin line)."
    )

    @Argument(parsing: .captureForPassthrough,
              help: ArgumentHelp("[NAME] COMMAND [ARGS...]: the host (optional when one runs), the command and its arguments.", valueName: "words"))
    var words: [String] = []

    func validate() throws {
        guard !words.isEmpty else { throw ValidationError("give the command to send") }
        // Passthrough capture takes every word, so help is asked for here.
        if ["--help", "-h"].contains(words[0]) { throw CleanExit.helpRequest(self) }
    }

    func run() throws {
        // The first word is the host when it names one that listens and a command follows.
        var words = self.words
        var host: String?
        if words.count > 1, (try? RemoteHosts.resolve(words[0])) != nil { host = words.removeFirst() }
        let client = RemoteCommandSupport.connect(host)
        _ = RemoteCommandSupport.result(client, "send", ["command": .string(words[0]),
                                                         "args": .array(words.dropFirst().map { .string($0) })])
    }
}
