extension AnyInterface {
    /// The reference text for this interface: what `help(x)` and `crescent services NAME` print.
    ///
    /// - Parameter prefix: how scripts reach it (`services.geocoder`), used in signatures.
    public func documentation(as prefix: String? = nil) -> String {
        let owner = prefix ?? name
        var lines = ["\(owner) — \(summary)"]
        if !properties.isEmpty {
            lines.append("")
            lines.append("Properties (read-only):")
            let width = properties.map(\.name.count).max() ?? 0
            for property in properties {
                lines.append("  \(property.name.padded(to: width))  \(property.summary) [\(property.type)]")
            }
        }
        if !methods.isEmpty {
            lines.append("")
            lines.append("Methods:")
            for method in methods { lines.append(contentsOf: method.documentation(owner: owner).map { "  " + $0 }) }
        }
        if !events.isEmpty {
            lines.append("")
            lines.append("Events (on(\"\(name).<event>\", handler) or \(owner):on(\"<event>\", handler)):")
            let width = events.map(\.name.count).max() ?? 0
            for event in events {
                lines.append("  \(event.name.padded(to: width))  \(event.summary) Payload: \(event.payload).")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// One line for an overview: `geocoder  Offline reverse and forward geocoding.`
    public func summaryLine(width: Int) -> String { "\(name.padded(to: width))  \(summary)" }
}

extension AnyMethodSpec {
    /// The signature, the summary, each argument and the result, as indented lines.
    public func documentation(owner: String) -> [String] {
        var lines = [signature(owner: owner), "    \(summary)"]
        for argument in arguments {
            let optional = argument.isOptional ? ", optional" : ""
            lines.append("    \(argument.name): \(argument.type)\(optional) — \(argument.summary)")
        }
        if let result {
            lines.append(hasCompletion ? "    completion(result, err): \(result)" : "    returns: \(result)")
        }
        return lines
    }
}

extension String {
    /// The string followed by spaces up to `width` characters.
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
