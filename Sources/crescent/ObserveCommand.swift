import ArgumentParser
import CrescentKit
import Model

/// `crescent observe [NAME] SERVICE KEY`: a running host's property, one JSON line per change,
/// until interrupted or the host goes away (for shell pipelines and status bars).
struct ObserveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "observe",
        abstract: "Print a running host's property as one JSON line per change, until interrupted."
    )

    @Argument(help: ArgumentHelp("[NAME] SERVICE KEY: the host (optional when one runs), a service name or a Lua expression giving an object, and the property.", valueName: "words"))
    var words: [String] = []

    func validate() throws {
        if words.count > 3 {
            let extra = words.dropFirst(3).map { "'\($0)'" }.joined(separator: " ")
            throw ValidationError("too many words: crescent observe [NAME] SERVICE KEY takes at most three, and \(extra) "
                                  + (words.count == 4 ? "is" : "are") + " more")
        }
        guard (2...3).contains(words.count) else { throw ValidationError("give the service and the property: crescent observe [NAME] SERVICE KEY") }
    }

    func run() throws {
        // `observe h1 location`: the key left out, the host's name taken for the service.
        if words.count == 2, (try? RemoteHosts.resolve(words[0])) != nil {
            Crescent.usageError("observe: '\(words[0])' is the name of a listening host; give the service and the property after it: "
                                + "crescent observe \(words[0]) \(words[1]) KEY")
        }
        let (host, rest) = RemoteCommandSupport.split(words, needs: 2)
        let client = RemoteCommandSupport.connect(host)
        _ = RemoteCommandSupport.result(client, "observe", ["service": .string(rest[0]), "key": .string(rest[1])])
        while true {
            let message: JSONRPCMessage?
            do throws(RemoteError) { message = try client.nextMessage(timeout: -1) } catch { RemoteCommandSupport.fail(error.description) }
            guard let message else { return }
            if case .notification("changed", let params) = message {
                ProcessIO.writeOut(params["value"].jsonText + "\n")
            } else if case .notification("disconnect", let params) = message {
                RemoteCommandSupport.fail("the host disconnected: \(params["reason"].stringValue ?? "")")
            }
        }
    }
}
