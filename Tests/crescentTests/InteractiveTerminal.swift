import ChildTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `crescent` with stdin, stdout and stderr on one pseudo-terminal, driven like a person at the
/// keyboard: keys are written to the terminal, and what the program drew is replayed through
/// ``TerminalScreen`` to read the screen as a person would see it.
///
/// Every wait is bounded (a liveness limit, not a speed assertion): a wait that runs out records
/// what the screen held, and ``finish(timeLimit:sourceLocation:)`` kills a child that does not exit.
final class InteractiveTerminal: @unchecked Sendable {
    // @unchecked: `output` is locked; `finished` is written only by `finish`, which a test awaits
    // before the value goes away; the other stored properties are set in init and only read.
    let columns: Int
    let rows: Int
    private let master: Int32
    private let process: TestChild
    private let output = TerminalLockedBytes()
    /// The sizes given by ``resize(columns:rows:)``, each with how many bytes the program had
    /// written before it: the replayed screen changes size there.
    private let resizes = Mutex<[(offset: Int, columns: Int, rows: Int)]>([])
    private let arguments: [String]
    /// Set by `finish` (called from the test's one task), which checks how the process ended.
    private var finished = false

    /// Starts `crescent ARGUMENTS` in `directory` on a new pseudo-terminal (its stderr too,
    /// unless `stderr` says where else it goes).
    init(_ arguments: [String], directory: String, environment: [String: String?] = [:],
         columns: Int = 80, rows: Int = 24, stderr: TestChild.Stream? = nil) throws {
        self.columns = columns
        self.rows = rows
        self.arguments = arguments
        let slave: Int32
        (master, slave) = try openPseudoTerminal(columns: columns, rows: rows)
        do {
            process = try startCrescent(arguments, directory: directory, environment: environment,
                                        stdin: .descriptor(slave), stdout: .descriptor(slave), stderr: stderr ?? .descriptor(slave))
        } catch {
            // Only the slave: every property is set, so deinit runs and closes the master.
            close(slave)
            throw error
        }
        close(slave)
        let master = self.master
        let output = self.output
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(master, &buffer, buffer.count)
                if count > 0 {
                    output.append(Array(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break  // EIO: the child and its terminal are gone
                }
            }
            output.finish()
        }.start()
    }

    deinit {
        if let ending = process.end {
            // Never finished, but ended on its own: a death by a signal still fails the test.
            if !finished {
                recordSignalDeath(ending, program: CrescentProcess.binaryPath, command: arguments, output: text,
                                  sourceLocation: SourceLocation(fileID: #fileID, filePath: #filePath, line: #line, column: #column))
            }
        } else {
            process.signal(SIGKILL)
        }
        close(master)
    }

    /// Types `text` (control keys as their bytes: "\u{3}" is Ctrl-C, "\r" is Enter, "\t" is Tab).
    func type(_ text: String) {
        type(bytes: Array(text.utf8))
    }

    /// Types `bytes` as they are (bytes that are not UTF-8 among them), in one write.
    func type(bytes: [UInt8]) {
        var bytes = bytes
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(master, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// Sends `signal` to the program (the pseudo-terminal is not its controlling terminal, so a
    /// typed Ctrl-C is only a byte).
    func send(signal: Int32) {
        process.signal(signal)
    }

    /// Answers a grant question yes as a person does: `y`, then Enter in a keystroke of its own
    /// (an Enter in the same read as the letters is taken as pasted, and as no).
    func answerYes() async {
        type("y")
        try? await Task.sleep(for: .milliseconds(300))
        type("\r")
    }

    /// Everything the program wrote so far.
    var text: String { String(decoding: output.bytes, as: UTF8.self) }

    /// What the program wrote after it last gave the terminal back (left the alternate screen).
    var writtenAfterRestore: String { text.components(separatedBy: "\u{1B}[?1049l").last ?? "" }

    /// Everything the program wrote so far, as the bytes it wrote.
    var bytes: [UInt8] { output.bytes }

    /// The screen as the program drew it so far, at the size the terminal had as each byte came.
    var screen: TerminalScreen {
        var screen = TerminalScreen(columns: columns, rows: rows)
        let bytes = output.bytes
        var start = 0
        for size in resizes.withLock({ $0 }) {
            let end = min(max(size.offset, start), bytes.count)
            screen.feed(Array(bytes[start..<end]))
            screen.resize(columns: size.columns, rows: size.rows)
            start = end
        }
        screen.feed(Array(bytes[start...]))
        return screen
    }

    /// Waits until `condition` holds for the screen's transcript (scrollback and visible lines);
    /// false, with the screen recorded as an issue, when `seconds` pass first.
    @discardableResult
    func waitFor(_ what: String, within seconds: Double = 15, sourceLocation: SourceLocation = #_sourceLocation,
                 _ condition: ([String]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(screen.transcript) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("waited \(seconds) s for \(what); the screen:\n\(screen.transcript.joined(separator: "\n"))",
                     sourceLocation: sourceLocation)
        return false
    }

    /// Waits until a line of the screen contains `fragment`.
    @discardableResult
    func waitFor(line fragment: String, within seconds: Double = 15,
                 sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await waitFor("a line with '\(fragment)'", within: seconds, sourceLocation: sourceLocation) { lines in
            lines.contains { $0.contains(fragment) }
        }
    }

    /// Gives the terminal a new size and tells the program, as a terminal window does (the
    /// program has no controlling terminal here, so the kernel would not send SIGWINCH itself).
    /// The replayed ``screen`` takes the new size from the bytes written after this call, at
    /// most 2,000 x 1,000 (what the host lays out at most; a replay of 65535 x 65535 would
    /// allocate gigabytes here).
    func resize(columns: Int, rows: Int) {
        let offset = output.bytes.count
        resizes.withLock { $0.append((offset, min(columns, 2000), min(rows, 1000))) }
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        process.signal(SIGWINCH)
    }

    /// The program's process id (for the signals a test sends it).
    var pid: Int32 { process.pid }

    /// The terminal's modes as the program left them (the line discipline is the pair's: the
    /// master reads the slave's settings).
    var modes: termios {
        var attributes = termios()
        _ = tcgetattr(master, &attributes)
        return attributes
    }

    /// Waits for the program to exit and returns its status; kills it after `timeLimit`. A death
    /// by a signal in `expectedSignals` (one the test sent) is not a failure.
    func finish(timeLimit: Double = 15, expectedSignals: Set<Int32> = [],
                sourceLocation: SourceLocation = #_sourceLocation) async -> Int32 {
        let deadline = Date().addingTimeInterval(timeLimit)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        let timedOut = process.isRunning
        if timedOut {
            process.signal(SIGKILL)
            Issue.record("the REPL did not exit within \(timeLimit) s; the screen:\n\(screen.transcript.joined(separator: "\n"))",
                         sourceLocation: sourceLocation)
        }
        let process = self.process
        let ending = await Task.detached { process.waitUntilEnded() }.value
        let drain = Date().addingTimeInterval(2)
        while !output.isFinished && Date() < drain { try? await Task.sleep(for: .milliseconds(5)) }
        finished = true
        if !timedOut {
            recordSignalDeath(ending, program: CrescentProcess.binaryPath, command: arguments, expected: expectedSignals,
                              output: screen.transcript.joined(separator: "\n"), sourceLocation: sourceLocation)
        }
        return ending.status
    }
}

extension InteractiveTerminal {
    /// Runs `source` as `file` in `sandbox` (a new one by default; the command line's history in
    /// it) on a 100 x 12 terminal, and waits for a line with `showing`.
    static func app(_ source: String, file: String, options: [String] = [], showing: String,
                    sandbox: Sandbox? = nil, environment: [String: String?] = [:],
                    sourceLocation: SourceLocation = #_sourceLocation) async throws -> (InteractiveTerminal, Sandbox) {
        let sandbox = try sandbox ?? Sandbox()
        let path = try sandbox.write(file, source)
        let variables = environment.merging(["CRESCENT_HISTORY": sandbox.path + "/history"]) { given, _ in given }
        let terminal = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--no-plugins"] + options + [path],
                                               directory: sandbox.path, environment: variables, columns: 100, rows: 12)
        await terminal.waitFor(line: showing, sourceLocation: sourceLocation)
        return (terminal, sandbox)
    }

    /// Runs `source` as `file` (as ``app(_:file:options:showing:sandbox:environment:sourceLocation:)``)
    /// listening for remote clients as `name`, its runtime folder in the sandbox; returns once it
    /// listens, with the socket's path.
    static func app(_ source: String, file: String, listening name: String, showing: String,
                    sourceLocation: SourceLocation = #_sourceLocation) async throws -> (InteractiveTerminal, Sandbox, String) {
        let sandbox = try Sandbox()
        let runtime = sandbox.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let (terminal, _) = try await app(source, file: file, options: ["--listen=\(name)"], showing: showing, sandbox: sandbox,
                                          environment: ["XDG_RUNTIME_DIR": runtime], sourceLocation: sourceLocation)
        let socket = runtime + "/crescent/\(name).sock"
        await terminal.waitFor("the host to listen", sourceLocation: sourceLocation) { _ in FileManager.default.fileExists(atPath: socket) }
        return (terminal, sandbox, socket)
    }

    /// Expects the terminal as a shell left it: echo, line editing, signal keys and CR-to-NL
    /// back, the main screen, the cursor shown, mouse reporting and bracketed paste off.
    func expectRestored(sourceLocation: SourceLocation = #_sourceLocation) {
        let modes = self.modes
        #expect(modes.c_lflag & tcflag_t(ECHO) != 0, "echo is back", sourceLocation: sourceLocation)
        #expect(modes.c_lflag & tcflag_t(ICANON) != 0, "line editing is back", sourceLocation: sourceLocation)
        #expect(modes.c_lflag & tcflag_t(ISIG) != 0, "Ctrl-C raises SIGINT again", sourceLocation: sourceLocation)
        #expect(modes.c_iflag & tcflag_t(ICRNL) != 0, "Enter is a newline again", sourceLocation: sourceLocation)
        let screen = self.screen
        #expect(!screen.onAlternateScreen, "the main screen is back", sourceLocation: sourceLocation)
        #expect(screen.cursorVisible, "the cursor is shown", sourceLocation: sourceLocation)
        let text = self.text
        #expect(isOff("\u{1B}[?1000h", "\u{1B}[?1000l", in: text), "mouse reporting is off", sourceLocation: sourceLocation)
        #expect(isOff("\u{1B}[?2004h", "\u{1B}[?2004l", in: text), "bracketed paste is off", sourceLocation: sourceLocation)
    }

    /// Waits until a handler of the script has created the file `started` in `sandbox` (a loop
    /// cannot draw a frame to say it runs).
    func waitUntilStarted(_ sandbox: Sandbox, sourceLocation: SourceLocation = #_sourceLocation) async {
        await waitFor("the handler to start", sourceLocation: sourceLocation) { _ in
            FileManager.default.fileExists(atPath: sandbox.path + "/started")
        }
    }

    /// Whether the program is stopped (SIGTSTP), as a shell's job control sees it.
    var isStopped: Bool {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return stat.split(separator: ")").last?.split(separator: " ").first == "T"
    }

    /// After a ctrl-z: waits up to 5 s for the program to stop; false when it did not (the kernel
    /// discards SIGTSTP in an orphaned process group, as a test's may be: the app goes on at once).
    func waitUntilStopped() async throws -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if isStopped { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Whether a mode the program turned on with `on` was last turned off with `off`.
    private func isOff(_ on: String, _ off: String, in text: String) -> Bool {
        guard let lastOn = text.range(of: on, options: .backwards)?.lowerBound else { return true }
        guard let lastOff = text.range(of: off, options: .backwards)?.lowerBound else { return false }
        return lastOff > lastOn
    }
}
