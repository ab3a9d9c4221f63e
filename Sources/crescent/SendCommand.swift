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
        Self.send(words)
    }

    /// `crescent send WORDS...` read without ArgumentParser (``Crescent/main()`` calls it with the
    /// words after `send`, unless they ask for help or hold `--`): its passthrough capture costs
    /// time in the square of the words (each one merged into a set of all the places before
    /// it), and `--key` takes up to ``RemoteServer/maxKeysPerRequest`` of them.
    static func send(_ words: [String]) {
        if let keys = words.prefix(2).firstIndex(of: "--key") {
            let names = Array(words[(keys + 1)...])
            guard !names.isEmpty else { Crescent.usageError("send --key: give the keys to press, e.g. crescent send --key down enter") }
            guard names.count <= RemoteServer.maxKeysPerRequest else {
                // The host refuses them too; said before connecting, with nothing pressed.
                Crescent.usageError("send --key: at most \(RemoteServer.maxKeysPerRequest) keys per request, got \(names.count); "
                                    + "nothing was pressed: send them in several requests")
            }
            let client = RemoteCommandSupport.connect(keys == 1 ? words[0] : nil)
            _ = RemoteCommandSupport.result(client, "key", ["keys": .array(names.map { .string($0) })])
            return
        }
        // `--keys` for `--key`: no command starts with "--", and the host would be told it is one.
        if let option = words.prefix(2).first(where: { $0.hasPrefix("--") }) {
            let hint = NameSuggestion.closest(to: option, among: ["--key"]).map { "; did you mean '\($0)'?" } ?? " (send takes --key)"
            Crescent.usageError("send: unknown option '\(option)'\(hint)")
        }
        // The first word is the host when it names one that listens and a command follows.
        var words = words
        if words.count > 1, (try? RemoteHosts.resolve(words[0])) == nil,
           let closest = NameSuggestion.closest(to: words[0], among: RemoteHosts.live().map(\.name)) {
            // `send groceris add milk`: a host's name misspelled, which the host would take as a command.
            Crescent.fail("send: no host named '\(words[0])'; did you mean 'crescent send \(closest) \(words.dropFirst().joined(separator: " "))'?")
        }
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
