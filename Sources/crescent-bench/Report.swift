import Model
/// What a row must achieve.
enum Goal {
    /// `value / baseline` must not exceed the bound.
    case ratioAtMost(Double)
    /// `value / baseline` must reach the bound (for rates, where more is better).
    case ratioAtLeast(Double)
    /// The value itself, in the row's unit, must not exceed the bound (the ratio is informational).
    case valueAtMost(Double)
    /// The value itself must reach the bound (a rate; the ratio is informational).
    case valueAtLeast(Double)
    /// No goal: the row is a measurement to watch (its "met" column shows `-`).
    case informational

    /// Whether `row` meets this goal. A row with a non-finite value never does.
    func isMet(by row: BenchRow) -> Bool {
        switch self {
        case .ratioAtMost(let bound): row.ratio.isFinite && row.ratio <= bound
        case .ratioAtLeast(let bound): row.ratio.isFinite && row.ratio >= bound
        case .valueAtMost(let bound): row.value.isFinite && row.value <= bound
        case .valueAtLeast(let bound): row.value.isFinite && row.value >= bound
        case .informational: true
        }
    }

    /// `ratio <= 1.5` or `<= 15 ms`.
    func describe(unit: String) -> String {
        switch self {
        case .ratioAtMost(let bound): "ratio <= \(NumberFormat.shortest(bound))"
        case .ratioAtLeast(let bound): "ratio >= \(NumberFormat.shortest(bound))"
        case .valueAtMost(let bound): "<= \(NumberFormat.shortest(bound)) \(unit)"
        case .valueAtLeast(let bound): ">= \(NumberFormat.shortest(bound)) \(unit)"
        case .informational: "-"
        }
    }
}

/// One measured row: the subject's value, the baseline measured in the same run, and the goal.
struct BenchRow {
    let name: String
    /// The subject's value in `unit`.
    let value: Double
    /// The baseline's value in `unit`.
    let baseline: Double
    let unit: String
    let goal: Goal
    /// How it was measured, printed under the table (not in the JSON).
    var note: String = ""

    var ratio: Double { value / baseline }
    var goalMet: Bool { goal.isMet(by: self) }
    var goalText: String { goal.describe(unit: unit) }
}

/// Prints rows as an aligned table for people or as a JSON array for machines.
enum Report {
    static let header = ["name", "value", "baseline", "ratio", "goal", "met"]

    /// The aligned table, header first, one line per row.
    static func table(_ rows: [BenchRow]) -> String {
        let cellRows = [header] + rows.map { row in
            [
                row.name,
                "\(NumberFormat.fixed(row.value, digits: 1)) \(row.unit)",
                "\(NumberFormat.fixed(row.baseline, digits: 1)) \(row.unit)",
                NumberFormat.fixed(row.ratio, digits: 2),
                row.goalText,
                row.goalMet ? "yes" : "NO",
            ]
        }
        let widths = header.indices.map { column in cellRows.map { $0[column].count }.max() ?? 0 }
        let lines = cellRows.map { cells in
            cells.enumerated().map { column, cell in
                // Text columns align left, the numeric columns (value, baseline, ratio) right.
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return (1...3).contains(column) ? padding + cell : cell + padding
            }
            .joined(separator: "  ")
            .trimmingTrailingSpaces()
        }
        let notes = rows.filter { !$0.note.isEmpty }.map { "\($0.name): \($0.note)" }
        return (lines + (notes.isEmpty ? [] : [""] + notes)).joined(separator: "\n") + "\n"
    }

    /// `[{"name": …, "value": …, "unit": …, "baseline": …, "ratio": …, "goal": …, "met": …}, …]`.
    static func json(_ rows: [BenchRow]) -> String {
        let objects = rows.map { row in
            let fields = [
                "\"name\": \(jsonString(row.name))",
                "\"value\": \(jsonNumber(row.value))",
                "\"unit\": \(jsonString(row.unit))",
                "\"baseline\": \(jsonNumber(row.baseline))",
                "\"ratio\": \(jsonNumber(row.ratio))",
                "\"goal\": \(jsonString(row.goalText))",
                "\"met\": \(row.goalMet)",
            ]
            return "  {" + fields.joined(separator: ", ") + "}"
        }
        return objects.isEmpty ? "[]\n" : "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }

    /// A JSON number rounded to 4 decimals; `null` for NaN and infinities, which JSON lacks.
    private static func jsonNumber(_ value: Double) -> String {
        value.isFinite ? NumberFormat.shortest((value * 10_000).rounded() / 10_000) : "null"
    }

    private static func jsonString(_ text: String) -> String { Value.jsonString(text) }
}

/// Number formatting without Foundation.
enum NumberFormat {
    /// `value` with exactly `digits` decimals (`12.30`); `nan`/`inf` as such.
    static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        // Values past 2^63 would trap in the conversion below; they never occur in timings.
        guard scaled < 9.0e18 else { return shortest(value) }
        let units = Int64(scaled)
        let whole = units / Int64(scale)
        let sign = value < 0 && units != 0 ? "-" : ""
        guard digits > 0 else { return "\(sign)\(whole)" }
        let fraction = String(units % Int64(scale))
        return "\(sign)\(whole)." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// The shortest text that reads back as `value`, without a trailing `.0` (`1.5`, `15`).
    static func shortest(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var trimmed = self
        while trimmed.last == " " { trimmed.removeLast() }
        return trimmed
    }
}
