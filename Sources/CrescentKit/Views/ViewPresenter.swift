import CLua
import Model
#if canImport(Glibc)
import Glibc
#endif

/// Shows the top controller's view: rendered once per loop turn when something changed, in the
/// `--ui` mode: `plain` prints the view each time its text changes, `json` prints one object per
/// render, `live` redraws it in place on the terminal, rewriting only the lines that changed.
/// When a person drives the app from the terminal (``enterFullScreen()``), `live` draws
/// ``ScreenFrame``s on the alternate screen instead: the view, the `?` help over it, and the
/// status line.
final class ViewPresenter {
    let mode: HostOptions.UIMode
    private let console: Console
    private(set) var root: ViewNode?
    private(set) var controllerName = ""
    /// Told after each render pass (remote clients watching the view render it their own way).
    var onRender: (() -> Void)?
    private(set) var needsRender = false
    private var lastText: String?
    /// What `live` mode has on the screen, top to bottom; the cursor sits just below it.
    private var screen: [String] = []
    /// Renders so far (for tests and the json output).
    private(set) var renders = 0

    /// In `plain` mode, print a changed view's changed lines only, after the first whole print
    /// (the REPL's choice: the view goes by above the prompt, between the person's lines).
    var printsChangesOnly = false

    /// A fixed layout width, when the host was given one.
    private let fixedWidth: Int?
    /// The key hints and the last message, shown on the status line.
    private(set) var status = StatusLine()
    /// The navigation's title line (`Groceries › Oat milk`), empty when controllers set none.
    private(set) var title = ""
    /// The `?` help shown over the view until a key other than a scroll closes it, or nil.
    private(set) var help: [String]?
    /// The help's first line shown, when it is taller than the screen.
    private(set) var helpTop = 0
    /// While the app has the whole terminal: the frame on the screen (nil before the first and
    /// after a resize or ctrl-l, when the next frame is drawn whole).
    private var fullScreen: FullScreen?

    private struct FullScreen {
        var shown: ScreenFrame?
        var showsCursor = false
    }

    /// In `plain` mode, write the view's control characters as escapes (stdout is a terminal).
    private let escapesControls: Bool

    /// - Parameter escapesControls: in `plain` mode, write the control characters of the view's
    ///   text as `live` does, as escapes (``Model/displayable(_:)``: newlines and tabs kept):
    ///   true when stdout is a terminal, where an `ESC ]0;` or `ESC [2J` in data would act on it.
    ///   False writes the text byte for byte, for a pipe or a file.
    init(mode: HostOptions.UIMode, console: Console, width: Int? = nil, escapesControls: Bool = false) {
        self.mode = mode
        self.console = console
        fixedWidth = width
        self.escapesControls = escapesControls
    }

    /// Makes `root` (the top controller's view) the one shown, or shows nothing.
    func present(_ root: ViewNode?, controller name: String, hints: String = "", title: String = "") {
        self.root?.onDirty = nil
        self.root = root
        controllerName = name
        status.hints = hints
        self.title = title
        root?.onDirty = { [unowned self] in self.needsRender = true }
        needsRender = true
    }

    /// The most columns and rows laid out, whatever size the terminal claims: any program on
    /// the terminal can set 65535 x 65535 (`stty rows 65535 cols 65535`), a frame of four
    /// billion cells that the host allocated without bound (gigabytes, keys no longer read).
    static let maxColumns = 2000
    static let maxRows = 1000

    /// The columns to lay out in: the terminal's width, else `COLUMNS`, else 80 (at most
    /// ``maxColumns``).
    var width: Int {
        if let fixedWidth { return fixedWidth }
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return min(Int(size.ws_col), Self.maxColumns) }
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 0 { return min(columns, Self.maxColumns) }
        return 80
    }

    /// Renders if something changed since the last render. Called at the end of each loop turn.
    func renderIfNeeded() {
        guard needsRender else { return }
        needsRender = false
        onRender?()
        switch mode {
        case .plain:
            let text = Self.trimmed(root?.lines(width: width) ?? []).joined(separator: "\n")
            guard text != lastText, root != nil else { return }
            let previous = lastText
            lastText = text
            guard !text.isEmpty else { return }
            renders += 1
            if printsChangesOnly, let previous, !previous.isEmpty {
                console.writeView(shown(Self.changedLines(from: previous, to: text)) + "\n")
            } else {
                console.writeView(shown(text) + "\n\n")
            }
        case .json:
            guard let root else { return }
            renders += 1
            console.writeView(JSONText.render(controller: controllerName, root: root) + "\n")
        case .live:
            if fullScreen != nil {
                renders += 1
                return drawFrame()
            }
            // A background job (`crescent app.lua &`) draws nothing over the shell's screen: the
            // view comes when the job is brought back (``ForegroundWatch`` sees it and calls
            // ``redrawInForeground()``).
            guard ForegroundWatch.isForeground else { return }
            renders += 1
            redraw(liveLines(width: width))
        }
    }

    /// `plain` mode's text as written: escaped on a terminal, as it is on a pipe otherwise.
    private func shown(_ text: String) -> String {
        escapesControls ? displayable(text) : text
    }

    /// Draws the view again (a job brought back to the foreground).
    func redrawInForeground() {
        needsRender = true
    }

    /// The lines of `new` that differ from the same line of `old`, or that `old` did not have
    /// (all of them when none differs). The REPL's `.load` and `crescent attach` print these.
    static func changedLines(from old: String, to new: String) -> String {
        let before = old.split(separator: "\n", omittingEmptySubsequences: false)
        let after = new.split(separator: "\n", omittingEmptySubsequences: false)
        let changed = after.indices.filter { $0 >= before.count || before[$0] != after[$0] }
        return (changed.isEmpty ? after.indices.map { $0 } : changed).map { String(after[$0]) }.joined(separator: "\n")
    }

    // MARK: The whole terminal

    /// From now on `live` mode draws frames on the alternate screen (which the terminal session
    /// has entered).
    func enterFullScreen() {
        fullScreen = FullScreen()
        needsRender = true
    }

    /// Back to drawing in place (the terminal session has left the alternate screen).
    func leaveFullScreen() {
        fullScreen = nil
    }

    /// The frame for a screen of `width` x `height`.
    func frame(width: Int, height: Int) -> ScreenFrame {
        ScreenFrame(root: root, title: title, overlay: help, overlayTop: helpTop, status: status, width: width, height: height)
    }

    private func drawFrame() {
        // A stop gave the terminal back: the shell's screen is no place for a frame. Taken
        // again, the session draws the next one whole.
        guard !TerminalSession.isGivenBack else { return }
        let rows = height ?? 24
        let frame = frame(width: width, height: rows)
        var output = frame.changes(from: fullScreen?.shown)
        fullScreen?.shown = frame
        // The cursor shows where the command line types, and hides otherwise.
        if let prompt = status.shownPrompt(width: frame.width) {
            output += "\u{1B}[\(rows);\(min(prompt.cursor, frame.width - 1) + 1)H\u{1B}[?25h"
        } else if fullScreen?.showsCursor == true {
            output += "\u{1B}[?25l"
        }
        fullScreen?.showsCursor = status.prompt != nil
        // Given back meanwhile (the run's end from another thread): nothing was drawn, and a
        // session that takes the terminal again draws the next frame whole.
        if !output.isEmpty && !console.writeFrame(output) { fullScreen?.shown = nil }
    }

    /// Draws the status line alone, now, over the frame on the screen: for code that holds the
    /// loop (a handler's `while true do end`), where no turn ends to draw a frame. Builds no view
    /// lines (the view's nodes may be in the middle of a change by that code). With the command
    /// line open (Tab's `complete` that loops), the cursor goes back where the line types.
    func drawStatusLineNow() {
        guard let shown = fullScreen?.shown, !TerminalSession.isGivenBack else { return }
        let frame = shown.replacingStatusLine(with: status.text(width: shown.width))
        var output = frame.changes(from: shown)
        fullScreen?.shown = frame
        guard !output.isEmpty else { return }
        if let prompt = status.shownPrompt(width: frame.width) {
            output += "\u{1B}[\(height ?? 24);\(min(prompt.cursor, frame.width - 1) + 1)H"
        }
        if !console.writeFrame(output) { fullScreen?.shown = nil }
        console.flush()
    }

    /// Shows the command line (its text and cursor column) on the status line, or nil: the hints.
    func showPrompt(_ prompt: (text: String, cursor: Int)?) {
        status.prompt = prompt
        needsRender = true
    }

    /// The rows the view has on the whole terminal (less the title and status lines).
    var viewRows: Int { max((height ?? 24) - 1 - (title.isEmpty ? 0 : 1), 0) }

    /// The line of the view shown on screen row `row` (from 0), or nil for the title and status
    /// lines and while the help is shown.
    func viewLine(ofScreenRow row: Int) -> Int? {
        let line = row - (title.isEmpty ? 0 : 1)
        guard help == nil, line >= 0, line < viewRows else { return nil }
        return line
    }

    /// Draws the next frame whole (ctrl-l, a resize).
    func invalidate() {
        fullScreen?.shown = nil
        needsRender = true
    }

    /// Shows a message on the status line (in full-screen mode, where output cannot go above
    /// the view).
    func showMessage(_ text: String) {
        status.show(text)
        needsRender = true
    }

    /// Shows `text` in place of the key hints (a handler that has run for a while, and how to
    /// stop it), or the hints again for "".
    func showBusy(_ text: String) {
        guard status.busy != text else { return }
        status.busy = text
        needsRender = true
    }

    /// Clears the status line's message (a new command was run).
    func clearMessage() {
        status.message = ""
        needsRender = true
    }

    /// Forgets what was shown and what was done to it: the view, the title, the `?` help and its
    /// scroll, the status line (hints, message, the command line, the busy note) and the last
    /// text printed. A spec file's host starts each test so (``Host/restartModel(services:clock:launcher:)``):
    /// a help one test opened was over the next test's view, and took its first key.
    func reset() {
        present(nil, controller: "")
        status = StatusLine()
        help = nil
        helpTop = 0
        lastText = nil
        screen = []
        needsRender = false
    }

    /// Shows the `?` help over the view, from its first line, until a key closes it.
    func showHelp(_ text: String) {
        help = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        helpTop = 0
        needsRender = true
    }

    /// Closes the help; false when none was shown.
    func dismissHelp() -> Bool {
        guard help != nil else { return false }
        help = nil
        needsRender = true
        return true
    }

    /// `key` while the help is shown: on a help taller than the screen, `down`/`j`, `up`/`k`,
    /// `pagedown`/`space`, `pageup`, `home` and `end` scroll it; any other key closes it. False
    /// when no help is shown (the key is the controller's).
    func helpKey(_ key: String) -> Bool {
        guard let help else { return false }
        let rows = viewRows
        guard help.count > rows, rows > 1 else { return dismissHelp() }
        let page = rows - 1, last = help.count - page
        let top: Int
        switch key {
        case "down", "j": top = helpTop + 1
        case "up", "k": top = helpTop - 1
        case "pagedown", "space": top = helpTop + page
        case "pageup": top = helpTop - page
        case "home": top = 0
        case "end": top = last
        default: return dismissHelp()
        }
        let clamped = min(max(top, 0), last)
        if clamped != helpTop {
            helpTop = clamped
            needsRender = true
        }
        return true
    }

    /// `lines` without the blank lines at their end.
    private static func trimmed(_ lines: [String]) -> [String] {
        var lines = lines
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// Before other output in `live` mode: takes the view off the screen so text printed by the
    /// script appears above it; the view comes back at the end of the turn.
    func clearForOutput() {
        guard fullScreen == nil else { return }
        guard mode == .live, !screen.isEmpty else { return }
        console.writeView("\r\u{1B}[\(screen.count)A\u{1B}[J")
        screen = []
        needsRender = true
    }

    /// At exit: leaves the last view on screen with the cursor shown, below it (on the whole
    /// terminal, the terminal session gives the screen back instead).
    func finish() {
        if mode == .live && fullScreen == nil { console.writeView("\u{1B}[?25h") }
        console.flush()
    }

    /// The terminal's height, else `LINES` (as curses reads it), at most ``maxRows``; nil when
    /// neither is known.
    var height: Int? {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return min(Int(size.ws_row), Self.maxRows) }
        return getenv("LINES").flatMap { Int(String(cString: $0)) }.map { min($0, Self.maxRows) }
    }

    /// What `live` mode shows: the view, or, when it is taller than the terminal, as much as fits
    /// and a line counting the rest (moving the cursor up stops at the top row, so a taller view
    /// could not be redrawn in place). Only the lines shown are laid out, so a table of 10,000
    /// rows costs a screenful per render; the count includes blank lines at the view's end.
    private func liveLines(width: Int) -> [String] {
        guard let root else { return [] }
        guard let height, height > 2 else { return Self.trimmed(root.lines(width: width)) }
        let rows = height - 1
        let count = root.lineCount(width: width)
        guard count > rows else { return Self.trimmed(root.lines(width: width, limit: rows)) }
        return root.lines(width: width, limit: rows - 1) + ["… (\(count - rows + 1) more lines)"]
    }

    private func redraw(_ lines: [String]) {
        var output = "\u{1B}[?25l"
        if !screen.isEmpty { output += "\r\u{1B}[\(screen.count)A" }
        for (index, line) in lines.enumerated() {
            if index >= screen.count || screen[index] != line {
                output += "\r\u{1B}[2K" + DisplayWidth.visible(line)
            }
            output += "\n"
        }
        if lines.count < screen.count { output += "\u{1B}[J" }
        output += "\u{1B}[?25h"
        screen = lines
        console.writeView(output)
    }
}
