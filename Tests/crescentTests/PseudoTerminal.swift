import ChildTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Running `crescent` on a pseudo-terminal, and a tiny terminal emulator to replay what it wrote.

/// What a run on a pseudo-terminal produced.
struct TerminalRun: CustomStringConvertible {
    /// Every byte the child wrote to its terminal (stdout), after the line discipline (so `\n`
    /// arrives as `\r\n`).
    var bytes: [UInt8]
    var stderr: String
    var status: Int32
    var timedOut: Bool

    var text: String { String(decoding: bytes, as: UTF8.self) }

    var description: String {
        "exit status \(status)\(timedOut ? " (killed at the time limit)" : "")\n--- terminal (escaped) ---\n"
            + TerminalRun.escaped(text) + "\n--- stderr ---\n\(stderr)"
    }

    /// `text` with ESC shown as `⎋` and CR as `␍`, for messages.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\u{1B}", with: "⎋").replacingOccurrences(of: "\r", with: "␍")
    }
}

/// Errors setting the pseudo-terminal up.
struct PseudoTerminalError: Error, CustomStringConvertible {
    let description: String
}

/// Runs `crescent ARGUMENTS` in `directory` with its stdout on a new pseudo-terminal of
/// `columns` x `rows` (stdin /dev/null, stderr a pipe unless `stderrOnTerminal`) and returns everything written to the
/// terminal. The child is killed at `timeLimit` (a recorded test failure); reading stops at most
/// two seconds after it exits, so the call is bounded in time.
func runOnPseudoTerminal(
    _ arguments: [String], directory: String, environment: [String: String?] = [:],
    columns: Int = 40, rows: Int = 24, stderrOnTerminal: Bool = false, timeLimit: Double = 20,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> TerminalRun {
    let (master, slave) = try openPseudoTerminal(columns: columns, rows: rows)
    defer { close(master) }
    let errors = Pipe()
    let process: TestChild
    do {
        process = try startCrescent(arguments, directory: directory, environment: environment, stdin: .null,
                                    stdout: .descriptor(slave),
                                    stderr: stderrOnTerminal ? .descriptor(slave) : .descriptor(errors.fileHandleForWriting.fileDescriptor))
    } catch {
        close(slave)
        throw error
    }
    // Only the child holds the terminal now: when it exits, reading the master ends (EIO).
    close(slave)
    try? errors.fileHandleForWriting.close()
    let errorText = TerminalLockedBytes()
    let errorReader = Thread {
        let handle = errors.fileHandleForReading
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            errorText.append(Array(chunk))
        }
        errorText.finish()
    }
    errorReader.start()

    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let start = Date()
    var timedOut = false
    var exitedAt: Date?
    while true {
        var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, 20)
        if ready > 0 {
            let count = read(master, &buffer, buffer.count)
            if count > 0 {
                bytes.append(contentsOf: buffer[0..<count])
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 && !process.isRunning { break }  // EIO: the child and its terminal are gone
        }
        if !process.isRunning {
            exitedAt = exitedAt ?? Date()
            if Date().timeIntervalSince(exitedAt!) > 2 { break }
        } else if !timedOut && Date().timeIntervalSince(start) > timeLimit {
            timedOut = true
            process.signal(SIGKILL)
            Issue.record("crescent \(arguments) did not exit within \(timeLimit) s on the pseudo-terminal; killed",
                         sourceLocation: sourceLocation)
        }
    }
    let ending = process.waitUntilEnded()
    let drain = Date().addingTimeInterval(2)
    while !errorText.isFinished && Date() < drain { usleep(1_000) }
    if !timedOut {
        recordSignalDeath(ending, program: CrescentProcess.binaryPath, command: arguments,
                          output: String(decoding: errorText.bytes, as: UTF8.self), sourceLocation: sourceLocation)
    }
    return TerminalRun(bytes: bytes, stderr: String(decoding: errorText.bytes, as: UTF8.self),
                       status: ending.status, timedOut: timedOut)
}

/// A new pseudo-terminal of `columns` x `rows`: the master and the slave (both close-on-exec, so
/// processes other tests spawn meanwhile do not inherit the terminal and keep it open after our
/// child exits). The caller closes both.
func openPseudoTerminal(columns: Int, rows: Int) throws -> (master: Int32, slave: Int32) {
    let master = PTYFunctions.posixOpenpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard master >= 0 else { throw PseudoTerminalError(description: "posix_openpt: errno \(errno)") }
    guard PTYFunctions.grantpt(master) == 0, PTYFunctions.unlockpt(master) == 0 else {
        close(master)
        throw PseudoTerminalError(description: "grantpt/unlockpt: errno \(errno)")
    }
    var nameBuffer = [CChar](repeating: 0, count: 128)
    guard PTYFunctions.ptsnameR(master, &nameBuffer, nameBuffer.count) == 0 else {
        close(master)
        throw PseudoTerminalError(description: "ptsname_r: errno \(errno)")
    }
    let slavePath = String(decoding: nameBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let slave = open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard slave >= 0 else {
        close(master)
        throw PseudoTerminalError(description: "open \(slavePath): errno \(errno)")
    }
    var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
    _ = ioctl(slave, UInt(TIOCSWINSZ), &size)
    return (master, slave)
}

/// `crescent ARGUMENTS` in `directory`, not started, with the environment a terminal run has.
func startCrescent(_ arguments: [String], directory: String, environment: [String: String?],
                   stdin: TestChild.Stream, stdout: TestChild.Stream, stderr: TestChild.Stream) throws -> TestChild {
    var variables = ProcessInfo.processInfo.environment
    for name in CrescentProcess.scrubbedVariables + ["COLUMNS", "LINES"] { variables[name] = nil }
    variables["TERM"] = "xterm-256color"
    for (name, value) in environment { variables[name] = value }
    return try TestChild(CrescentProcess.binaryPath, arguments, environment: variables, directory: directory,
                         stdin: stdin, stdout: stdout, stderr: stderr)
}

/// The C library's pseudo-terminal functions. Glibc declares them only under `_XOPEN_SOURCE`,
/// which the Swift module does not set, so they are looked up at run time.
enum PTYFunctions {
    private static func symbol<T>(_ name: String, as type: T.Type) -> T {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            fatalError("\(name) not found in the C library")
        }
        return unsafeBitCast(address, to: type)
    }

    static let posixOpenpt = symbol("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
    static let grantpt = symbol("grantpt", as: (@convention(c) (Int32) -> Int32).self)
    static let unlockpt = symbol("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
    static let ptsnameR = symbol("ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32).self)
}

/// Bytes shared with a reader thread.
final class TerminalLockedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [UInt8] = []
    private var finished = false
    func append(_ chunk: [UInt8]) { lock.withLock { stored += chunk } }
    func finish() { lock.withLock { finished = true } }
    var isFinished: Bool { lock.withLock { finished } }
    var bytes: [UInt8] { lock.withLock { stored } }
}

// MARK: - The emulator

/// A tiny terminal: enough of a VT100 to replay what `--ui live` writes.
///
/// Handles printable text (wide characters take two cells), `\r`, `\n` (line feed only, as on a
/// real terminal; the pty's line discipline has already turned `\n` into `\r\n`), backspace,
/// `ESC[nA` / `ESC[nB` / `ESC[nC` / `ESC[nD`, `ESC[2K` (and `ESC[K`, `ESC[1K`), `ESC[J` (and
/// `ESC[0J`, `ESC[2J`), `ESC[row;colH`, `ESC[?25l` / `ESC[?25h`, the alternate screen
/// (`ESC[?1049h` / `ESC[?1049l`, which brings the main screen back as it was); every other escape
/// sequence is parsed and ignored.
/// Lines that scroll off the top are kept in `scrollback`. Writing in the last column sets a
/// pending wrap, as xterm does.
struct TerminalScreen {
    private(set) var columns: Int
    private(set) var rows: Int
    /// The visible cells, `rows` x `columns`; a wide character's second cell is "".
    private(set) var cells: [[String]]
    private(set) var scrollback: [String] = []
    private(set) var row = 0
    private(set) var column = 0
    private(set) var cursorVisible = true
    private var pendingWrap = false
    /// The main screen's cells and cursor while the alternate screen is shown, else nil.
    private var mainScreen: [[String]]?
    private var mainCursor = (row: 0, column: 0)
    /// Whether the alternate screen is shown.
    var onAlternateScreen: Bool { mainScreen != nil }

    init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
        cells = Array(repeating: Array(repeating: " ", count: columns), count: rows)
    }

    /// A new size, as a terminal window's: the cells keep their place from the top left (cut or
    /// padded with blanks), on both screens, and the cursor stays inside.
    mutating func resize(columns: Int, rows: Int) {
        func fitted(_ grid: [[String]]) -> [[String]] {
            (0..<rows).map { row in
                let line = row < grid.count ? grid[row] : []
                return (0..<columns).map { column in column < line.count ? line[column] : " " }
            }
        }
        self.columns = columns
        self.rows = rows
        cells = fitted(cells)
        mainScreen = mainScreen.map(fitted)
        row = min(row, rows - 1)
        column = min(column, columns - 1)
        pendingWrap = false
    }

    /// The visible lines without trailing spaces.
    var lines: [String] { cells.map(Self.text) }

    /// Scrollback and visible lines, trailing spaces and trailing empty lines removed.
    var transcript: [String] {
        var all = scrollback + lines
        while all.last == "" { all.removeLast() }
        return all
    }

    private static func text(_ line: [String]) -> String {
        var text = line.joined()
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }

    mutating func feed(_ bytes: [UInt8]) {
        feed(String(decoding: bytes, as: UTF8.self))
    }

    mutating func feed(_ text: String) {
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            switch character {
            case "\u{1B}":
                parseEscape(&characters)
            case "\r":
                column = 0
                pendingWrap = false
            case "\n":
                lineFeed()
            case "\r\n":  // one grapheme in Swift
                column = 0
                pendingWrap = false
                lineFeed()
            case "\u{8}":
                column = max(column - 1, 0)
                pendingWrap = false
            case "\u{7}", "\u{0}":
                break
            default:
                put(character)
            }
        }
    }

    private mutating func lineFeed() {
        pendingWrap = false
        if row == rows - 1 {
            scrollback.append(Self.text(cells[0]))
            cells.removeFirst()
            cells.append(Array(repeating: " ", count: columns))
        } else {
            row += 1
        }
    }

    private mutating func put(_ character: Character) {
        let width = Self.width(of: character)
        if width == 0 { return }
        if pendingWrap || column + width > columns {
            column = 0
            lineFeed()
        }
        // Overwriting half of a wide character clears the other half.
        if cells[row][column] == "", column > 0 { cells[row][column - 1] = " " }
        cells[row][column] = String(character)
        if width == 2 { cells[row][column + 1] = "" }
        if column + width < columns, cells[row][column + width] == "" { cells[row][column + width] = " " }
        column += width
        if column >= columns {
            column = columns - 1
            pendingWrap = true
        }
    }

    /// ESC already taken; reads a CSI (`[` params final) or a two-byte escape, and acts on the
    /// ones listed above.
    private mutating func parseEscape(_ characters: inout ArraySlice<Character>) {
        guard let next = characters.popFirst() else { return }
        if next == "]" {  // OSC: up to BEL or ESC \
            while let c = characters.popFirst() {
                if c == "\u{7}" { return }
                if c == "\u{1B}" { _ = characters.popFirst(); return }
            }
            return
        }
        guard next == "[" else { return }
        var parameters = ""
        var final: Character = " "
        while let c = characters.popFirst() {
            if let ascii = c.asciiValue, (0x40...0x7E).contains(ascii) {
                final = c
                break
            }
            parameters.append(c)
        }
        let private_ = parameters.hasPrefix("?")
        let numbers = parameters.drop { $0 == "?" }.split(separator: ";").map { Int($0) ?? 0 }
        let n = max(numbers.first ?? 1, 1)
        pendingWrap = false
        switch (private_, final) {
        case (true, "l"):
            if numbers == [25] { cursorVisible = false }
            if numbers == [1049], let main = mainScreen {
                cells = main
                mainScreen = nil
                (row, column) = mainCursor
            }
        case (true, "h"):
            if numbers == [25] { cursorVisible = true }
            if numbers == [1049], mainScreen == nil {
                mainScreen = cells
                mainCursor = (row, column)
                cells = Array(repeating: Array(repeating: " ", count: columns), count: rows)
            }
        case (false, "H"), (false, "f"):
            row = min(max((numbers.first ?? 1) - 1, 0), rows - 1)
            column = min(max((numbers.count > 1 ? numbers[1] : 1) - 1, 0), columns - 1)
        case (false, "A"): row = max(row - n, 0)
        case (false, "B"): row = min(row + n, rows - 1)
        case (false, "C"): column = min(column + n, columns - 1)
        case (false, "D"): column = max(column - n, 0)
        case (false, "K"):
            switch numbers.first ?? 0 {
            case 0: for c in column..<columns { cells[row][c] = " " }
            case 1: for c in 0...column { cells[row][c] = " " }
            default: cells[row] = Array(repeating: " ", count: columns)
            }
        case (false, "J"):
            switch numbers.first ?? 0 {
            case 0:
                for c in column..<columns { cells[row][c] = " " }
                for r in (row + 1)..<rows { cells[r] = Array(repeating: " ", count: columns) }
            case 1:
                for r in 0..<row { cells[r] = Array(repeating: " ", count: columns) }
                for c in 0...column { cells[row][c] = " " }
            default:
                cells = Array(repeating: Array(repeating: " ", count: columns), count: rows)
            }
        default:
            break
        }
    }

    /// Terminal cells for one character: 2 for East Asian wide characters and emoji, 0 for
    /// controls, else 1 (enough for the text the tests show).
    static func width(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.value < 0x20 || first.value == 0x7F { return 0 }
        if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation || $0.value == 0xFE0F }) { return 2 }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}
