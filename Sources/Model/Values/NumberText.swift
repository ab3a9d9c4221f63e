/// A number as an error message shows it to a script author: NaN as `nan (0/0)`, the way Lua
/// writes it back, never Swift's `-nan` (Lua's `0/0` has its sign bit set) nor JSON's `null`.
public enum NumberText {
    /// `1.5`, `-1.0`, `nan (0/0)`, `inf (math.huge)`, `-inf (-math.huge)`.
    public static func shown(_ number: Double) -> String {
        if number.isNaN { return "nan (0/0)" }
        if number.isInfinite { return number > 0 ? "inf (math.huge)" : "-inf (-math.huge)" }
        return "\(number)"
    }

    /// `value` as an error message shows it: a number that is not finite as ``shown(_:)``, any
    /// other value as its JSON text.
    public static func shown(_ value: Value) -> String {
        if case .number(let number) = value, !number.isFinite { return shown(number) }
        return value.jsonText
    }
}
