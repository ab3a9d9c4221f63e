import Model

/// A REPL dot command: a line starting with `.` and a letter (so `.5` stays a number).
enum DotCommand: Equatable {
    case help
    case services(String?)
    case subscriptions
    case load(String)
    case editor
    case exit
    /// A dot command nobody knows, or one used wrongly: the message says what to do.
    case invalid(String)

    /// The commands with their arguments and what they do, as `.help` lists them.
    static let list: [(name: String, usage: String, summary: String)] = [
        (".help", ".help", "this help"),
        (".services", ".services [NAME]", "the services, or one service's properties, methods and events"),
        (".subs", ".subs", "the live subscriptions: owner, target, creation site, deliveries, errors"),
        (".load", ".load FILE", "run a Lua file here (its globals stay)"),
        (".editor", ".editor", "type several lines; Ctrl-D runs them, Ctrl-C cancels"),
        (".exit", ".exit", "leave (as Ctrl-D on an empty line, or Ctrl-C twice)"),
    ]

    /// Parses `line` (already without leading blanks); nil when it is not a dot command.
    init?<Line: StringProtocol>(_ line: Line) {
        guard line.hasPrefix("."), let second = line.dropFirst().first, second.isLetter else { return nil }
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let name = String(words[0])
        let argument = words.count > 1 ? String(line[words[1].startIndex...]).trimmingTrailingBlanks() : nil
        // `.subs extra` did what `.subs` does, as if the word meant something (a filter it is not).
        if let argument, [".help", ".subs", ".editor", ".exit", ".quit"].contains(name) {
            self = .invalid("\(name) takes no argument, got '\(argument)': type \(name) alone"
                + (name == ".subs" ? " (subscriptions() returns the list to filter in Lua)" : ""))
            return
        }
        switch name {
        case ".help": self = .help
        case ".services": self = .services(argument)
        case ".subs": self = .subscriptions
        case ".editor": self = .editor
        case ".exit", ".quit": self = .exit
        case ".load":
            guard let argument, !argument.isEmpty else {
                self = .invalid(".load needs a file: .load FILE")
                return
            }
            self = .load(argument)
        default:
            let names = Self.list.map(\.name) + [".quit"]
            let closest = NameSuggestion.closest(to: name, among: names)
            self = .invalid("unknown command \(name) (commands: \(Self.list.map(\.name).joined(separator: ", "))"
                + (closest.map { "; did you mean \($0)?" } ?? "") + "); .help says what each does")
        }
    }

    /// `.help`'s text, wrapped between words at `width` columns (the terminal's; 80 when it is
    /// not known), each command's summary under its own column: text cut at 80 columns broke
    /// every line mid-word twice on a 60-column terminal.
    static func helpText(width: Int = 80) -> String {
        let width = max(width - 1, 40)   // a full line would leave the cursor in the last column
        let column = (list.map(\.usage.count) + [":NAME ARGS".count]).max() ?? 0
        var lines: [String] = []
        lines += DisplayWidth.wrap("Type Lua: an expression prints its value (=expr works too); a chunk that is not finished goes on at "
            + "the '..' prompt. Locals last for one chunk; globals stay. Inside a chunk, service methods may be called without a "
            + "completion: the chunk waits for the result. help(x) documents a service, method or global.", to: width)
        lines.append("")
        let rows = list.map { ($0.usage, $0.summary) } + [(":NAME ARGS", "send a command to the top controller (app.send)")]
        for (usage, summary) in rows {
            let lead = "  " + usage + String(repeating: " ", count: column - usage.count + 2)
            let summaryLines = DisplayWidth.wrap(summary, to: max(width - lead.count, 20))
            lines.append(lead + summaryLines[0])
            lines += summaryLines.dropFirst().map { String(repeating: " ", count: lead.count) + $0 }
        }
        lines.append("")
        lines += DisplayWidth.wrap("Keys: Tab completes, Up/Down and Ctrl-R search the history, Alt-Enter adds a line, Ctrl-C clears the "
            + "line or interrupts the running chunk, Ctrl-L clears the screen.", to: width)
        return lines.joined(separator: "\n")
    }
}

extension StringProtocol {
    /// The text without blanks at its end.
    func trimmingTrailingBlanks() -> String {
        var text = String(self)
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
