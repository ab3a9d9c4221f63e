import CPlatform
import Synchronization

/// The process's one ordered output: `print`, `io.write` and the host's messages share C stdio,
/// so what a script prints appears in the order it ran; stderr flushes stdout first.
///
/// An in-process host (tests, embedders) may pass `capture` to receive the text instead. A
/// ``tap`` receives a copy of everything but the view's renders (remote clients that follow the
/// host's output).
public final class Console: Sendable {
    /// The two output streams.
    public enum Stream: Sendable {
        case output, error
    }

    /// Whether messages use ANSI colours (a TTY without `NO_COLOR` or `--no-color`).
    public let colors: Bool
    private let capture: (@Sendable (Stream, String) -> Void)?
    private let flushCapture: (@Sendable () -> Void)?
    /// Checked before taking the tap's lock, so an untapped write costs one relaxed load.
    private let tapped = Atomic<Bool>(false)
    private let tapState = Mutex(Tap())
    /// Checked before taking the diversion's lock, as `tapped` is.
    private let diverted = Atomic<Bool>(false)
    private let diversion = Mutex<Diversion?>(nil)

    /// The diversion's body in a struct: a closure stored in the `Mutex` itself would be read
    /// through `withLock`'s generic inout, which wraps it in two more reabstraction thunks on
    /// every read, so the n-th write ran through 2n thunks (20,000 prints from one key handler
    /// took minutes).
    private struct Diversion {
        let body: @Sendable (Stream, String) -> Void
    }

    /// The tap and the output it has not been given yet: stdout is handed over at each flush
    /// (the end of a loop turn), so a `print` is one piece, not one per argument. Bytes, as the
    /// script wrote them: `io.write` need not write UTF-8.
    private struct Tap {
        var body: (@Sendable (Stream, [UInt8]) -> Void)?
        var pending: [UInt8] = []
    }

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

    /// Receives a copy of each write except the view's renders, from whichever thread writes,
    /// as the bytes written; nil stops the copies.
    public func tap(_ body: (@Sendable (Stream, [UInt8]) -> Void)?) {
        tapState.withLock { $0 = Tap(body: body) }
        tapped.store(body != nil, ordering: .relaxed)
    }

    /// While `body` is set, writes other than the view's renders go to it instead of stdout and
    /// stderr: a controller app on the whole terminal shows them in its status line, and writes
    /// them out with ``writeThrough(_:_:)`` once it has given the terminal back. Nil ends that.
    func divert(_ body: (@Sendable (Stream, String) -> Void)?) {
        diversion.withLock { $0 = body.map(Diversion.init) }
        diverted.store(body != nil, ordering: .relaxed)
    }

    /// Gives `text` to the diversion when there is one; false when there is none.
    private func divertedWrite(_ stream: Stream, _ text: @autoclosure () -> String) -> Bool {
        guard diverted.load(ordering: .relaxed), let diversion = diversion.withLock({ $0 }) else { return false }
        diversion.body(stream, text())
        return true
    }

    /// Writes `text` to `stream` past any diversion and without a copy to the tap (which had
    /// its copy when the text was first written).
    func writeThrough(_ stream: Stream, _ text: String) {
        switch stream {
        case .output: writeView(text)
        case .error:
            if let capture { return capture(.error, text) }
            var bytes = text
            bytes.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { crescent_write_stderr($0.baseAddress, $0.count) }
            }
        }
    }

    /// Gives the tap `bytes`: stdout at the next flush, stderr now (after the stdout before it).
    private func copy(_ stream: Stream, _ bytes: @autoclosure () -> [UInt8]) {
        guard tapped.load(ordering: .relaxed) else { return }
        let text = bytes()
        let (body, pending) = tapState.withLock { tap -> ((@Sendable (Stream, [UInt8]) -> Void)?, [UInt8]) in
            if stream == .output {
                tap.pending += text
                return (nil, [])
            }
            defer { tap.pending = [] }
            return (tap.body, tap.pending)
        }
        guard let body else { return }
        if !pending.isEmpty { body(.output, pending) }
        body(.error, text)
    }

    /// Hands the tap the stdout written since the last flush.
    private func flushTap() {
        guard tapped.load(ordering: .relaxed) else { return }
        let (body, pending) = tapState.withLock { tap in
            defer { tap.pending = [] }
            return (tap.body, tap.pending)
        }
        if let body, !pending.isEmpty { body(.output, pending) }
    }

    /// Writes to stdout (buffered until the end of the loop turn).
    public func write(_ text: String) {
        copy(.output, Array(text.utf8))
        if divertedWrite(.output, text) { return }
        writeView(text)
    }

    /// Writes the view's render to stdout: as ``write(_:)``, without a copy to the tap (remote
    /// clients watch the view by its own notifications).
    func writeView(_ text: String) {
        if let capture { return capture(.output, text) }
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { crescent_write_stdout($0.baseAddress, $0.count) }
        }
    }

    /// Writes a frame of an app on the whole terminal: straight to the terminal while its
    /// session holds it (the guard in terminal.c), after what stdio holds; false, writing
    /// nothing, once the terminal is given back, so no frame lands on the shell's screen
    /// whichever thread gave it back.
    func writeFrame(_ text: String) -> Bool {
        if let capture {
            capture(.output, text)
            return true
        }
        var text = text
        return text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { crescent_terminal_write_frame($0.baseAddress, $0.count) != 0 }
        }
    }

    /// Writes raw bytes to stdout.
    public func write(bytes: UnsafeRawBufferPointer) {
        copy(.output, Array(bytes))
        if divertedWrite(.output, String(decoding: bytes, as: UTF8.self)) { return }
        if let capture { return capture(.output, String(decoding: bytes, as: UTF8.self)) }
        crescent_write_stdout(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
    }

    /// Writes a line to stderr after flushing stdout.
    public func error(_ line: String) {
        let text = line.hasSuffix("\n") ? line : line + "\n"
        copy(.error, Array(text.utf8))
        if divertedWrite(.error, text) { return }
        writeThrough(.error, text)
    }

    /// Writes `text` to stderr as it is (`io.stderr:write`: no newline added), after flushing
    /// stdout.
    public func writeError(_ text: String) {
        guard !text.isEmpty else { return }
        copy(.error, Array(text.utf8))
        if divertedWrite(.error, text) { return }
        writeThrough(.error, text)
    }

    /// Writes raw bytes to stderr (`io.stderr:write`), after flushing stdout.
    public func writeError(bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        copy(.error, Array(bytes))
        if divertedWrite(.error, String(decoding: bytes, as: UTF8.self)) { return }
        if let capture { return capture(.error, String(decoding: bytes, as: UTF8.self)) }
        crescent_write_stderr(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
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

    /// `text` without the colours ``styled(_:_:)`` gave it, for a reader that is not this
    /// terminal (a remote client).
    static func unstyled(_ text: String) -> String {
        guard text.contains("\u{1B}[") else { return text }
        var result = ""
        var rest = Substring(text)
        while let escape = rest.firstRange(of: "\u{1B}[") {
            result += rest[..<escape.lowerBound]
            let codes = rest[escape.upperBound...].prefix { $0.isASCII && ($0.isNumber || $0 == ";") }
            if rest[codes.endIndex...].first == "m" {
                rest = rest[rest.index(after: codes.endIndex)...]
            } else {
                result += rest[escape]
                rest = rest[escape.upperBound...]
            }
        }
        return result + rest
    }

    public func flush() {
        flushTap()
        if capture == nil { crescent_flush_stdout() } else { flushCapture?() }
    }
}
