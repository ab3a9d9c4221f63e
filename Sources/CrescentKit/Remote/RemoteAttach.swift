import Model
import LineEditing
#if canImport(Glibc)
import Glibc
#endif

/// `crescent attach`: the REPL's prompt on this terminal, its chunks run in a remote host.
///
/// One thread waits on the terminal and the socket at once. Lines go to the host as `eval`
/// (a chunk that is not finished goes on at `..`, as in the REPL); Tab asks the host's
/// `complete`; the host's output (it follows it: `hello { output = true }`) and renders (`view`
/// watch) print above the prompt; Ctrl-C while a chunk runs sends
/// `interrupt`; Ctrl-D on an empty line detaches and the host runs on.
public struct RemoteAttach {
    private let client: RemoteClient
    private let terminal = Terminal.standard
    private var session: PromptSession
    private let history = HistoryFile.standard()
    private var pendingLines: [String] = []
    /// What the session answered when a prompt began (keys typed ahead may make events), for the
    /// main loop to act on.
    private var queued: [PromptSession.Output] = []
    /// The id of the eval waiting for its answer, and its text.
    private var running: (id: Int64, text: String)?
    /// The view's text as last shown: a render prints only the lines that changed since (as the
    /// REPL's `.load` does), so the answers above the prompt do not scroll away at each render.
    private var shownView = ""

    /// Attaches to the host `target` names and runs until the user detaches; returns the exit
    /// status (0 detached, 1 the host went away or could not be reached).
    public static func run(target: String?) -> Int32 {
        let client: RemoteClient
        do throws(RemoteError) { client = try RemoteClient(host: target) } catch {
            FileOutput.error("crescent: \(error)\n")
            return 1
        }
        var attach = RemoteAttach(client: client)
        return attach.run()
    }

    private init(client: RemoteClient) {
        self.client = client
        session = PromptSession(editor: LineEditor(prompt: "> ", continuationPrompt: ".. ",
                                                   history: history?.load() ?? History()),
                                width: terminal.columns)
    }

    private mutating func run() -> Int32 {
        guard let saved = try? terminal.enableRawMode() else {
            FileOutput.error("crescent: attach needs a terminal\n")
            return 1
        }
        defer { terminal.restore(saved) }
        guard case .success(let hello)? = try? client.call("hello", ["output": true]),
              case .success(let view)? = try? client.call("view", ["watch": true, "width": .integer(Int64(terminal.columns))]) else {
            terminal.write("crescent: the host did not answer\n")
            return 1
        }
        terminal.write("Attached to \(hello["name"].stringValue ?? "?") (pid \(hello["pid"].jsonText), \(hello["script"].stringValue ?? "?")). .help for help, Ctrl-D detaches.\n")
        if let text = view["text"].stringValue, !text.isEmpty {
            terminal.write(displayable(text) + "\n")
            shownView = text
        }
        begin("> ")
        while true {
            while !queued.isEmpty {
                if let status = handle(queued.removeFirst()) { return status }
            }
            var fds = [pollfd(fd: terminal.input, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: client.socket.descriptor, events: Int16(POLLIN), revents: 0)]
            if !client.hasBufferedMessage {
                // A paste whose end mark was lost ends after a second without bytes, as on a host's own terminal.
                let wait: Int32 = session.isAwaitingMoreBytes ? 50 : session.isInPaste ? TerminalSession.pasteWait : -1
                let ready = poll(&fds, 2, wait)
                if ready < 0 && errno != EINTR { return 1 }
                if ready == 0 {
                    if session.isInPaste {
                        if let status = handle(session.endPaste()) { return status }
                    } else {
                        write(session.flushInput())
                    }
                }
            }
            if fds[0].revents != 0 {
                guard var bytes = terminal.read() else { return detach() }
                if running != nil, bytes.contains(3) {
                    bytes.removeAll { $0 == 3 }
                    _ = try? client.request("interrupt")
                }
                if let status = handle(session.receive(bytes)) { return status }
            }
            if fds[1].revents != 0 || client.hasBufferedMessage {
                if let status = readHost() { return status }
            }
        }
    }

    /// Acts on the session's events; a status when the user leaves.
    private mutating func handle(_ output: PromptSession.Output) -> Int32? {
        write(output)
        for event in output.events {
            switch event {
            case .submit(let line):
                if submit(line) { return detach() }
            case .complete(let request):
                let answer = (try? client.call("complete", ["line": .string(request.prefix)])).flatMap { try? $0.get() } ?? .null
                let items = answer["items"].arrayValue?.compactMap(\.stringValue) ?? []
                let from = Int(answer["from"].integerValue ?? Int64(request.prefix.count))
                write(session.complete(request, with: items, replacing: request.prefix.count - from))
            case .interrupt:
                pendingLines.removeAll()
            case .exit, .endOfInput:
                return detach()
            }
        }
        return nil
    }

    /// A line typed: a dot command, a controller command or Lua. True to detach (`.exit`).
    private mutating func submit(_ line: String) -> Bool {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        if pendingLines.isEmpty {
            if trimmed.isEmpty {
                begin("> ")
                return false
            }
            if trimmed.hasPrefix("."), trimmed.dropFirst().first?.isLetter == true { return dotCommand(String(trimmed)) }
            if trimmed.hasPrefix(":") {
                record(line)
                if let words = try? CommandWords.split(String(trimmed.dropFirst())), let command = words.first {
                    show(error: try? client.call("send", ["command": .string(command), "args": .array(words.dropFirst().map { .string($0) })]))
                }
                begin("> ")
                return false
            }
        }
        pendingLines.append(line)
        let text = pendingLines.joined(separator: "\n")
        if let id = try? client.request("eval", ["code": .string(text)]) { running = (id, text) }
        return false
    }

    /// `.help`, `.services [NAME]`, `.subs`, `.exit` here; the rest is the REPL's only. True to
    /// detach.
    private mutating func dotCommand(_ line: String) -> Bool {
        record(line)
        let words = line.split(separator: " ").map(String.init)
        switch words[0] {
        case ".help":
            above("Type Lua: it runs in the attached host (an expression prints its value). :NAME ARGS sends a command\nto its top controller. .services [NAME], .subs, .exit (or Ctrl-D) detaches; Ctrl-C interrupts a chunk.")
        case ".services":
            let result = try? client.call("services", words.count > 1 ? ["name": .string(words[1])] : .null)
            if case .success(let value)? = result { above(value["text"].stringValue ?? "") } else { show(error: result) }
        case ".subs":
            let result = try? client.call("subscriptions")
            if case .success(let list)? = result {
                let rows = list.arrayValue ?? []
                above(rows.isEmpty ? "No live subscriptions." : rows.map {
                    "\($0["owner"].stringValue ?? "")  \($0["target"].stringValue ?? "")  \($0["site"].stringValue ?? "")  \($0["deliveries"].jsonText)  \($0["errors"].jsonText)"
                }.joined(separator: "\n"))
            }
        case ".exit", ".quit":
            return true
        default:
            switch DotCommand(line) {
            case _ where words[0] == ".load":
                // The local REPL's: the attached host reads files from its own folder.
                let file = words.count > 1 ? words.dropFirst().joined(separator: " ") : "FILE"
                above("error: .load is the local REPL's only, not an attached host's; run the file in the host with "
                      + "dofile(\"\(file)\") (a path as the host's folder sees it)")
            case .editor?:
                above("error: .editor is the local REPL's only, not an attached host's; type the chunk's lines: "
                      + "one that is not finished goes on at the '..' prompt")
            default:
                // DotCommand's message: the commands, and the closest one (`.lod`, `.hlep`).
                if case .invalid(let message)? = DotCommand(words[0]) { above("error: " + message) }
            }
        }
        begin("> ")
        return false
    }

    /// Reads what the host sent; a status when it went away.
    private mutating func readHost() -> Int32? {
        while true {
            let message: JSONRPCMessage?
            do throws(RemoteError) { message = try client.nextMessage(timeout: 0) } catch { return gone(error.description) }
            guard let message else { return client.isClosed ? gone("the host closed the connection") : nil }
            switch message {
            case .notification("render", let params):
                let text = params["text"].stringValue ?? ""
                guard text != shownView else { break }
                // The view's control characters as escapes, as the host's own terminal shows them.
                above(displayable(shownView.isEmpty || text.isEmpty ? text : ViewPresenter.changedLines(from: shownView, to: text)) + "\n")
                shownView = text
            case .notification("output", let params):
                above(bytes: RemoteOutput.bytes(of: params))
            case .notification("disconnect", let params):
                return gone(params["reason"].stringValue ?? "disconnected")
            case .response(.integer(let id), let result) where id == running?.id:
                finishEval(text: result["text"].stringValue ?? "", error: nil)
            case .failure(.integer(let id)?, let error) where id == running?.id:
                finishEval(text: "", error: error.data?["traceback"].stringValue ?? error.message)
            default:
                break
            }
        }
    }

    private mutating func finishEval(text: String, error: String?) {
        guard let current = running else { return }
        running = nil
        if let error, error.hasSuffix("<eof>"), !pendingLines.isEmpty {
            begin(".. ")
            return
        }
        pendingLines.removeAll()
        record(current.text)
        if let error { terminal.write(("error: " + error) + "\n") }
        if !text.isEmpty { terminal.write(text + "\n") }
        begin("> ")
    }

    private func show(error result: Result<Value, JSONRPCError>?) {
        // A command's failure the host's own output said already (streamed here): not twice.
        if case .failure(let error)? = result, error.data?["shown"].boolValue != true { terminal.write(("error: " + error.message) + "\n") }
    }

    /// Text from the host: above the prompt while it is up, else straight out.
    private mutating func above(_ text: String) {
        above(bytes: Array(text.utf8))
    }

    /// Output from the host, as the bytes the script wrote (not UTF-8 perhaps): above the prompt
    /// while it is up, else straight out.
    private mutating func above(bytes: [UInt8]) {
        if session.isReading {
            terminal.write(bytes: session.printAbove(bytes: bytes))
        } else {
            // A line of its own: the next prompt was written after it (`...commands> >`).
            terminal.write(bytes: bytes.last == UInt8(ascii: "\n") ? bytes : bytes + [UInt8(ascii: "\n")])
        }
    }

    private mutating func record(_ text: String) {
        guard session.editor.history.add(text) else { return }
        _ = try? history?.append(text)
    }

    private mutating func detach() -> Int32 {
        terminal.write(session.end())
        return 0
    }

    private mutating func gone(_ reason: String) -> Int32 {
        terminal.write(session.end())
        terminal.write("crescent: \(reason)\n")
        return 1
    }

    private func write(_ output: PromptSession.Output) { terminal.write(output.bytes) }

    /// Shows a prompt; keys typed ahead are acted on by the main loop.
    private mutating func begin(_ prompt: String) { queued.append(session.begin(prompt: prompt)) }
}

/// Writes to stderr without the host's console (there is no host here).
enum FileOutput {
    static func error(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
