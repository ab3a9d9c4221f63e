import ArgumentParser
import CrescentKit
import Model

/// `crescent view [NAME] [--watch] [--json]`: a running host's top view, once or at each change.
struct ViewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "Print a running host's top view (as --ui plain renders it, or as JSON)."
    )

    @Flag(help: "Print the view again each time it changes, until interrupted.")
    var watch = false

    @Flag(help: "One JSON object per render: { controller, view }.")
    var json = false

    @Option(help: ArgumentHelp("The width to lay the view out in (default: the host's).", valueName: "columns"))
    var width: Int?

    @Argument(help: ArgumentHelp("The host, by name or pid (optional when one runs).", valueName: "name"))
    var name: String?

    /// A width the host would refuse is a usage error here, as `--width abc` is.
    func validate() throws {
        if let width, !(1...10_000).contains(width) {
            throw ValidationError("--width must be a number of columns in 1...10000, got \(width)")
        }
    }

    func run() throws {
        let client = RemoteCommandSupport.connect(name)
        var params: Fields = ["format": json ? "json" : "plain", "watch": .bool(watch)]
        if let width { params["width"] = .integer(Int64(width)) }
        show(RemoteCommandSupport.result(client, "view", .object(params)))
        guard watch else { return }
        while true {
            let message: JSONRPCMessage?
            do throws(RemoteError) { message = try client.nextMessage(timeout: -1) } catch { RemoteCommandSupport.fail(error.description) }
            guard let message else { return }
            if case .notification("render", let params) = message { show(params) }
        }
    }

    private func show(_ render: Value) {
        if json {
            ProcessIO.writeOut(render.jsonText + "\n")
        } else {
            // On a terminal the view's control characters are escapes, as `--ui plain` writes
            // them there; to a pipe, byte for byte.
            let text = render["text"].stringValue ?? ""
            ProcessIO.writeOut((ProcessIO.isTerminal(1) ? displayable(text) : text) + (watch ? "\n\n" : "\n"))
        }
    }
}
