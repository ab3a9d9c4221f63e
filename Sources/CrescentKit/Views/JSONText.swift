import Model

/// JSON text for the `json` output mode: view trees, through Model's one JSON codec, so a view
/// holding what JSON cannot (NaN, text that is not UTF-8, an object) is refused as `json.encode`
/// refuses it, naming the place from `view`.
enum JSONText {
    static func string(_ text: String) -> String { Value.jsonString(text) }

    /// `{"kind":"table","id":"items","rows":[...],"children":[...]}`.
    ///
    /// - Parameter levels: how many arrays and objects enclose the node: 1 for the root, inside
    ///   the `--ui json` line's object (and the remote `view` answer's). They count towards JSON's
    ///   one depth limit, so a view nested too deeply is refused here, naming the place, and every
    ///   path (`--ui json`, remote `view`, `view_json()`) gives that one answer.
    static func node(_ node: ViewNode, levels: Int = 1) throws(JSONEncodingFailure) -> String {
        guard levels < Value.jsonMaxDepth else { throw JSONEncodingFailure(.tooDeep) }
        var parts = ["\"kind\":" + string(node.kind.name)]
        if let id = node.id { parts.append("\"id\":" + string(id)) }
        for key in node.fields.keys.sorted() {
            do throws(JSONEncodingFailure) {
                parts.append(string(key) + ":" + (try (node.fields[key] ?? .null).json(enclosingLevels: levels + 1)))
            } catch {
                var failure = error
                failure.within(ValuePath.member(key))
                throw failure
            }
        }
        if !node.children.isEmpty {
            var children: [String] = []
            for (index, child) in node.children.enumerated() {
                do throws(JSONEncodingFailure) { children.append(try Self.node(child, levels: levels + 2)) } catch {
                    var failure = error
                    failure.within(ValuePath.member("children") + ValuePath.index(Int64(index + 1)))
                    throw failure
                }
            }
            parts.append("\"children\":[" + children.joined(separator: ",") + "]")
        }
        if let content = node.content {
            do throws(JSONEncodingFailure) { parts.append("\"content\":" + (try Self.node(content, levels: levels + 1))) } catch {
                var failure = error
                failure.within(ValuePath.member("content"))
                throw failure
            }
        }
        return "{" + parts.joined(separator: ",") + "}"
    }

    /// The `--ui json` line of a render: `{"controller":NAME,"view":VIEW}`, or, when the view holds
    /// what JSON cannot, `{"controller":NAME,"error":MESSAGE}`.
    static func render(controller: String, root: ViewNode) -> String {
        do throws(JSONEncodingFailure) {
            return "{\"controller\":\(string(controller)),\"view\":\(try node(root))}"
        } catch {
            return "{\"controller\":\(string(controller)),\"error\":\(string(error.message(root: "view")))}"
        }
    }
}
