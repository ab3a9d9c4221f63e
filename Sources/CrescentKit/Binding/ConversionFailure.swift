import Model

/// Why a Lua value could not become a model ``Value``, and where inside it.
///
/// Call-site errors say what they got (`a function at .tags[3]`); when the argument itself had
/// the declared type (a table), the service-level `invalid_argument` names the place from the
/// argument (`record.tags[3] is a function: ...`).
struct ConversionFailure: Error {
    /// What was found.
    enum Problem {
        /// A value with no model form, with its article: `a function`, `a thread`, `a FILE*`.
        case unsupported(String)
        /// A table inside itself.
        case cycle
        /// Array items (integer keys) and named fields in one table.
        case mixedKeys
        /// A key that is neither a string nor an integer, by its Lua type.
        case key(String)
        /// A string key that is not valid UTF-8 (it would turn into U+FFFD and collide).
        case binaryKey
        /// Integer keys that do not run 1...n: the first missing position.
        case hole(Int64)
        /// Tables nested deeper than the binding converts.
        case tooDeep
        /// A table with no fields of its own whose metatable has `__index` (a proxy), in a
        /// service call's arguments: the service reads tables raw.
        case proxy
        /// A `__tojson` that is not a function or that raised: the path inside the value (as
        /// marks.lua's `resolve` names it, `.x[2]`) and why (`has a __tojson that raised ...`).
        case toJSON(path: String, reason: String)
        /// A table marked `array` or `object` (json.array, json.object, decoded JSON, its own
        /// `__jsontype`) holding what that shape cannot: `array items`, `named fields`.
        case markedShape(String, found: String)
        /// A `__jsontype` that is neither "array" nor "object".
        case unknownShape(String)
    }

    /// One step from a value into a part of it.
    enum Step {
        case field(String)
        case index(Int64)
    }

    let problem: Problem
    /// The steps from the converted value down to the problem, innermost first: the conversion
    /// adds each step as it unwinds, so a path is only written out when something failed.
    private(set) var stepsInward: [Step] = []

    init(_ problem: Problem) { self.problem = problem }

    /// Records that the failing part lies inside `step`.
    mutating func within(_ step: Step) { stepsInward.append(step) }

    /// `.tags[3]`, relative to the converted value (empty for the value itself), shortened as
    /// ``ValuePath/joined(_:)`` shortens a deep one.
    var path: String {
        let steps = stepsInward.reversed().map { step in
            switch step {
            case .field(let key): ValuePath.member(key)
            case .index(let position): ValuePath.index(position)
            }
        }
        return ValuePath.joined(steps)
    }

    /// `a function at .tags[3]`: what a call-site error says it got.
    var description: String {
        let found = switch problem {
        case .unsupported(let kind): kind
        case .cycle: "a cycle"
        case .mixedKeys: "a table with both array items and named fields"
        case .key(let type): "a table with a \(type) key"
        case .binaryKey: "a table with a key that is not valid UTF-8"
        case .hole(let position): "an array with a hole at [\(position)]"
        case .tooDeep: "a table nested too deeply"
        case .proxy: "a proxy table (no fields of its own, only its metatable's __index)"
        case .toJSON(let path, _): "a value whose __tojson failed" + (path.isEmpty ? "" : " at \(path)")
        case .markedShape(let shape, let found): "a table marked \(shape) holding \(found)"
        case .unknownShape(let shape): "a table whose __jsontype is \"\(shape)\""
        }
        let place = self.path
        return place.isEmpty ? found : "\(found) at \(place)"
    }

    /// `record.tags[3] is a function: ...`: the `invalid_argument` message of a service call,
    /// naming the place from `root` (how the argument is called); `subject` names the values
    /// the rule is about (`JSON values` for `json.encode` and remote answers).
    func message(root: String, subject: String = "values given to a service") -> String {
        let place = root + path
        return switch problem {
        case .unsupported(let kind):
            "\(place) is \(kind): \(subject) hold only strings, numbers, booleans and tables"
        case .cycle:
            "\(place) is a table that contains itself: \(subject) cannot have cycles"
        case .mixedKeys:
            "\(place) mixes array items and named fields: a table is either an array {a, b, ...} or an object {name = value, ...}"
        case .key(let type):
            "\(place) has a \(type) key: object keys are strings and array positions are integers"
        case .binaryKey:
            "\(place) has a key that is not valid UTF-8: object keys are text (keys that are not would collide)"
        case .hole(let position):
            "\(place) has a hole at [\(position)]: an array holds items 1 to n with none missing"
        case .tooDeep:
            "\(place) is nested too deeply (more than \(ModelBinding.maxConversionDepth) tables)"
        case .proxy:
            "\(place) is a table with no fields of its own whose metatable has __index (a proxy): a service reads a "
                + "table's own fields, not its metatable's; pass a plain table with the fields (for a location, {lat = t.lat, lon = t.lon})"
        case .toJSON(let path, let reason):
            "\(place)\(path) \(reason)"
        case .markedShape(let shape, let found):
            "\(place) is marked \(shape) (json.\(shape), decoded JSON or its __jsontype) but holds \(found): \(shape == "object" ? "an object has only named fields" : "an array has only items 1 to n"); remove the mark or the \(found)"
        case .unknownShape(let shape):
            "\(place) has __jsontype \"\(shape)\": it must be \"array\" or \"object\""
        }
    }
}
