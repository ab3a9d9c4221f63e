/// Lays completion candidates out in columns, as `ls` and readline list them: sorted down the
/// columns, as many columns as fit the width, two spaces between them.
///
/// ```swift
/// CompletionColumns.format(["insert", "remove", "sort", "concat", "unpack"], width: 30)
/// // "insert  sort    unpack\nremove  concat"
/// ```
public enum CompletionColumns {
    /// The space between columns.
    public static let gap = 2

    /// The candidates in rows, joined by newlines (no trailing newline), in the order given.
    public static func format(_ candidates: [String], width: Int) -> String {
        guard !candidates.isEmpty else { return "" }
        let widths = candidates.map { ColumnWidth.of($0) }
        let cell = (widths.max() ?? 0) + gap
        let columns = max(1, (max(width, 1) + gap) / cell)
        let rows = (candidates.count + columns - 1) / columns
        var lines: [String] = []
        for row in 0..<rows {
            var line = ""
            for column in 0..<columns {
                let index = column * rows + row
                guard index < candidates.count else { break }
                let isLast = column == columns - 1 || index + rows >= candidates.count
                line += candidates[index]
                if !isLast { line += String(repeating: " ", count: cell - widths[index]) }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
