import Foundation

/// How `crescent test` writes its results (`-o`): ours, or the two of busted's that tools read.
public enum SpecOutputFormat: String, Sendable, CaseIterable {
    /// A line per test as it ends, the failures with their messages, `N passed, N failed` last.
    case plain
    /// busted's `-o json`: one object with `successes`, `failures`, `errors`, `pendings` (each test
    /// as `{ name, message, trace, element }`) and `duration`, written once the run ends.
    case json
    /// busted's `-o TAP`: `ok N - name` / `not ok N - name` with the place and message as `#` lines
    /// (busted says "Failure message" for errors too), `ok N - # SKIP` for pending, then `1..N`.
    case TAP
}

extension SpecReport {
    /// The results in `format`, for the end of the run; nil for ``SpecOutputFormat/plain``, which
    /// is written as the run goes.
    func formatted(_ format: SpecOutputFormat) -> String? {
        switch format {
        case .plain: nil
        case .json: json
        case .TAP: tap
        }
    }

    /// busted's TAP: a line per test, the failures' place and message as comments, the plan last.
    var tap: String {
        var text = ""
        for (index, result) in results.enumerated() {
            let number = index + 1
            switch result.status {
            case .passed:
                text += "ok \(number) - \(Self.tapDescription(result.name))\n"
            case .pending:
                text += "ok \(number) - # SKIP \(Self.oneLine(result.message.isEmpty ? result.name : result.message))\n"
            case .failed, .error:
                text += "not ok \(number) - \(Self.tapDescription(result.name))\n"
                text += "# \(Self.oneLine(result.location.replacingOccurrences(of: ":", with: " @ ")))\n"
                text += "# Failure message: " + Self.messageLines(result.message).joined(separator: "\n# ") + "\n"
            }
        }
        return text + "1..\(results.count)\n"
    }

    /// A name as a TAP description: a `#` that would start a directive (`# TODO`, `# SKIP`) is
    /// written `\#`, so a test's name cannot turn its failure into a to-do for a TAP reader; tags
    /// (`#fast`) stay as busted writes them.
    static func tapDescription(_ name: String) -> String {
        let line = oneLine(name)
        guard line.contains("#") else { return line }
        var described = ""
        var rest = Substring(line)
        while let hash = rest.firstIndex(of: "#") {
            described += rest[..<hash]
            rest = rest[rest.index(after: hash)...]
            let word = rest.drop { $0 == " " || $0 == "\t" }.prefix(4).lowercased()
            described += word == "todo" || word == "skip" ? "\\#" : "#"
        }
        return described + rest
    }

    /// busted's JSON: the tests by outcome, each with its full name, message and place.
    var json: String {
        var lists: [String: [[String: Any]]] = ["successes": [], "failures": [], "errors": [], "pendings": []]
        for result in results {
            let parts = result.location.split(separator: ":")
            let line = parts.last.flatMap { Int($0) } ?? 0
            let source = parts.count > 1 ? parts.dropLast().joined(separator: ":") : result.location
            let trace: [String: Any] = ["short_src": source, "source": "@" + source, "currentline": line, "what": "Lua"]
            let element: [String: Any] = ["name": result.name, "descriptor": "it", "trace": trace, "duration": result.seconds,
                                          "attributes": [String: Any]()]
            var entry: [String: Any] = ["name": result.name, "trace": trace, "element": element]
            if !result.message.isEmpty { entry["message"] = result.message }
            let key = switch result.status {
            case .passed: "successes"
            case .failed: "failures"
            case .error: "errors"
            case .pending: "pendings"
            }
            lists[key, default: []].append(entry)
        }
        var object: [String: Any] = lists
        object["duration"] = results.reduce(0) { $0 + $1.seconds }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
              let text = String(data: data, encoding: .utf8) else {
            // Every value above is a string, number, list or object: JSONSerialization takes them.
            return "{}\n"
        }
        return text + "\n"
    }
}
