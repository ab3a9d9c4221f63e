import LineEditing

/// A small VT100/xterm screen for tests: enough of a terminal to run the renderer's bytes and look
/// at the result (autowrap with the pending-wrap rule, wide characters, CR, LF with scrolling,
/// `CSI A/B/C/D/H/J/K`, private modes ignored).
struct ScreenEmulator {
    let width: Int
    let height: Int
    private(set) var rows: [[String]]
    /// Rows scrolled off the top, oldest first.
    private(set) var scrollback: [String] = []
    private(set) var row = 0
    private(set) var column = 0
    private var pendingWrap = false

    init(width: Int, height: Int = 24) {
        self.width = width
        self.height = height
        rows = Array(repeating: Array(repeating: " ", count: width), count: height)
    }

    /// The screen's rows, trailing blanks trimmed, trailing empty rows dropped.
    var lines: [String] {
        var lines = rows.map { String($0.joined().reversed().drop { $0 == " " }.reversed()) }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// Scrollback and screen together.
    var allLines: [String] {
        var lines = scrollback + self.lines
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    var cursor: (row: Int, column: Int) { (row, column) }

    mutating func feed(_ text: String) {
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            switch character {
            case "\u{1B}":
                var sequence = ""
                guard characters.first == "[" else { _ = characters.popFirst(); continue }
                characters.removeFirst()
                while let next = characters.popFirst() {
                    if let value = next.asciiValue, (0x40...0x7E).contains(value) {
                        apply(parameters: sequence, final: next)
                        break
                    }
                    sequence.append(next)
                }
            case "\r":
                column = 0
                pendingWrap = false
            case "\n":
                lineFeed()
            case "\r\n":
                column = 0
                lineFeed()
            case "\u{07}":
                break
            default:
                put(character)
            }
        }
    }

    private mutating func put(_ character: Character) {
        let columns = ColumnWidth.of(character)
        if columns == 0 {
            let previous = max(column - (pendingWrap ? 0 : 1), 0)
            rows[row][previous] += String(character)
            return
        }
        if pendingWrap || column + columns > width {
            column = 0
            lineFeed()
        }
        rows[row][column] = String(character)
        if columns == 2 && column + 1 < width { rows[row][column + 1] = "" }
        column += columns
        if column >= width {
            column = width - 1
            pendingWrap = true
        }
    }

    private mutating func lineFeed() {
        pendingWrap = false
        if row == height - 1 {
            scrollback.append(String(rows.removeFirst().joined().reversed().drop { $0 == " " }.reversed()))
            rows.append(Array(repeating: " ", count: width))
        } else {
            row += 1
        }
    }

    private mutating func apply(parameters: String, final: Character) {
        guard !parameters.hasPrefix("?") else { return }
        let count = max(Int(parameters) ?? 1, 1)
        pendingWrap = false
        switch final {
        case "A": row = max(row - count, 0)
        case "B": row = min(row + count, height - 1)
        case "C": column = min(column + count, width - 1)
        case "D": column = max(column - count, 0)
        case "H": row = 0; column = 0
        case "K": for index in column..<width { rows[row][index] = " " }
        case "J":
            if parameters == "2" {
                rows = Array(repeating: Array(repeating: " ", count: width), count: height)
            } else {
                for index in column..<width { rows[row][index] = " " }
                for below in (row + 1)..<max(height, row + 1) {
                    rows[below] = Array(repeating: " ", count: width)
                }
            }
        default: break
        }
    }
}
