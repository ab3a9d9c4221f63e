import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Watches for terminal resizes (SIGWINCH) without a signal handler of our own: Dispatch receives
/// the signal and this sets a flag and calls back, on a private queue. Dispatch registers the
/// source asynchronously, so a resize in the first instant after `init` may go unseen.
///
/// Poll ``consume()`` where the host reads input, or pass `onResize` to hop onto the host's loop;
/// either way, ask ``Terminal/columns`` for the new width and write
/// ``PromptSession/resize(width:)``'s bytes.
///
/// ```swift
/// let monitor = ResizeMonitor { loop.execute { write(session.resize(width: terminal.columns)) } }
/// // or, polling:
/// if monitor.consume() { write(session.resize(width: terminal.columns)) }
/// monitor.cancel()
/// ```
public final class ResizeMonitor: @unchecked Sendable {
    // @unchecked: `resized` and `source` are only touched on `queue`.
    private let queue = DispatchQueue(label: "crescent.repl.resize")
    private var resized = false
    private var source: (any DispatchSourceSignal)?

    /// Starts watching. `onResize` runs on a private queue after each SIGWINCH.
    public init(onResize: (@Sendable () -> Void)? = nil) {
        // SIGWINCH is ignored by default, so no disposition to change: Dispatch installs what it
        // needs (on Linux a handler that forwards to its signalfd; setting SIG_IGN here would undo
        // that for a second monitor).
        let source = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: queue)
        source.setEventHandler { [weak self] in
            self?.resized = true
            onResize?()
        }
        queue.sync { self.source = source }
        source.resume()
    }

    deinit {
        source?.cancel()
    }

    /// Whether the terminal was resized since the last call.
    public func consume() -> Bool {
        queue.sync {
            defer { resized = false }
            return resized
        }
    }

    /// Stops watching.
    public func cancel() {
        queue.sync {
            source?.cancel()
            source = nil
        }
    }
}
