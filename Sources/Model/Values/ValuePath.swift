/// How messages name a place inside a value, the way Lua code would index it:
/// `record` + `.tags` + `[3]`, or `["odd key"]` for a key that is not an identifier.
///
/// The binding (for values that cannot leave Lua) and services (for values they refuse) both
/// write paths this way, so one message style names every bad part of an argument.
public enum ValuePath {
    /// `.name` for an identifier, `["odd key"]` otherwise.
    public static func member(_ key: String) -> String {
        var isIdentifier = !key.isEmpty
        for (offset, byte) in key.utf8.enumerated() {
            let isLetter = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
            let isDigit = byte >= 0x30 && byte <= 0x39
            if !(isLetter || (isDigit && offset > 0)) {
                isIdentifier = false
                break
            }
        }
        if isIdentifier { return "." + key }
        var quoted = ""
        for character in key {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return "[\"\(quoted)\"]"
    }

    /// `[3]`: an array position (1-based, as in Lua).
    public static func index(_ position: Int64) -> String { "[\(position)]" }

    /// The most steps a path writes out: a deeper one keeps its first and last few around a
    /// count of those left out (a table 100 deep named a 375-character path).
    public static let stepsShown = 10

    /// `steps` (outermost first) as one path; past ``stepsShown`` steps,
    /// `.n.n.n.n…(92 more)….n.n.n.n`.
    public static func joined(_ steps: [String]) -> String {
        guard steps.count > stepsShown else { return steps.joined() }
        let kept = stepsShown / 2 - 1
        return steps.prefix(kept).joined() + "…(\(steps.count - 2 * kept) more)…" + steps.suffix(kept).joined()
    }
}
