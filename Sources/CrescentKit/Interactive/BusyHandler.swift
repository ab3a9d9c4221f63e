import Synchronization

/// Which key or command handler of a controller app on the terminal runs, and since when: what
/// the status line's busy indicator shows, and what tells a Ctrl-C that stops that handler from
/// one that quits.
///
/// Keys and commands run one at a time (a key waits behind the handler before it, so `j j enter`
/// typed fast lands in order). A handler that waits (a slow service, `sleep`) or loops would leave
/// the app deaf: after ``indicatorDelay`` the status line says which handler runs and for how
/// long, and a Ctrl-C then stops it (its task cancelled, or its running code interrupted) and
/// drops the keys that waited behind it, as a terminal's own Ctrl-C drops its type-ahead. A
/// Ctrl-C while nothing has run that long quits, as does a second one while a stop has not
/// finished (a handler stuck where no interrupt reaches).
///
/// The host's loop marks starts and ends; the key reader's thread asks ``interrupt(at:)``.
///
/// ```swift
/// busy.started(.key("s"), at: clock.uptime)       // on the loop, as the handler starts
/// busy.interrupt(at: clock.uptime)                // reader thread, Ctrl-C: .stop or .quit
/// busy.ended()                                    // on the loop, as the queue empties
/// ```
final class BusyHandler: Sendable {
    /// How long a handler runs before the status line shows it, and before a Ctrl-C stops it
    /// rather than quitting.
    static let indicatorDelay: Duration = .milliseconds(500)

    /// What runs: a key's, a command's or a click's handler.
    enum Work: Equatable, Sendable {
        case key(String)
        case command(String)
        case click
        /// Tab on the command line, completing an argument of the command named.
        case completion(String)

        /// As the status line names it.
        var description: String {
            switch self {
            case .key(let name): "key '\(name)'"
            case .command(let name): "command '\(name)'"
            case .click: "a click"
            case .completion(let name): "Tab completion of '\(name)'"
            }
        }
    }

    enum Phase: Equatable, Sendable {
        /// No key or command runs.
        case idle
        /// `work` runs since `since` (the clock's uptime).
        case running(Work, since: Duration)
        /// A Ctrl-C stopped `work`; the loop has not finished the stop yet. `dropped` keys came
        /// from the terminal meanwhile (typed before the Ctrl-C, behind a handler that held the
        /// loop) and are dropped with the ones that waited in the queue.
        case stopping(Work, since: Duration, dropped: Int)
    }

    /// What a Ctrl-C does.
    enum Answer: Equatable {
        /// Stop the running handler (it has run past ``indicatorDelay``).
        case stop
        /// Quit the app (status 130).
        case quit
    }

    private let state = Mutex(Phase.idle)
    /// When the running handler was last shown from inside its code (``noticeDue(at:)``).
    private let lastNotice = Mutex<Duration?>(nil)

    /// From the key reader's thread while no key comes: whether the handler that runs should be
    /// shown from inside its code now (past ``indicatorDelay``, a second after the last time).
    func noticeDue(at uptime: Duration) -> Bool {
        guard case .running(_, let since) = phase, uptime - since >= Self.indicatorDelay else { return false }
        return lastNotice.withLock { last in
            if let last, last >= since, uptime - last < .seconds(1) { return false }
            last = uptime
            return true
        }
    }

    /// The phase now.
    var phase: Phase { state.withLock { $0 } }

    /// Whether a Ctrl-C's stop is under way: the "interrupted" error it raises in running code
    /// is that stop, no failure of the handler.
    var isStopping: Bool {
        state.withLock { phase in
            if case .stopping = phase { return true }
            return false
        }
    }

    /// `work` starts now (`uptime`). Ignored while a stop is under way: what runs before the
    /// stop finishes is interrupted with it.
    func started(_ work: Work, at uptime: Duration) {
        state.withLock { phase in
            if case .stopping = phase { return }
            phase = .running(work, since: uptime)
        }
    }

    /// No key or command runs any more (the queue is empty).
    func ended() {
        state.withLock { phase in
            if case .stopping = phase { return }
            phase = .idle
        }
    }

    /// A Ctrl-C at `uptime`, from the key reader's thread: `.stop` (and the phase becomes
    /// stopping) when a handler has run past ``indicatorDelay``, else `.quit`.
    func interrupt(at uptime: Duration) -> Answer {
        state.withLock { phase in
            guard case .running(let work, let since) = phase, uptime - since >= Self.indicatorDelay else { return .quit }
            phase = .stopping(work, since: since, dropped: 0)
            return .stop
        }
    }

    /// On the loop, for keys read from the terminal: while a stop is under way they are dropped
    /// and counted (true), as a terminal's own Ctrl-C drops its type-ahead. A handler that held
    /// the loop kept them out of the queue the stop empties: they come as turns of their own
    /// before the stop finishes, and would run (or be interrupted with the handler) unsaid.
    func dropWhileStopping(_ count: Int) -> Bool {
        state.withLock { phase in
            guard case .stopping(let work, let since, let dropped) = phase else { return false }
            phase = .stopping(work, since: since, dropped: dropped + count)
            return true
        }
    }

    /// The loop has finished a stop: returns what was stopped, since when, and how many keys
    /// were dropped meanwhile (``dropWhileStopping(_:)``).
    func finishStop() -> (work: Work, since: Duration, dropped: Int)? {
        state.withLock { phase in
            defer { phase = .idle }
            guard case .stopping(let work, let since, let dropped) = phase else { return nil }
            return (work, since, dropped)
        }
    }
}
