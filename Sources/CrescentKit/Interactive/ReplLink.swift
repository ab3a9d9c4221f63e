import NIOCore
import LineEditing
import Synchronization

/// What the REPL shares with the threads around its loop: the console's output (which may be
/// written from any thread), the reader thread and the signal queue.
///
/// Output written on the loop goes straight to the ``Repl`` (above the prompt while one is up);
/// output from another thread, or from before the REPL exists, waits here and the loop picks it
/// up.
final class ReplLink: Sendable {
    let loop: any EventLoop
    let terminal: Terminal
    /// True while a chunk's Lua code runs (not while it waits): the reader thread then turns a
    /// Ctrl-C into an interrupt of that code, since the loop is busy and cannot read keys.
    let chunkRunning = Atomic<Bool>(false)
    /// When the reader thread handed the loop a Ctrl-C it has not taken yet (uptime ns, 0: none).
    let interruptPostedAt = Atomic<UInt64>(0)
    private let state = Mutex<State>(State())

    private struct State {
        var repl: NIOLoopBound<Repl>?
        var waiting = ""
        var finished = false
    }

    init(loop: any EventLoop, terminal: Terminal) {
        self.loop = loop
        self.terminal = terminal
    }

    /// Connects the REPL; called on the loop once it exists.
    func attach(_ repl: Repl) {
        let bound = NIOLoopBound(repl, eventLoop: loop)
        let waiting = state.withLock { state in
            state.repl = bound
            defer { state.waiting = "" }
            return state.waiting
        }
        if !waiting.isEmpty { repl.emit(waiting) }
    }

    /// The console's writes, from any thread.
    func emit(_ text: String) {
        if loop.inEventLoop, let repl = state.withLock({ $0.repl }) {
            repl.value.emit(text)
            return
        }
        // Scheduled under the lock, so never after `finish`: the loop may be shut down then,
        // and NIO refuses (and will one day trap on) work handed to a loop that has stopped.
        let finished = state.withLock { state in
            let wasEmpty = state.waiting.isEmpty
            state.waiting += text
            if wasEmpty && state.repl != nil && !state.finished {
                loop.execute { [self] in
                    guard let repl = self.state.withLock({ $0.repl }) else { return }
                    repl.value.emit(takeWaiting())
                    repl.value.flushOutput()
                }
            }
            return state.finished
        }
        if finished { terminal.write(takeWaiting()) }
    }

    /// The end of a loop turn: what was printed while the prompt was up goes above it now.
    func flush() {
        guard loop.inEventLoop, let repl = state.withLock({ $0.repl }) else { return }
        repl.value.flushOutput()
    }

    /// The host has finished: later writes go straight to the terminal.
    func finish() {
        state.withLock { $0.finished = true }
    }

    /// Runs `body` on the REPL as one loop turn (the host then flushes output and delivers
    /// changes). Safe from any thread.
    func turn(_ body: @escaping @Sendable (Repl) -> Void) {
        // Under the lock, so never after `finish` (see `emit`): a key read as the host ends is dropped.
        state.withLock { state in
            guard !state.finished else { return }
            loop.execute { [self] in
                guard let repl = self.state.withLock({ $0.repl })?.value, repl.host.isRunning else { return }
                repl.host.runTurn { _ in body(repl) }
            }
        }
    }

    /// Runs `body` on the REPL now; call it on the loop.
    func withRepl(_ body: (Repl) -> Void) {
        guard loop.inEventLoop, let repl = state.withLock({ $0.repl }) else { return }
        body(repl.value)
    }

    private func takeWaiting() -> String {
        state.withLock { state in
            defer { state.waiting = "" }
            return state.waiting
        }
    }
}
