import Model

/// `view.progress`: `[#####-----] 50% label`, the bar at most 40 columns.
enum ProgressKind: ViewKind {
    static let name = "progress"
    static let fields = ["value", "total", "label"]

    static func updateField(for value: Value) -> String? {
        switch value {
        case .integer, .number: "value"
        default: nil
        }
    }

    static func constructorFields(bare value: Value) -> Fields? { ["value": value] }

    /// `total` before `value`, which is checked against it.
    static let firstFields = ["total"]

    /// A total of 0 or less, or a value outside 0...total, is an error where it is set: the bar
    /// showed `value = 150` (of the default total 1) as 100% and `total = 0` as 0%, without a word.
    static func willSet(_ key: String, _ value: Value, on node: ViewNode) throws(ViewError) {
        guard let number = value.doubleValue else { return }
        switch key {
        case "total" where !(number > 0):
            throw ViewError("view.progress: total must be above 0, got \(NumberText.shown(value)) (the bar shows value / total)")
        case "value":
            let total = node.fields["total"]?.doubleValue ?? 1
            guard !(number >= 0 && number <= total) else { return }
            let hint = node.fields["total"] == nil
                ? "the total is 1 unless given: give total = 100 for a percentage, or a value from 0 to 1"
                : "set total first when both change"
            throw ViewError("view.progress: value \(NumberText.shown(value)) is outside 0 to total (\(node.fields["total"].map { NumberText.shown($0) } ?? "1")): \(hint)")
        default: break
        }
    }

    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        let value = node.fields["value"]?.doubleValue ?? 0
        let total = node.fields["total"]?.doubleValue ?? 1
        let fraction = total > 0 ? min(max(value / total, 0), 1) : 0
        let percent = "\(Int((fraction * 100).rounded()))%"
        let label = node.fields["label"].map(ViewNode.text).map { " " + $0 } ?? ""
        let barWidth = max(min(width - DisplayWidth.of(percent) - DisplayWidth.of(label) - 3, 40), 1)
        let filled = Int((fraction * Double(barWidth)).rounded())
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
        return cut([DisplayWidth.truncate("[\(bar)] \(percent)\(label)", to: width)], to: limit)
    }
}
