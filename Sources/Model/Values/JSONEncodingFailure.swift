/// Why a value has no JSON text, and where inside it: the one wording every JSON path uses
/// (`json.encode`, the store, `--ui json`, remote answers), each naming the place from its own
/// root (`value.tags[3]`, `record.tags[3]`).
public struct JSONEncodingFailure: Error, Sendable, Equatable {
    /// What was found.
    public enum Problem: Sendable, Equatable {
        /// NaN or an infinity.
        case nonFinite(Double)
        /// A string that is not valid UTF-8.
        case invalidUTF8
        /// An object (a handle), by its type name.
        case object(String)
        /// Arrays and objects nested deeper than ``Value/jsonMaxDepth``.
        case tooDeep
    }

    public let problem: Problem
    /// The steps from the value down to the problem (`.tags`, `[3]`), innermost first.
    private var stepsInward: [String] = []

    public init(_ problem: Problem) { self.problem = problem }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.problem == rhs.problem && lhs.path == rhs.path }

    /// Records that the failing part lies inside `step` (`.name` or `[3]`, see ``ValuePath``).
    public mutating func within(_ step: String) { stepsInward.append(step) }

    /// `.tags[3]`, relative to the value (empty for the value itself), shortened as
    /// ``ValuePath/joined(_:)`` shortens a deep one.
    public var path: String { ValuePath.joined(Array(stepsInward.reversed())) }

    /// `value.x is NaN: JSON has no NaN or infinity; ...`, naming the place from `root`.
    public func message(root: String) -> String {
        let place = root + path
        return switch problem {
        case .nonFinite(let number):
            "\(place) is \(number.isNaN ? "NaN" : number < 0 ? "-inf" : "inf"): JSON has no NaN or infinity; give null, a string or a finite number instead"
        case .invalidUTF8:
            "\(place) is a string that is not valid UTF-8: JSON text is UTF-8; encode binary data as base64 or hex first"
        case .object(let typeName):
            "\(place) is a \(typeName) object: JSON holds only null, booleans, numbers, strings and tables"
        case .tooDeep:
            "\(place) is nested too deeply (more than \(Value.jsonMaxDepth) tables)"
        }
    }
}
