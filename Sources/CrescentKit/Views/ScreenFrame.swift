/// One frame of a controller app on the whole terminal: the navigation's title line (when
/// controllers have titles), the top controller's view (or the `?` help over it) with the focused
/// selection in reverse video, and the status line at the bottom, exactly `height` lines each
/// fitted to `width` columns. A frame is a value: the terminal is brought from the last frame to the next by
/// ``changes(from:)``, which writes only the rows that differ, and tests compare frames with no
/// terminal at all (Bubble Tea's view, Textual's compositor).
///
/// ```swift
/// let frame = ScreenFrame(root: root, title: "Groceries › Oat milk", overlay: nil, status: status, width: 80, height: 24)
/// console.writeView(frame.changes(from: shown))
/// ```
struct ScreenFrame: Equatable {
    /// The rows, top to bottom, each cut to `width` columns. They are padded with spaces only as
    /// they are written (``changes(from:)``): a frame compares and keeps them short, so a move of
    /// the selection pads the two rows it changes, not the screenful.
    let rows: [String]
    /// Rows shown in reverse video (the selected row, the status line).
    let reversed: Set<Int>
    let width: Int

    /// Lays out a frame. A view taller than the rows above the status line shows what fits and a
    /// last line counting the rest, unless it has a selection, which scrolls instead; only those
    /// lines are laid out, so a 10,000-row table costs a screenful.
    ///
    /// An `overlay` (the `?` help) taller than its room shows the lines from `overlayTop` (from 0)
    /// and a last line saying which lines these are and how to scroll.
    init(root: ViewNode?, title: String = "", overlay: [String]?, overlayTop: Int = 0, status: StatusLine, width: Int, height: Int) {
        let width = max(width, 1)
        let top = title.isEmpty || height < 3 ? 0 : 1
        let viewRows = max(height - 1 - top, 0)
        var lines: [String] = top == 1 ? [Self.fitted(title: title, width: width)] : []
        var reversed: Set<Int> = []
        if var overlay {
            // The `?` help ends with a status message the line had to cut, whole.
            overlay += status.wholeMessage(width: width)
            lines += Self.window(of: overlay, from: overlayTop, rows: viewRows)
        } else if let root {
            if !root.selectables.isEmpty {
                lines += root.lines(width: width, limit: viewRows)
                if let selected = root.selectedLine(width: width, limit: viewRows) { reversed.insert(top + selected) }
            } else {
                let count = root.lineCount(width: width)
                lines += count > viewRows
                    ? root.lines(width: width, limit: max(viewRows - 1, 0)) + ["… (\(count - viewRows + 1) more lines)"]
                    : root.lines(width: width, limit: viewRows)
            }
        }
        lines = Array(lines.prefix(top + viewRows))
        lines += Array(repeating: "", count: top + viewRows - lines.count)
        if height > 0 {
            lines.append(status.text(width: width))
            reversed.insert(lines.count - 1)
        }
        rows = lines.map { DisplayWidth.truncate($0, to: width) }
        self.reversed = reversed
        self.width = width
    }

    private init(rows: [String], reversed: Set<Int>, width: Int) {
        self.rows = rows
        self.reversed = reversed
        self.width = width
    }

    /// This frame with its last row (the status line) replaced by `status` fitted to the width.
    func replacingStatusLine(with status: String) -> ScreenFrame {
        guard !rows.isEmpty else { return self }
        var rows = self.rows
        rows[rows.count - 1] = DisplayWidth.truncate(status, to: width)
        return ScreenFrame(rows: rows, reversed: reversed, width: width)
    }

    /// The navigation's title line in `width` columns: a stack too deep to fit loses its first
    /// titles behind `… › `, so the controller on top, the one the keys act on, stays in view.
    static func fitted(title: String, width: Int) -> String {
        guard DisplayWidth.of(title) > width else { return title }
        var titles = title.split(separator: " › ", omittingEmptySubsequences: false)
        while titles.count > 1 {
            titles.removeFirst()
            let line = "… › " + titles.joined(separator: " › ")
            if DisplayWidth.of(line) <= width { return line }
        }
        return title
    }

    /// The rows of `overlay` shown in `rows` rows from line `first`: all of it when it fits, else
    /// a window and a last line saying where it is and which keys scroll it.
    static func window(of overlay: [String], from first: Int, rows: Int) -> [String] {
        guard overlay.count > rows else { return overlay }
        let shown = rows - 1
        guard shown > 0 else { return Array(overlay.prefix(rows)) }
        let start = min(max(first, 0), overlay.count - shown)
        return Array(overlay[start..<start + shown])
            + ["— lines \(start + 1)–\(start + shown) of \(overlay.count) · ↓ ↑ pgdn pgup home end scroll · other keys close —"]
    }

    /// The frame as plain text, as the terminal shows it (``DisplayWidth/visible(_:)``), trailing
    /// spaces and blank lines at the end removed (what `screen_text()` returns).
    var text: String {
        var lines = rows.map { line -> String in
            var line = DisplayWidth.visible(line)
            while line.last == " " { line.removeLast() }
            return line
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    /// The bytes that turn a terminal showing `old` into this frame: each changed row written at
    /// its place (`CSI row;1H`), padded to the width, the whole inside synchronized-output marks (`CSI ?2026h/l`) so a
    /// terminal that knows them never shows half a frame. With no `old` (the first frame, a
    /// resize, ctrl-l) the screen is cleared and every row written. Empty when nothing changed.
    func changes(from old: ScreenFrame?) -> String {
        let old = old.flatMap { $0.width == width && $0.rows.count == rows.count ? $0 : nil }
        // The rows and marks bound once: read through the optional in the loop, each row's
        // comparison retained and released the arrays (a tenth of a key's frame with the rest).
        let oldRows = old?.rows ?? []
        let oldReversed = old?.reversed ?? []
        var output = ""
        for index in rows.indices {
            let row = rows[index], shownReversed = reversed.contains(index)
            if !oldRows.isEmpty && oldRows[index] == row && oldReversed.contains(index) == shownReversed { continue }
            if output.isEmpty { output.reserveCapacity(2 * (width + 16)) }
            output += "\u{1B}["
            output += String(index + 1)
            output += ";1H"
            if shownReversed { output += "\u{1B}[7m" }
            output += DisplayWidth.visible(row)
            let missing = width - DisplayWidth.of(row)
            if missing > 0 { output += DisplayWidth.spaces(missing) }
            if shownReversed { output += "\u{1B}[0m" }
        }
        guard !output.isEmpty || old == nil else { return "" }
        return "\u{1B}[?2026h" + (old == nil ? "\u{1B}[H\u{1B}[2J" : "") + output + "\u{1B}[?2026l"
    }
}

/// The status line: the top controller's key hints (or, while a handler has run for a while,
/// what runs and how to stop it), then the last message (a handler's error, a `print`), cut to
/// the width; or the `:` command line while it is open.
struct StatusLine: Equatable {
    var hints = ""
    /// What runs, in place of the hints (``BusyHandler``); empty when nothing has run long.
    var busy = ""
    var message = ""
    /// The command line's text and its cursor's column, while it is open.
    var prompt: (text: String, cursor: Int)?

    static func == (left: StatusLine, right: StatusLine) -> Bool {
        left.hints == right.hints && left.busy == right.busy && left.message == right.message && left.prompt?.text == right.prompt?.text
            && left.prompt?.cursor == right.prompt?.cursor
    }

    /// The line at `width`: the hints, then the message. Hints that leave the message too little
    /// room are shortened at a whole hint and end in `… ?` (the `?` help lists every key), as
    /// Bubble Tea's help drops the bindings that do not fit behind an ellipsis: the message (an
    /// error, a `print`) is what the person has not read yet, so it may take two thirds of the
    /// line. A message that still does not fit ends in `… (?)`, and the `?` help shows it
    /// whole (``wholeMessage(width:)``): its fix, at the end (`did you mean 'add'?`), was cut
    /// off. The hints stay first, where the keys are read.
    func text(width: Int) -> String {
        if let shown = shownPrompt(width: width) { return promptNote.isEmpty ? shown.text : shown.text + "   │ " + promptNote }
        return layout(width: width).line
    }

    /// What shows beside the open command line: what runs (Tab's `complete` that loops, named
    /// while it runs as a key's handler is), else the message.
    private var promptNote: String { busy.isEmpty ? message : busy }

    /// The line at `width` and whether the message in it was cut.
    private func layout(width: Int) -> (line: String, messageCut: Bool) {
        // A handler past its first half second shows as busy where the hints were.
        let lead = busy.isEmpty ? Self.shortened(hints: hints, to: width) : busy
        guard !message.isEmpty else { return (lead, false) }
        let separator = "  │ "
        let line = lead.isEmpty ? message : lead + separator + message
        guard DisplayWidth.of(line) > width else { return (line, false) }
        var shortLead = lead
        if busy.isEmpty && !lead.isEmpty {
            // The hints get what the message leaves, down to a third of the line.
            let room = max(width - DisplayWidth.of(message) - DisplayWidth.of(separator), width / 3)
            shortLead = Self.shortened(hints: hints, to: room)
        }
        let shortLine = shortLead.isEmpty ? message : shortLead + separator + message
        guard DisplayWidth.of(shortLine) > width else { return (shortLine, false) }
        let mark = " (?)"
        let room = width - DisplayWidth.of(mark)
        guard room >= width / 2 else { return (shortLine, true) }
        return (DisplayWidth.truncate(shortLine, to: room) + mark, true)
    }

    /// `hints` (`a add  d delete  ? help`) in `width` columns: whole, or as many whole hints as
    /// fit followed by `… ?`, which names the key that lists them all. The first hint left out,
    /// when its help is longer than ``leastHelpShown`` columns, is shown in the room left rather
    /// than dropped, cut with an ellipsis if need be (`x delete the selected… ?`), as long as
    /// that room shows ``leastHelpShown`` columns of it.
    static func shortened(hints: String, to width: Int) -> String {
        guard DisplayWidth.of(hints) > width else { return hints }
        let more = "… ?"
        var kept = ""
        var first: String?
        for hint in hints.split(separator: "  ").map(String.init) {
            let candidate = kept.isEmpty ? hint : kept + "  " + hint
            guard DisplayWidth.of(candidate) + 2 + DisplayWidth.of(more) <= width else {
                first = hint
                break
            }
            kept = candidate
        }
        let lead = kept.isEmpty ? "" : kept + "  "
        let room = width - DisplayWidth.of(lead) - 2
        if let hint = first {
            let key = DisplayWidth.of(String(hint.prefix { $0 != " " }))
            if DisplayWidth.of(hint) - key - 1 > leastHelpShown, room - key - 2 >= leastHelpShown {
                return lead + DisplayWidth.truncate(hint, to: room) + " ?"
            }
        }
        return kept.isEmpty ? more : kept + "  " + more
    }

    /// A hint left out whose help is at most this many columns goes behind `… ?`; a hint cut to
    /// the room left shows at least this many columns of its help (past its key and its space,
    /// before its `…`).
    static let leastHelpShown = 8

    /// The message, wrapped at `width` between words, under a heading: for the `?` help, which
    /// shows what the status line had to cut. Empty when the status line shows it whole.
    func wholeMessage(width: Int) -> [String] {
        guard !message.isEmpty, width > 0, layout(width: width).messageCut else { return [] }
        let lines = DisplayWidth.wrap(message, to: width)
        return ["", "Last message:"] + lines
    }

    /// The command line as shown in `width` columns, and the cursor's column in it. A line wider
    /// than its room (the width, less the message's, down to a third of the width) scrolls so
    /// that the cursor stays on screen, a `…` in front standing for what scrolled off.
    func shownPrompt(width: Int) -> (text: String, cursor: Int)? {
        guard let prompt else { return nil }
        let room = max(promptNote.isEmpty ? width : max(width - DisplayWidth.of(promptNote) - 5, width / 3), 2)
        guard prompt.cursor >= room else { return (DisplayWidth.truncate(prompt.text, to: room), prompt.cursor) }
        var shown = Substring(prompt.text)
        var cursor = prompt.cursor + 1   // after the `…`
        while cursor > room - 1, let first = shown.first {
            cursor -= DisplayWidth.of(first)
            shown = shown.dropFirst()
        }
        return (DisplayWidth.truncate("…" + shown, to: room), cursor)
    }

    /// Shows the first line of `text` that is not blank (a traceback shows its error line),
    /// without its colours.
    ///
    /// A carriage return inside a line is no line break: what follows it is what a terminal
    /// shows there (a progress count's last figure), so that is shown when it is not blank.
    mutating func show(_ text: String) {
        let lines = Self.withoutEscapes(text).split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map { line in
            let shown = line.split(separator: "\r").last { !$0.allSatisfy(\.isWhitespace) } ?? line
            return shown.drop(while: \.isWhitespace)
        }
        guard let line = lines.first(where: { !$0.allSatisfy(\.isWhitespace) }) else { return }
        message = String(line)
    }

    /// `text` without its escape sequences: CSI (`ESC [ … final`), which the status line styles
    /// itself, and the strings OSC, DCS, SOS, PM and APC (`ESC ] … BEL` or `… ESC \`), whose
    /// payload (a window title) is no message.
    static func withoutEscapes(_ text: String) -> String {
        guard text.contains("\u{1B}") else { return text }
        var result = ""
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "\u{1B}" else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalars.next() {
            case "[":
                while let next = scalars.next(), !(0x40...0x7E).contains(next.value) {}
            case "]", "P", "X", "^", "_":
                var previous: Unicode.Scalar = " "
                while let next = scalars.next(), next != "\u{07}", !(previous == "\u{1B}" && next == "\\") { previous = next }
            default:
                continue
            }
        }
        return result
    }
}
