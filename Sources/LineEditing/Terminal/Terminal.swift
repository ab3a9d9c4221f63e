#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few terminal facts and effects the line editor needs: is it a terminal, how wide, raw mode,
/// writing. Kept apart from the pure editing types, which never touch a descriptor.
///
/// Raw mode here is readline's: no echo, no line buffering, no signal keys (Ctrl-C and Ctrl-Z
/// arrive as bytes), no flow control, no CR-to-LF translation, reads return after one byte. Output
/// processing stays on, so a `\n` printed by the host still returns the carriage. Restore the saved
/// mode while user code runs, so that Ctrl-C raises SIGINT again for the interrupt hook.
///
/// ```swift
/// let terminal = Terminal.standard
/// guard terminal.isInteractive else { return runAsScript() }
/// let saved = try terminal.enableRawMode()
/// defer { terminal.restore(saved) }
/// terminal.write(session.begin(prompt: "> ").bytes)
/// ```
public struct Terminal: Hashable, Sendable {
    /// The mode a terminal was in before ``enableRawMode()``, to give back with ``restore(_:)``.
    public struct SavedMode: Sendable {
        fileprivate let attributes: termios

        /// The saved `termios` as bytes, for code that must restore it where Swift cannot run
        /// (a signal handler in C).
        public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
            try Swift.withUnsafeBytes(of: attributes, body)
        }
    }

    /// The descriptor keys are read from.
    public let input: Int32
    /// The descriptor the prompt is written to.
    public let output: Int32

    /// Standard input and standard output.
    public static let standard = Terminal(input: 0, output: 1)

    /// A terminal reading `input` and writing `output`.
    public init(input: Int32, output: Int32) {
        self.input = input
        self.output = output
    }

    /// Whether both descriptors are terminals: the REPL edits lines only then (else it runs the
    /// input as a script, without prompts or escape sequences).
    public var isInteractive: Bool { isatty(input) == 1 && isatty(output) == 1 }

    /// Whether this process may take the input terminal: it is in the terminal's foreground
    /// process group, or the terminal is not its controlling one. A job started in the
    /// background (`crescent app.lua &`) that changed the terminal's mode would be stopped
    /// (SIGTTOU) and would take the keys from the shell.
    public var isForeground: Bool {
        let group = tcgetpgrp(input)
        return group == -1 || group == getpgrp()
    }

    /// The terminal's width: from the output terminal, else `COLUMNS`, else 80.
    public var columns: Int {
        if let size = windowSize() { return size.columns }
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 0 { return columns }
        return 80
    }

    /// The output terminal's size, or nil when it is not a terminal (or reports zero).
    public func windowSize() -> (columns: Int, rows: Int)? {
        var size = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Puts the input terminal in raw mode and returns the mode it was in. Keys typed ahead stay
    /// readable.
    ///
    /// - Throws: ``TerminalError`` when the input is not a terminal or refuses the change.
    public func enableRawMode() throws(TerminalError) -> SavedMode {
        var attributes = termios()
        guard tcgetattr(input, &attributes) == 0 else { throw TerminalError(operation: "tcgetattr", code: errno) }
        let saved = SavedMode(attributes: attributes)
        attributes.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        attributes.c_cflag |= tcflag_t(CS8)
        attributes.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &attributes.c_cc) { characters in
            characters[Int(VMIN)] = 1
            characters[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSADRAIN, &attributes) == 0 else {
            throw TerminalError(operation: "tcsetattr", code: errno)
        }
        return saved
    }

    /// Gives the terminal back the mode ``enableRawMode()`` saved. Failures are ignored: there is
    /// nothing better to do with a terminal that went away.
    public func restore(_ mode: SavedMode) {
        var attributes = mode.attributes
        _ = tcsetattr(input, TCSADRAIN, &attributes)
    }

    /// Whether the input terminal is in raw mode as ``enableRawMode()`` sets it (no echo, no
    /// line buffering, no signal keys).
    public var isRaw: Bool {
        var attributes = termios()
        guard tcgetattr(input, &attributes) == 0 else { return false }
        return attributes.c_lflag & tcflag_t(ECHO | ICANON | ISIG) == 0
    }

    /// Writes all of `text` to the output, retrying after interruptions and waiting while a
    /// non-blocking output is full; stops at an error.
    public func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    /// ``write(_:)`` for bytes that need not be UTF-8 (a program's output).
    public func write(bytes: [UInt8]) {
        var bytes = bytes
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = unistdWrite(output, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    var writable = pollfd(fd: output, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&writable, 1, -1)
                    continue
                }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// Reads what is available: at least one byte, blocking until then (or nothing at once from a
    /// non-blocking input with nothing to read). Nil at the end of input or on an error.
    public func read(maximum: Int = 4096) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: max(maximum, 1))
        while true {
            let count = bytes.withUnsafeMutableBytes { unistdRead(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return [] }
            guard count > 0 else { return nil }
            return Array(bytes[..<count])
        }
    }
}

/// The POSIX calls, under names the methods above do not shadow.
private func unistdWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

private func unistdRead(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, bytes, count)
}

/// A terminal call failed.
public struct TerminalError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call: `tcgetattr` or `tcsetattr`.
    public let operation: String
    /// Its `errno`.
    public let code: Int32

    public var description: String {
        "cannot set up the terminal: \(operation): \(String(cString: strerror(code)))"
    }
}
