import CPlatform
import Dispatch
import LineEditing
#if canImport(Glibc)
import Glibc
#endif

extension ScriptRunner {
    /// Reads stdin lines on a thread of their own and hands each to the host's loop as a command.
    /// The end of piped input (a pipe or a file) is a last `quit`, after the commands before it
    /// have run, unless `--keep-running` keeps the controllers until they pop or exit. A device
    /// (`< /dev/null`, the usual way to give a background job no input) never held commands: its
    /// end ends nothing.
    ///
    /// A terminal is read this way too when the app does not take its keys (`--ui plain`,
    /// `--ui json`, stdout redirected): typed lines are commands, as piped ones are, where they
    /// were echoed and dropped. The terminal is read only while this process is in its
    /// foreground (a job started with `&` leaves the keys to the shell), and a plugin's grant
    /// question that comes meanwhile is answered by the next line typed (``TerminalQuestion``).
    static func readCommands(into host: HostLink) {
        var status = stat()
        let isDevice = fstat(0, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR
        let isTerminal = isatty(0) == 1
        DispatchQueue(label: "crescent.commands").async {
            let question = isTerminal ? TerminalQuestion.shared.readerStarted(TerminalQuestion.Reader(
                show: { text in
                    var text = text
                    text.withUTF8 { bytes in bytes.withMemoryRebound(to: CChar.self) { crescent_write_stderr($0.baseAddress, $0.count) } }
                }, answered: { _ in })) : nil
            defer { if let question { TerminalQuestion.shared.readerEnded(question) } }
            // read(2), not readLine(): readLine blocks holding stdin's FILE lock, and exit()
            // waits for that lock as it cleans up the streams, so a piped `quit` (or app.exit)
            // ended the process only once stdin closed.
            var lines = CommandLines(waitsForForeground: isTerminal)
            while let line = lines.next() {
                // The line answers a question that waits for one (the terminal echoed it).
                if question != nil, TerminalQuestion.shared.offer(line: line) { continue }
                host.turn { host in host.receiveCommandLine(line, failureCounts: true) }
            }
            guard !isDevice else { return }
            host.turn { host in
                if !host.options.keepsRunningAfterInput { host.receiveCommandLine("quit") }
            }
        }
    }
}

/// The lines of stdin, read with read(2) (see ``ScriptRunner/readCommands(into:)``), without
/// their newline (and a carriage return before it), as `readLine()` gives them.
struct CommandLines {
    /// How often a terminal read looks whether the process is back in the terminal's foreground.
    private static let foregroundPoll: Int32 = 250
    /// Whether stdin is a terminal to read only in its foreground: a read from the background
    /// stops the process (SIGTTIN). Its Ctrl-D is no end of input.
    let waitsForForeground: Bool
    private var buffer: [UInt8] = []
    private var ended = false

    init(waitsForForeground: Bool = false) {
        self.waitsForForeground = waitsForForeground
    }

    /// The next line; nil at the end of input (a last line without a newline is still a line).
    mutating func next() -> String? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                var line = buffer[..<newline]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                defer { buffer.removeSubrange(...newline) }
                return String(decoding: line, as: UTF8.self)
            }
            if ended {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            if waitsForForeground, !Self.mayRead() { continue }
            let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            // Ctrl-D on a terminal reads as an end, but the terminal is still there and the
            // person goes on typing: it ends nothing (the lines typed after it run). A terminal
            // that hung up says so to poll (or its read fails), and that is the end.
            if count == 0, waitsForForeground, !Self.hungUp() { continue }
            if count <= 0 { ended = true } else { buffer += chunk[0..<count] }
        }
    }

    /// Whether stdin's terminal hung up (or is no longer readable at all), asked without waiting.
    private static func hungUp() -> Bool {
        var state = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        guard poll(&state, 1, 0) >= 0 else { return true }
        return state.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
    }

    /// Waits up to ``foregroundPoll`` ms for input; true when there is some (or the input
    /// ended) and the process is in the terminal's foreground.
    private static func mayRead() -> Bool {
        guard Terminal.standard.isForeground else {
            usleep(UInt32(foregroundPoll) * 1000)
            return false
        }
        var ready = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        return poll(&ready, 1, foregroundPoll) > 0
    }
}
