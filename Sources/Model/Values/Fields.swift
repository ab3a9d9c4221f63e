/// The named fields of a record (``Value/object(_:)``): a table with string keys, such as
/// `{ title = "milk", done = false }`, a JSON object or a store record.
///
/// Fields keep the order they were added in. A record of up to ``indexedCount`` fields is a
/// list searched in order, so making one from a Lua table, a JSON object or a literal hashes no
/// name: for a record's few fields a scan beats hashing each name, and most records are read
/// whole (pushed to Lua, written as JSON or to the store) rather than looked up by name. A larger
/// record also keeps its positions by name, so a lookup never scans thousands of fields.
///
/// Equality and hashing ignore the order, as for a dictionary.
///
/// ```swift
/// var fields: Fields = ["title": "milk"]
/// fields["done"] = .bool(false)
/// let item = Value.object(fields)
/// ```
public struct Fields: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: Value)

    /// The fields, each name once.
    private var entries: [Element]
    /// Each field's position by name, kept only while the record has more than ``indexedCount``
    /// fields.
    private var positions: [String: Int]?

    /// How many fields a record holds before it also keeps their positions by name.
    public static let indexedCount = 16

    /// An empty record.
    public init() {
        entries = []
    }

    /// An empty record with room for `minimumCapacity` fields.
    public init(minimumCapacity: Int) {
        entries = []
        entries.reserveCapacity(minimumCapacity)
    }

    /// A record of `elements`; a name given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init(minimumCapacity: elements.count)
        for (key, value) in elements { self[key] = value }
    }

    /// A record of a dictionary's fields.
    public init(_ dictionary: [String: Value]) {
        entries = []
        entries.reserveCapacity(dictionary.count)
        for (key, value) in dictionary { entries.append((key, value)) }
        indexIfLarge()
    }

    /// A record of `fields`, whose names the caller knows to be distinct (a Lua table's keys).
    public init(distinctFields fields: [Element]) {
        entries = fields
        indexIfLarge()
    }

    /// A record of `fields` in order; a name given twice keeps its last value, in the place it was
    /// first given (a JSON object's repeated member).
    public init(fields: [Element]) {
        self.init(minimumCapacity: fields.count)
        for (key, value) in fields { self[key] = value }
    }

    /// How many fields the record has.
    public var count: Int { entries.count }
    /// True for a record with no field.
    public var isEmpty: Bool { entries.isEmpty }
    /// The field names, in order.
    public var keys: [String] { entries.map(\.key) }
    /// The field values, in order.
    public var values: [Value] { entries.map(\.value) }

    /// The fields as a dictionary, hashed now.
    public var dictionary: [String: Value] {
        var dictionary: [String: Value] = Dictionary(minimumCapacity: entries.count)
        for (key, value) in entries { dictionary[key] = value }
        return dictionary
    }

    /// The value of the field `key`, nil when the record has none; setting nil removes it.
    public subscript(key: String) -> Value? {
        get {
            guard let position = position(of: key) else { return nil }
            return entries[position].value
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// The value of the field `key`, or `defaultValue` when the record has none.
    public subscript(key: String, default defaultValue: @autoclosure () -> Value) -> Value {
        self[key] ?? defaultValue()
    }

    /// Sets the field `key`, returning the value it replaced.
    @discardableResult
    public mutating func updateValue(_ value: Value, forKey key: String) -> Value? {
        if let position = position(of: key) {
            let old = entries[position].value
            entries[position].value = value
            return old
        }
        entries.append((key, value))
        if positions != nil {
            positions?[key] = entries.count - 1
        } else {
            indexIfLarge()
        }
        return nil
    }

    /// Removes the field `key`, returning its value.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> Value? {
        guard let position = position(of: key) else { return nil }
        let old = entries.remove(at: position).value
        positions = nil
        indexIfLarge()
        return old
    }

    /// Sets each field of `other` (its values win over this record's).
    public mutating func merge(_ other: Fields) {
        for (key, value) in other { updateValue(value, forKey: key) }
    }

    /// The same fields with `transform` applied to each value.
    public func mapValues(_ transform: (Value) throws -> Value) rethrows -> Fields {
        var mapped = self
        for position in mapped.entries.indices {
            mapped.entries[position].value = try transform(mapped.entries[position].value)
        }
        return mapped
    }

    /// The fields for which `isIncluded` is true, as a record.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> Fields {
        Fields(distinctFields: try entries.filter(isIncluded))
    }

    /// The fields in order, each as `(key, value)`.
    public func makeIterator() -> IndexingIterator<[Element]> {
        entries.makeIterator()
    }

    public var underestimatedCount: Int { entries.count }

    /// Where `key` is among the fields.
    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return entries.firstIndex { $0.key == key }
    }

    private mutating func indexIfLarge() {
        guard entries.count > Self.indexedCount else { return }
        var positions: [String: Int] = Dictionary(minimumCapacity: entries.count)
        for (position, entry) in entries.enumerated() { positions[entry.key] = position }
        self.positions = positions
    }

    /// Equal when both have the same fields, whatever their order.
    public static func == (lhs: Fields, rhs: Fields) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.entries.allSatisfy { rhs[$0.key] == $0.value }
    }

    /// Hashes the fields, whatever their order.
    public func hash(into hasher: inout Hasher) {
        // Order-free, as a dictionary's: each field hashed alone, the results combined by XOR.
        var combined = 0
        for (key, value) in entries {
            var field = Hasher()
            field.combine(key)
            field.combine(value)
            combined ^= field.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(combined)
    }
}

extension Fields: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        entries.isEmpty ? "[:]" : "[" + entries.map { "\($0.key.debugDescription): \($0.value)" }.joined(separator: ", ") + "]"
    }

    public var debugDescription: String { description }
}
