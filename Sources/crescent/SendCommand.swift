import ArgumentParser
import CrescentKit
import Model

/// `crescent send [NAME] COMMAND [ARGS...]`: a command to a running host's top controller;
/// `crescent send [NAME] --key KEY...`: keys pressed on it, as on its terminal.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a command to a running host's top controller (as app.send or a stdin line), or keys with --key.",
        discussion: "crescent send --key down enter presses keys (as app.press or the terminal would)."
    )

    @Argument(parsing: .captureForPassthrough,
              help: ArgumentHelp("[NAME] COMMAND [ARGS...] or [NAME] --key KEY...: the host (optional when one runs), then the command and its arguments, or the keys.", valueName: "words"))
    var words: [String] = []

    func validate() throws {
        guard !words.isEmpty else { throw ValidationError("give the command to send") }
        // Passthrough capture takes every word, so help is asked for here.
        if ["--help", "-h"].contains(words[0]) { throw CleanExit.helpRequest(self) }
    }

    func run() throws {
        if let keys = words.prefix(2).firstIndex(of: "--key") {
            let names = Array(words[(keys + 1)...])
            guard !names.isEmpty else { Crescent.usageError("send --key: give the keys to press, e.g. crescent send --key down enter") }
            let client = RemoteCommandSupport.connect(keys == 1 ? words[0] : nil)
            _ = RemoteCommandSupport.result(client, "key", ["keys": .array(names.map { .string($0) })])
            return
        }
        // The first word is the host when it names one that listens and a command follows.
        var words = self.words
        if words.count == 1, (try? RemoteHosts.resolve(words[0])) != nil {
            Crescent.usageError("send: '\(words[0])' is the name of a listening host; give the command to send after it: crescent send \(words[0]) COMMAND [ARGS...]")
        }
        var host: String?
        if words.count > 1, (try? RemoteHosts.resolve(words[0])) != nil { host = words.removeFirst() }
        let client = RemoteCommandSupport.connect(host)
        _ = RemoteCommandSupport.result(client, "send", ["command": .string(words[0]),
                                                         "args": .array(words.dropFirst().map { .string($0) })])
    }
}
