import ArgumentParser
import CrescentKit
import Model

/// `crescent eval [NAME] 'CODE' [--json]`: runs a chunk in a running host and prints its value.
struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Run a chunk in a running host (see crescent ls); print its value, or its error and exit 1."
    )

    @Flag(help: "Print the value as JSON instead of inspect's text.")
    var json = false

    @Argument(help: ArgumentHelp("[NAME] CODE: the host (by name or pid; optional when one runs) and the chunk.", valueName: "words"))
    var words: [String] = []

    func validate() throws {
        // `crescent eval h1 1 + 1`: the shell split the code into words, and the message said to
        // give the code that was given.
        if words.count > 2 {
            let named = (try? RemoteHosts.resolve(words[0])) != nil
            let code = (named ? words.dropFirst() : words[...]).joined(separator: " ")
            let quoted = "'" + code.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
            throw ValidationError("the code is split over \(named ? words.count - 1 : words.count) words: quote it as one argument, "
                                  + "as crescent eval \(named ? words[0] + " " : "")\(quoted)")
        }
        guard (1...2).contains(words.count) else { throw ValidationError("give the code to run, after the host's name if several run") }
    }

    func run() throws {
        if words.count == 1, (try? RemoteHosts.resolve(words[0])) != nil {
            Crescent.usageError("eval: '\(words[0])' is the name of a listening host; give the code to run after it: crescent eval \(words[0]) 'CODE'")
        }
        let (host, rest) = RemoteCommandSupport.split(words, needs: 1)
        let client = RemoteCommandSupport.connect(host)
        switch RemoteCommandSupport.call(client, "eval", ["code": .string(rest[0])]) {
        case .success(let answer):
            writePrintedOutput(client)
            if json {
                // The host answers `valueError` for a value JSON cannot hold, in json.encode's words.
                if let refusal = answer["valueError"].stringValue {
                    ProcessIO.writeError("crescent: eval --json: \(refusal)\n")
                    throw ExitCode(1)
                }
                ProcessIO.writeOut(answer["value"].jsonText + "\n")
            } else if let text = answer["text"].stringValue, !text.isEmpty {
                ProcessIO.writeOut(text + "\n")
            }
        case .failure(let error):
            writePrintedOutput(client)
            ProcessIO.writeError("crescent: \(error.data?["traceback"].stringValue ?? error.message)\n")
            throw ExitCode(1)
        }
    }

    /// Writes what the chunk printed and the warnings it caused (stderr), which the host sends
    /// before its answer.
    private func writePrintedOutput(_ client: RemoteClient) {
        while case .notification("output", let params)? = try? client.nextMessage(timeout: 0) {
            let bytes = RemoteOutput.bytes(of: params)
            if params["stream"].stringValue == "stderr" { ProcessIO.writeError(bytes: bytes) } else { ProcessIO.writeOut(bytes: bytes) }
        }
    }
}
