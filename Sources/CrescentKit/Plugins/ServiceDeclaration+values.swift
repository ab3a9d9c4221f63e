import Model

/// The checks of what a run-time plugin hands back against what it declared: a method's return
/// value against its `returns` type (``ResultCheck``) and an event's payload against its
/// `{ field, ... }` list (a method declared `string` that returned 5, and a payload `{ nme = 1 }`
/// for an event declared `{ name }`, reached the script unchecked).
extension ServiceDeclaration {
    /// True when every alternative of `type` is a word the checks know: a type name (any other
    /// identifier names a table), `{T}` arrays of those, `{ a, b }` payload tables; `?` allowed.
    static func isCheckable(_ type: String) -> Bool {
        let parts = type.split(separator: "|")
        guard !parts.isEmpty else { return false }
        return parts.allSatisfy { part in
            var word = Substring(part.trimmingSpaces)
            if word.hasSuffix("?") { word = word.dropLast() }
            if payloadFields(String(word)) != nil { return true }
            var depth = 0
            while word.hasPrefix("{"), word.hasSuffix("}"), word.count >= 2, depth <= deepestArray {
                word = word.dropFirst().dropLast()
                depth += 1
            }
            return isIdentifier(word)
        }
    }

    /// The field names of a payload type written `{ place }` or `{ stream, line }` (spaces inside
    /// the braces or a comma, as the docs write payloads; `{place}` is an array), nil for any
    /// other type or when a field is not an identifier (`{ name: string }` gives `name`).
    static func payloadFields(_ type: String) -> [String]? {
        let word = type.trimmingSpaces
        guard word.hasPrefix("{"), word.hasSuffix("}"), word.count >= 2 else { return nil }
        let inner = word.dropFirst().dropLast()
        guard inner.contains(",") || inner.first == " " || inner.last == " ", !inner.contains("{") else { return nil }
        var names: [String] = []
        for part in inner.split(separator: ",") {
            let name = part.split(separator: ":", maxSplits: 1).first.map(\.trimmingSpaces) ?? ""
            guard isIdentifier(Substring(name)) else { return nil }
            names.append(name)
        }
        return names.isEmpty ? nil : names
    }

    /// What becomes of an emitted payload checked against its event's declared `payload` type.
    enum PayloadCheck: Equatable {
        /// It fits: delivered as it is.
        case fits
        /// It carries fields a `{ a, b }` declaration does not list: delivered without them,
        /// with the warning, so subscribers still get the event.
        case trimmed(Value, warning: String)
        /// Its type is not the declared one: not delivered.
        case dropped(warning: String)
    }

    /// Checks `payload` against an event's declared `payload` type: its type, then each field it
    /// carries that a `{ a, b }` declaration does not list.
    static func checkPayload(_ payload: Value, declared: String) -> PayloadCheck {
        guard Self.value(payload, fits: declared) else {
            return .dropped(warning: "a payload of type \(payload.typeName), which is not its type \(declared)")
        }
        guard case .object(let fields) = payload, let names = payloadFields(declared) else { return .fits }
        let known = NameSet(names)
        let extras = fields.keys.filter { !known.contains($0) }.sorted()
        guard let first = extras.first else { return .fits }
        let listing = NameSuggestion.listing("fields", names, suggesting: NameSuggestion.closest(to: first, among: names))
        let named = extras.count == 1 ? "field '\(first)'" : "fields " + extras.map { "'\($0)'" }.joined(separator: ", ")
        let warning = "\(named), which its payload \(declared) does not declare (\(listing)); "
            + (extras.count == 1 ? "that field was dropped" : "those fields were dropped")
        return .trimmed(.object(fields.filter { known.contains($0.key) }), warning: warning)
    }

    private static func isIdentifier(_ word: Substring) -> Bool {
        guard let first = word.utf8.first, first == 95 || (first | 0x20) >= 97 && (first | 0x20) <= 122 else { return false }
        return word.utf8.allSatisfy { $0 == 95 || ($0 | 0x20) >= 97 && ($0 | 0x20) <= 122 || ($0 >= 48 && $0 <= 57) }
    }
}
