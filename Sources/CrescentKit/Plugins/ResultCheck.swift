import Model

/// A plugin method's declared return type, read once when the method is declared: what each
/// value the method answers must fit. `true` and `false` as a declared type are booleans
/// (`remove` returns `"true"`); a type the host cannot check (free text: `"the place"`) takes
/// any value.
///
/// ```swift
/// let check = ResultCheck(returns: "string|number")
/// check.problem(.bool(true))   // "returned boolean (true), which is not its declared type string|number"
/// check.problem(.integer(5))   // nil
/// ```
struct ResultCheck: Sendable {
    /// The type as declared, for messages.
    let returns: String
    /// Where the method is declared (`main.lua:4`), empty when not known (a process plugin's):
    /// a wrong answer names it, as the plugin's other mistakes name their line.
    let declaredAt: String
    /// The shapes a value may have, one per alternative of the type; nil when any value fits.
    private let alternatives: [ArgumentType]?

    init(returns: String, declaredAt: String = "") {
        self.returns = returns
        self.declaredAt = declaredAt
        guard ServiceDeclaration.isCheckable(returns) else {
            alternatives = nil
            return
        }
        // A union's `nil` takes only nil, which the check never sees (`{place}|nil` answered with
        // a string is refused); `nil` alone, as `value` and `any`, takes every value.
        let parts = returns.split(separator: "|").map(\.trimmingSpaces)
        let types = (parts.count > 1 ? parts.filter { $0 != "nil" } : parts).map { part -> ArgumentType in
            var word = part
            if word.hasSuffix("?") { word.removeLast() }
            if word == "true" || word == "false" { return .boolean }
            return ServiceDeclaration.fittingType(word)
        }
        alternatives = types.isEmpty || types.contains { if case .any = $0 { true } else { false } } ? nil : types
    }

    /// Why `value`, answered by the method, does not fit its declared type; nil when it does.
    func problem(_ value: Value) -> String? {
        guard !value.isNull, let alternatives, !alternatives.contains(where: { $0.accepts(value) }) else { return nil }
        let shown: String
        switch value {
        case .bool, .integer, .number, .string: shown = " (\(value.jsonText.prefix(40)))"
        default: shown = ""
        }
        return "returned \(value.typeName)\(shown), which is not its declared type \(returns)"
    }

    /// The whole error of a call whose answer has `problem`: `plugin 'p': p:hi returned string
    /// ("x"), which is not its declared type integer (main.lua:4 declares it): return an integer
    /// from it, or declare the type it returns`.
    func failure(_ problem: String, plugin: String, service: String, method: String) -> String {
        let place = declaredAt.isEmpty ? "" : " (\(declaredAt) declares it)"
        let article = ArgumentType.article(returns)
        return "plugin '\(plugin)': \(service):\(method) \(problem)\(place): "
            + "return \(article) \(returns) from it, or declare the type it returns in its declaration"
    }
}
