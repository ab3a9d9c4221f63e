import CLua

/// The process's one ordered output: `print`, `io.write` and the host's messages share C stdio,
/// so what a script prints appears in the order it ran; stderr flushes stdout first.
///
/// An in-process host (tests, embedders) may pass `capture` to receive the text instead.
public final class Console: Sendable {
    /// The two output streams.
    public enum Stream: Sendable {
        case output, error
    }

    /// Whether messages use ANSI colours (a TTY without `NO_COLOR` or `--no-color`).
    public let colors: Bool
    private let capture: (@Sendable (Stream, String) -> Void)?
    private let flushCapture: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - capture: receives every write instead of stdout/stderr when given.
    ///   - flush: called with `capture` at the end of each loop turn (the REPL prints what was
    ///     captured above its prompt then).
    public init(colors: Bool, capture: (@Sendable (Stream, String) -> Void)? = nil,
                flush: (@Sendable () -> Void)? = nil) {
        self.colors = colors
        self.capture = capture
        flushCapture = flush
    }

    /// Writes to stdout (buffered until the end of the loop turn).
    public func write(_ text: String) {
        if let capture { return capture(.output, text) }
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { crescent_write_stdout($0.baseAddress, $0.count) }
        }
    }

    /// Writes raw bytes to stdout.
    public func write(bytes: UnsafeRawBufferPointer) {
        if let capture { return capture(.output, String(decoding: bytes, as: UTF8.self)) }
        crescent_write_stdout(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
    }

    /// Writes a line to stderr after flushing stdout.
    public func error(_ line: String) {
        let text = line.hasSuffix("\n") ? line : line + "\n"
        if let capture { return capture(.error, text) }
        var bytes = text
        bytes.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { crescent_write_stderr($0.baseAddress, $0.count) }
        }
    }

    /// How a label is shown when colours are on.
    public enum Style: String, Sendable {
        /// Red: errors.
        case error = "31"
        /// Yellow: warnings.
        case warning = "33"
        /// Cyan: information.
        case info = "36"
        /// Dim: debugging detail.
        case dim = "2"

        /// The style of a log line's level label.
        public init(_ level: HostOptions.LogLevel) {
            self = switch level {
            case .debug: .dim
            case .info: .info
            case .warn: .warning
            case .error: .error
            }
        }
    }

    /// `text` in `style` when colours are on (an SGR sequence around it), else `text` alone.
    public func styled(_ text: String, _ style: Style) -> String {
        colors ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    public func flush() {
        if capture == nil { crescent_flush_stdout() } else { flushCapture?() }
    }
}
