import CLua
import Model
#if canImport(Glibc)
import Glibc
#endif

/// Shows the top controller's view: rendered once per loop turn when something changed, in the
/// `--ui` mode: `plain` prints the view each time its text changes, `json` prints one object per
/// render, `live` redraws it in place on the terminal, rewriting only the lines that changed.
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

    init(mode: HostOptions.UIMode, console: Console, width: Int? = nil) {
        self.mode = mode
        self.console = console
        fixedWidth = width
    }

    /// Makes `root` (the top controller's view) the one shown, or shows nothing.
    func present(_ root: ViewNode?, controller name: String) {
        self.root?.onDirty = nil
        self.root = root
        controllerName = name
        root?.onDirty = { [unowned self] in self.needsRender = true }
        needsRender = true
    }

    /// The columns to lay out in: the terminal's width, else `COLUMNS`, else 80.
    var width: Int {
        if let fixedWidth { return fixedWidth }
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 0 { return columns }
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
                console.writeView(Self.changedLines(from: previous, to: text) + "\n")
            } else {
                console.writeView(text + "\n\n")
            }
        case .json:
            guard let root else { return }
            renders += 1
            console.writeView("{\"controller\":\(JSONText.string(controllerName)),\"view\":\(JSONText.node(root))}\n")
        case .live:
            renders += 1
            redraw(liveLines(width: width))
        }
    }

    /// The lines of `new` that differ from the same line of `old`, or that `old` did not have.
    private static func changedLines(from old: String, to new: String) -> String {
        let before = old.split(separator: "\n", omittingEmptySubsequences: false)
        let after = new.split(separator: "\n", omittingEmptySubsequences: false)
        let changed = after.indices.filter { $0 >= before.count || before[$0] != after[$0] }
        return (changed.isEmpty ? after.indices.map { $0 } : changed).map { String(after[$0]) }.joined(separator: "\n")
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
        guard mode == .live, !screen.isEmpty else { return }
        console.writeView("\r\u{1B}[\(screen.count)A\u{1B}[J")
        screen = []
        needsRender = true
    }

    /// At exit: leaves the last view on screen with the cursor shown, below it.
    func finish() {
        if mode == .live { console.writeView("\u{1B}[?25h") }
        console.flush()
    }

    /// The terminal's height, else `LINES` (as curses reads it); nil when neither is known.
    private var height: Int? {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return Int(size.ws_row) }
        return getenv("LINES").flatMap { Int(String(cString: $0)) }
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
                output += "\r\u{1B}[2K" + line
            }
            output += "\n"
        }
        if lines.count < screen.count { output += "\u{1B}[J" }
        output += "\u{1B}[?25h"
        screen = lines
        console.writeView(output)
    }
}
