import Model

/// JSON text for the `json` output mode: view trees, through Model's one JSON codec, so a view
/// holding what JSON cannot (NaN, text that is not UTF-8, an object) is refused as `json.encode`
/// refuses it, naming the place from `view`.
enum JSONText {
    static func string(_ text: String) -> String { Value.jsonString(text) }

    /// `{"kind":"table","id":"items","rows":[...],"children":[...]}`.
    static func node(_ node: ViewNode) throws(JSONEncodingFailure) -> String {
        var parts = ["\"kind\":" + string(node.kind.name)]
        if let id = node.id { parts.append("\"id\":" + string(id)) }
        for key in node.fields.keys.sorted() {
            do throws(JSONEncodingFailure) {
                parts.append(string(key) + ":" + (try (node.fields[key] ?? .null).json()))
            } catch {
                var failure = error
                failure.within(ValuePath.member(key))
                throw failure
            }
        }
        if !node.children.isEmpty {
            var children: [String] = []
            for (index, child) in node.children.enumerated() {
                do throws(JSONEncodingFailure) { children.append(try Self.node(child)) } catch {
                    var failure = error
                    failure.within(ValuePath.member("children") + ValuePath.index(Int64(index + 1)))
                    throw failure
                }
            }
            parts.append("\"children\":[" + children.joined(separator: ",") + "]")
        }
        if let content = node.content {
            do throws(JSONEncodingFailure) { parts.append("\"content\":" + (try Self.node(content))) } catch {
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
