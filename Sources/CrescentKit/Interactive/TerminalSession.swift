import CPlatform
import Dispatch
import LineEditing
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The terminal of a controller app while a person drives it: raw mode, the alternate screen
/// with the cursor hidden, keys read on a thread of their own, resizes watched, and the terminal
/// given back as found on every way out.
///
/// The host gives it back when it finishes (`quit`, `app.exit`, an error that ends the run,
/// SIGINT/SIGTERM/SIGHUP and `--timeout`, which all tear down through ``Host/finish(status:)``);
/// `exit()` and a crash signal give it back through `CPlatform`'s terminal guard (terminal.c), which
/// is armed for as long as the session is. A stop (ctrl-z, `kill -TSTP`, job control) gives it
/// back from the guard's SIGTSTP handler, and the reader takes it again once the process is
/// continued in the foreground.
///
/// ```swift
/// let session = try TerminalSession(terminal: .standard)
/// session.readKeys(onKeys: { names in ... }, onInterrupt: { ... }, onResize: { ... })
/// defer { session.end() }
/// ```
final class TerminalSession: Sendable {
    /// Alternate screen, cursor hidden, screen cleared, clicks and the wheel reported (SGR),
    /// pasted text marked (bracketed paste: a paste is text for the command line, never keys).
    static let enterBytes = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J\u{1B}[?1000h\u{1B}[?1006h\u{1B}[?2004h"
    /// Everything an interactive run may turn on, turned off: bracketed paste, a frame's
    /// synchronized output, mouse reporting, attributes, the hidden cursor, the alternate screen.
    static let leaveBytes = "\u{1B}[?2004l\u{1B}[?2026l\u{1B}[?1006l\u{1B}[?1000l\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"
    /// How long a lone Esc waits for the rest of a sequence before it is the Esc key (vim's
    /// `ttimeoutlen`).
    static let escapeWait: Int32 = 50
    /// How often the reader looks whether the session has ended while no key comes.
    static let readerPoll: Int32 = 100
    /// How long a bracketed paste may go without a byte before what arrived of it is the paste
    /// and keys are read again (a paste whose end mark was lost must not swallow Ctrl-C).
    static let pasteWait: Int32 = 1000

    let terminal: Terminal
    private let phase = Mutex(Phase.active)
    private let resize = Mutex<ResizeMonitor?>(nil)
    /// Readable after the process is continued from a stop that gave the terminal back (-1:
    /// none; the reader then looks at each idle tick).
    private let continued: Int32

    private enum Phase {
        case active, ended
    }

    /// Puts the terminal in raw mode and on the alternate screen.
    ///
    /// - Throws: ``LineEditing/TerminalError`` when the input is not a terminal.
    init(terminal: Terminal) throws(TerminalError) {
        self.terminal = terminal
        let saved = try terminal.enableRawMode()
        continued = crescent_terminal_catch_stop()
        arm(saved)
        terminal.write(Self.enterBytes)
    }

    /// Arms the crash guard with `mode`. The guard takes a termios of this platform's size and a
    /// few bytes, and refuses only when those do not fit, which a build for this platform never
    /// sees; the normal ways out restore regardless.
    private func arm(_ mode: Terminal.SavedMode) {
        Self.armGuard(terminal, restoring: mode, writing: Self.leaveBytes)
    }

    /// Arms the crash guard: `exit()` or a crash signal restores `terminal`'s `mode` and writes
    /// `bytes` until `crescent_terminal_disarm()`.
    static func armGuard(_ terminal: Terminal, restoring mode: Terminal.SavedMode, writing bytes: String) {
        _ = mode.withUnsafeBytes { mode in
            bytes.utf8CString.withUnsafeBufferPointer { bytes in
                crescent_terminal_arm(terminal.input, terminal.output, mode.baseAddress, mode.count, bytes.baseAddress, bytes.count - 1)
            }
        }
    }

    /// Whether the session still holds the terminal.
    var isActive: Bool { phase.withLock { $0 == .active } }

    /// Whether a stop gave the terminal back and no session has taken it again yet: no frame is
    /// drawn meanwhile (it would land on the shell's screen).
    static var isGivenBack: Bool { crescent_terminal_is_given_back() != 0 }

    /// Starts reading keys: each read's keys go to `onKeys`, clicks and the wheel to
    /// `onMouse`, and Ctrl-C to `onInterrupt` (never to the script: the host stops a handler
    /// that runs long with it, or the run, even one stuck in a loop), all on the reader's thread; `onResize` after each SIGWINCH. The
    /// reader stops when the session ends or the input does. `onIdle` runs on the reader's thread
    /// each time ``readerPoll`` passes without a byte (off the host's loop, which a handler's
    /// loop may hold).
    func readKeys(onKeys: @escaping @Sendable ([Key]) -> Void, onMouse: @escaping @Sendable (MouseEvent) -> Void,
                  onInterrupt: @escaping @Sendable () -> Void, onResize: @escaping @Sendable () -> Void,
                  onIdle: @escaping @Sendable () -> Void = {}) {
        resize.withLock { $0 = ResizeMonitor(onResize: onResize) }
        let terminal = self.terminal
        DispatchQueue(label: "crescent.keys").async { [self] in
            let question = TerminalQuestion.shared.readerStarted(TerminalQuestion.Reader(
                show: { text in terminal.write("\u{1B}[H\u{1B}[2J" + text) },
                answered: { _ in onResize() }))
            defer { TerminalQuestion.shared.readerEnded(question) }
            // Bytes that are not UTF-8 are kept: the command line shows them and refuses them,
            // where dropped they shifted the words after them.
            var decoder = KeyDecoder(invalidBytes: .kept)
            while isActive {
                // Given back by a stop: nothing is read (the keys are the shell's) until the
                // process is continued in the foreground and the terminal taken again, drawn whole.
                if Self.isGivenBack {
                    if takeBackAfterStop() { onResize() } else { waitForContinue(milliseconds: Self.readerPoll) }
                    continue
                }
                let wait = decoder.isAwaitingMoreBytes ? Self.escapeWait : decoder.isInPaste ? Self.pasteWait : Self.readerPoll
                guard waitForInput(terminal.input, milliseconds: wait) else {
                    if decoder.isAwaitingMoreBytes { deliver(decoder.flush(), onKeys: onKeys, onMouse: onMouse, onInterrupt: onInterrupt) }
                    if decoder.isInPaste { deliver(decoder.endPaste(), onKeys: onKeys, onMouse: onMouse, onInterrupt: onInterrupt) }
                    onIdle()
                    continue
                }
                guard let bytes = terminal.read(), isActive else { return }
                if TerminalQuestion.shared.offer(bytes) { continue }
                deliver(decoder.decode(bytes), onKeys: onKeys, onMouse: onMouse, onInterrupt: onInterrupt)
            }
        }
    }

    private func deliver(_ keys: [Key], onKeys: @Sendable ([Key]) -> Void, onMouse: @Sendable (MouseEvent) -> Void,
                         onInterrupt: @Sendable () -> Void) {
        var pending: [Key] = []
        for key in keys {
            switch key {
            case .control("c"):
                if !pending.isEmpty { onKeys(pending) }
                pending = []
                onInterrupt()
            case .mouse(let event):
                if !pending.isEmpty { onKeys(pending) }
                pending = []
                onMouse(event)
            default:
                pending.append(key)
            }
        }
        if !pending.isEmpty { onKeys(pending) }
    }

    /// Whether `descriptor` has input within `milliseconds`. A stop's continue ends the wait too
    /// (its byte taken).
    private func waitForInput(_ descriptor: Int32, milliseconds: Int32) -> Bool {
        var pollers = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: continued, events: Int16(POLLIN), revents: 0)]
        guard poll(&pollers, continued >= 0 ? 2 : 1, milliseconds) > 0 else { return false }
        if pollers[1].revents != 0 { takeContinuedBytes() }
        return pollers[0].revents != 0
    }

    /// Waits up to `milliseconds` for the byte that says the process was continued, and takes it.
    private func waitForContinue(milliseconds: Int32) {
        var poller = pollfd(fd: continued, events: Int16(POLLIN), revents: 0)
        if poll(&poller, continued >= 0 ? 1 : 0, milliseconds) > 0 { takeContinuedBytes() }
    }

    private func takeContinuedBytes() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(continued, &bytes, bytes.count) > 0 {}
    }

    /// Ctrl-Z: stops the process (SIGTSTP, as the terminal's own Ctrl-Z would), whose handler
    /// gives the terminal back first, as it does for a stop from outside; once continued in the
    /// foreground (`fg`), takes it again. The caller redraws the whole frame afterwards. With
    /// SIGTSTP ignored (job control off) nothing happens.
    func suspend() {
        guard isActive else { return }
        raise(SIGTSTP)
        takeBackAfterStop()
    }

    /// After a stop gave the terminal back: raw mode (the mode it had while stopped, a shell's
    /// own, saved for the crash guard), the alternate screen; true when it was taken. Not while
    /// the process is a background job (`bg`: its modes are the shell's to set), nor after the
    /// session ended. From the reader's thread or the loop, one at a time.
    @discardableResult
    private func takeBackAfterStop() -> Bool {
        phase.withLock { phase in
            let stop = crescent_terminal_continued_stop()
            guard phase == .active, stop != 0, terminal.isForeground, let again = try? terminal.enableRawMode() else { return false }
            arm(again)
            terminal.write(Self.enterBytes)
            crescent_terminal_taken_back(stop)
            return true
        }
    }

    /// The terminal's size, or nil when it reports none.
    var size: (columns: Int, rows: Int)? { terminal.windowSize() }

    /// Gives the terminal back: leaves the alternate screen, shows the cursor, turns off what was
    /// turned on, restores the mode. Write the last frame (and flush stdio) before. Safe to call
    /// twice.
    ///
    /// Through the guard (terminal.c), as every other way out: an exit from the stop thread
    /// that comes meanwhile waits for this restore instead of ending the process halfway through
    /// it, one that came first has done it (and nothing is written twice), a stop that gave the
    /// terminal back left nothing to do, and a background job (`bg`) leaves the shell's modes alone.
    func end() {
        let wasActive = phase.withLock { phase in
            defer { phase = .ended }
            return phase == .active
        }
        guard wasActive else { return }
        resize.withLock { monitor in
            monitor?.cancel()
            monitor = nil
        }
        crescent_terminal_release_stop()
        crescent_terminal_restore()
        crescent_terminal_forget_stops()
    }
}
