import Model
import Mustache

extension ViewNode {
    /// Lays the component out in `width` columns: its first `limit` lines. Tables, stacks, rows
    /// and slots lay out only those; the other kinds are laid out whole and cut.
    func render(width: Int, limit: Int) -> [String] {
        let lines: [String]
        switch kind {
        case .table:
            return tableLines(width: width, limit: limit)
        case .stack:
            return stackLines(width: width, limit: limit)
        case .row:
            return rowLines(width: width, limit: limit)
        case .slot:
            return content?.lines(width: width, limit: limit) ?? []
        case .text:
            let text = fields["text"].map(Self.text) ?? ""
            lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { DisplayWidth.truncate(String($0), to: width) }
        case .list:
            let marker = fields["marker"]?.stringValue ?? "-"
            let items = fields["items"]?.arrayValue ?? []
            guard let selection else {
                lines = items.map { DisplayWidth.truncate("\(marker) \(Self.text($0))", to: width) }
                break
            }
            // A selectable list shows the rows from the first one on screen, the selected one
            // marked `>`.
            let first = items.count > limit ? firstShownRow(rows: limit) : 0
            return items[first..<min(first + limit, items.count)].indices.map { index in
                let pointer = index == selection.index ? "> " : "  "
                return DisplayWidth.truncate("\(pointer)\(marker) \(Self.text(items[index]))", to: width)
            }
        case .keyvalue:
            let pairs = keyValuePairs()
            let keyWidth = min(pairs.map { DisplayWidth.of($0.0) }.max() ?? 0, max(width / 2, 1))
            lines = pairs.map { key, value in
                DisplayWidth.truncate(DisplayWidth.fit(key, to: keyWidth) + "  " + value, to: width)
            }
        case .progress:
            lines = [progressLine(width: width)]
        case .template:
            lines = templateLines(width: width)
        }
        return lines.count > limit ? Array(lines.prefix(limit)) : lines
    }

    /// How many lines the component has at `width`, without laying out a table's, a stack's or a
    /// row's lines.
    func lineCount(width: Int) -> Int {
        let width = max(width, 1)
        switch kind {
        case .table:
            guard !columns.isEmpty else { return cells.isEmpty ? 0 : 1 }
            return (showsHeader ? 2 : 0) + cells.count
        case .stack:
            var count = 0
            for child in children {
                let childCount = child.lineCount(width: width)
                if childCount == 0 { continue }   // an empty slot takes no room, nor gaps
                if count > 0 { count += stackGap }
                count += childCount
            }
            return count
        case .row:
            let share = rowShare(width: width)
            var count = 0
            for child in children { count = max(count, child.lineCount(width: share)) }
            return count
        case .slot:
            return content?.lineCount(width: width) ?? 0
        case .text, .list, .keyvalue, .progress, .template:
            return lines(width: width).count
        }
    }

    private func templateLines(width: Int) -> [String] {
        if let templateError { return [DisplayWidth.truncate(templateError, to: width)] }
        guard let template else { return [] }
        let rendered = template.render(Self.mustacheContext(fields["data"] ?? .object([:])))
        var lines = rendered.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines.map { DisplayWidth.truncate($0, to: width) }
    }

    /// Children one under another, `gap` blank lines between them: the first `limit` lines.
    private func stackLines(width: Int, limit: Int) -> [String] {
        let gap = stackGap
        var lines: [String] = []
        for child in children where lines.count < limit {
            let room = limit - lines.count - (lines.isEmpty ? 0 : gap)
            let childLines = child.lines(width: width, limit: max(room, 1))
            if childLines.isEmpty { continue }   // an empty slot takes no room, nor gaps
            if !lines.isEmpty { lines += Array(repeating: "", count: min(gap, limit - lines.count)) }
            lines += childLines.prefix(limit - lines.count)
        }
        return lines
    }

    /// The blank lines a stack puts between its children (`gap`, checked to be 0 or more).
    var stackGap: Int { Int(fields["gap"]?.integerValue ?? 0) }

    /// The width each child of a row gets: an equal share, less the two-space separators.
    func rowShare(width: Int) -> Int {
        max((width - Self.rowGap * (children.count - 1)) / max(children.count, 1), 1)
    }

    private static let rowGap = 2

    /// Children side by side, sharing the width, separated by two spaces: the first `limit` lines.
    private func rowLines(width: Int, limit: Int) -> [String] {
        guard !children.isEmpty else { return [] }
        let share = rowShare(width: width)
        let columns = children.map { $0.lines(width: share, limit: limit) }
        let height = columns.map(\.count).max() ?? 0
        return (0..<height).map { line in
            var parts: [String] = []
            for (index, column) in columns.enumerated() {
                let text = line < column.count ? column[line] : ""
                parts.append(index == columns.count - 1 ? text : DisplayWidth.pad(text, to: share))
            }
            var joined = parts.joined(separator: String(repeating: " ", count: Self.rowGap))
            while joined.hasSuffix(" ") { joined.removeLast() }
            return joined
        }
    }

    private func progressLine(width: Int) -> String {
        let value = fields["value"]?.doubleValue ?? 0
        let total = fields["total"]?.doubleValue ?? 1
        let fraction = total > 0 ? min(max(value / total, 0), 1) : 0
        let percent = "\(Int((fraction * 100).rounded()))%"
        let label = fields["label"].map(Self.text).map { " " + $0 } ?? ""
        let barWidth = max(min(width - DisplayWidth.of(percent) - DisplayWidth.of(label) - 3, 40), 1)
        let filled = Int((fraction * Double(barWidth)).rounded())
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
        return DisplayWidth.truncate("[\(bar)] \(percent)\(label)", to: width)
    }

    /// The pairs of a keyvalue: a record's fields sorted by key, or `{ {key, value}, ... }` in order.
    private func keyValuePairs() -> [(String, String)] {
        guard let pairs = fields["pairs"] else { return [] }
        switch pairs {
        case .object(let map): return map.sorted { $0.key < $1.key }.map { ($0.key, Self.text($0.value)) }
        case .model(let model): return model.fields.sorted { $0.key < $1.key }.map { ($0.key, Self.text($0.value)) }
        case .array(let items):
            return items.map { item in
                if let pair = item.arrayValue, pair.count >= 2 { return (Self.text(pair[0]), Self.text(pair[1])) }
                return (Self.text(item["key"]), Self.text(item["value"]))
            }
        default: return []
        }
    }

    /// How a value reads in a view: strings as they are, integers without `.0`, floats compactly.
    static func text(_ value: Value) -> String {
        switch value {
        case .null: return ""
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let integer): return String(integer)
        case .number(let number):
            if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
            return String(number)
        case .string(let string): return string
        case .bytes(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .array(let items): return items.map(text).joined(separator: ", ")
        case .object(let fields): return "{" + fields.keys.sorted().map { "\($0)=\(text(fields[$0] ?? .null))" }.joined(separator: ", ") + "}"
        case .model(let model): return model["name"].stringValue ?? model.typeName
        case .handle(let handle): return "<\(handle.typeName)>"
        }
    }

    /// The data of a template as Mustache sees it: dictionaries, arrays and strings.
    static func mustacheContext(_ value: Value) -> Any {
        switch value {
        case .null: return ""
        case .bool(let flag): return flag
        case .integer, .number, .string, .bytes, .handle: return text(value)
        case .array(let items): return items.map(mustacheContext)
        case .object(let fields): return fields.dictionary.mapValues(mustacheContext)
        case .model(let model): return model.fields.dictionary.mapValues(mustacheContext)
        }
    }
}
