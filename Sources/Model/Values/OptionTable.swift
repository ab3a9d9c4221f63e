/// The one rule for option tables (`{ distance = 10 }`, `{ limit = 5 }`): the options are a
/// table of named fields or nothing; a key the method does not know, or a value of the wrong
/// type or outside its range, is an `invalid_argument` that names the key and lists the options.
///
/// Every service checks its options through here, so each says the same things the same way.
///
/// ```swift
/// let options = try OptionTable.check(arguments[1], [.number("distance", in: 0...)])
/// let distance = options["distance"]?.doubleValue ?? 0
/// ```
public enum OptionTable {
    /// One option a method accepts.
    public struct Option: Sendable {
        public let name: String
        let kind: Kind

        enum Kind: Sendable {
            case number(minimum: Double, maximum: Double)
            case integer(ClosedRange<Int64>)
            case string
            case boolean
            case table
            /// Checked by the caller: any value passes here.
            case any
        }

        /// A finite number in `range` (NaN and infinities are refused).
        public static func number(_ name: String, in range: PartialRangeFrom<Double>) -> Option {
            Option(name: name, kind: .number(minimum: range.lowerBound, maximum: .greatestFiniteMagnitude))
        }

        /// A finite number in `range`.
        public static func number(_ name: String, in range: ClosedRange<Double>) -> Option {
            Option(name: name, kind: .number(minimum: range.lowerBound, maximum: range.upperBound))
        }

        /// An integer in `range` (a float with an integer value counts).
        public static func integer(_ name: String, in range: ClosedRange<Int64>) -> Option {
            Option(name: name, kind: .integer(range))
        }

        public static func string(_ name: String) -> Option { Option(name: name, kind: .string) }
        public static func boolean(_ name: String) -> Option { Option(name: name, kind: .boolean) }
        public static func table(_ name: String) -> Option { Option(name: name, kind: .table) }
        /// An option whose value the caller checks itself (it is only known here by name).
        public static func any(_ name: String) -> Option { Option(name: name, kind: .any) }

        /// Why `value` does not fit, or nil when it does.
        func problem(with value: Value) -> String? {
            switch kind {
            case .number(let minimum, let maximum):
                guard let number = value.doubleValue else { return "must be a number, got \(value.typeName)" }
                guard number.isFinite, number >= minimum, number <= maximum else {
                    let range = maximum == .greatestFiniteMagnitude ? ">= \(Self.format(minimum))" : "in [\(Self.format(minimum)), \(Self.format(maximum))]"
                    return "must be a number \(range), got \(Self.format(number))"
                }
            case .integer(let range):
                guard let number = value.integerValue, range.contains(number) else {
                    let shown = value.doubleValue.map(Self.format) ?? value.typeName
                    return "must be an integer in [\(range.lowerBound), \(range.upperBound)], got \(shown)"
                }
            case .string:
                if value.stringValue == nil { return "must be a string, got \(value.typeName)" }
            case .boolean:
                if value.boolValue == nil { return "must be a boolean, got \(value.typeName)" }
            case .table:
                switch value {
                case .array, .object: break
                default: return "must be a table, got \(value.typeName)"
                }
            case .any:
                break
            }
            return nil
        }

        static func format(_ number: Double) -> String {
            number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        }
    }

    /// The given options by name, after checking them against `options`.
    ///
    /// - Parameters:
    ///   - value: the options argument: a table of named fields, or nil (`{}` counts as empty).
    ///   - label: how messages call the table (`options`).
    /// - Throws: `invalid_argument`: not a table, an unknown key, or a value that does not fit.
    public static func check(_ value: Value, _ options: [Option], label: String = "options") throws(ServiceError) -> Fields {
        let fields: Fields
        switch value {
        case .null, .array([]): return [:]
        case .object(let given): fields = given
        default:
            throw ServiceError(.invalidArgument, "\(label) must be a table of named fields (\(list(options))), got \(value.typeName)")
        }
        if let unknown = unknownKey(in: value, options) { throw ServiceError(.invalidArgument, unknown) }
        for key in fields.keys.sorted() {
            guard let option = options.first(where: { $0.name == key }) else { continue }
            if let value = fields[key], !value.isNull, let problem = option.problem(with: value) {
                throw ServiceError(.invalidArgument, "\(label).\(key) \(problem)")
            }
        }
        return fields.filter { !$0.value.isNull }
    }

    /// `unknown option 'timout' (options: headers, maxBytes, timeout; did you mean 'timeout'?)`
    /// for the first key of `value` (in order) that is none of `options`; nil when every key is
    /// one, or `value` is no table of named fields.
    public static func unknownKey(in value: Value, _ options: [Option]) -> String? {
        guard case .object(let fields) = value else { return nil }
        for key in fields.keys.sorted() where !options.contains(where: { $0.name == key }) {
            // With the closest (`timout` listed the options without `timeout`).
            let closest = NameSuggestion.closest(to: key, among: options.map(\.name))
            return "unknown option '\(clipped(key, limit: 40))' (\(list(options))" + (closest.map { "; did you mean '\($0)'?" } ?? "") + ")"
        }
        return nil
    }

    /// `options: a, b, c`, or `no options` for a method that takes none.
    private static func list(_ options: [Option]) -> String {
        options.isEmpty ? "it takes no options" : "options: " + options.map(\.name).sorted().joined(separator: ", ")
    }
}
