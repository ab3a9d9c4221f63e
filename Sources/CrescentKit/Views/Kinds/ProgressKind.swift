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
