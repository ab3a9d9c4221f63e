import CLua

/// The process's one ordered output: `print`, `io.write` and the host's messages share C stdio,
/// so what a script prints appears in the order it ran; stderr flushes stdout first.
public final class Console: Sendable {
    /// Whether messages use ANSI colours (a TTY without `NO_COLOR` or `--no-color`).
    public let colors: Bool

    public init(colors: Bool) { self.colors = colors }

    /// Writes to stdout (buffered until the end of the loop turn).
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { crescent_write_stdout($0.baseAddress, $0.count) }
        }
    }

    /// Writes raw bytes to stdout.
    public func write(bytes: UnsafeRawBufferPointer) {
        crescent_write_stdout(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
    }

    /// Writes a line to stderr after flushing stdout.
    public func error(_ line: String) {
        var text = line.hasSuffix("\n") ? line : line + "\n"
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { crescent_write_stderr($0.baseAddress, $0.count) }
        }
    }

    /// Wraps `text` in an SGR colour when colours are on (31 red, 33 yellow, 36 cyan, 2 dim).
    public func styled(_ text: String, _ code: String) -> String {
        colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    public func flush() { crescent_flush_stdout() }
}
