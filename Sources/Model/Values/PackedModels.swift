/// An array of data models of one shared schema packed into one buffer: what a service answers
/// when it hands out many models at once (a batch of 100,000 placemarks). Scripts see the same
/// array of read-only models as ``Value/array(_:)`` of ``Value/model(_:)`` would give (with
/// ``wrapsEach``, an array of one-model arrays), but the binding makes each model from the buffer
/// in one call, and reads a field straight from it until a script needs the whole model.
///
/// The buffer's layout (all integers little-endian), which the C shim's `packed.c` reads:
///
/// ```
/// u32 count   u32 fieldCount
/// count × fieldCount cells of 9 bytes, model by model, in the schema's order:
///   u8 tag (0 nil, 1 string, 2 integer, 3 number, 4 true, 5 false), then 8 bytes:
///   a string's u32 offset into the pool and u32 length, an integer's i64, a number's bits
/// the pool: the strings' UTF-8 bytes
/// ```
///
/// Built with ``PackedModels/Builder``; ``values`` decodes it for the rest of the host.
public struct PackedModels: Sendable {
    /// The schema every model has.
    public let schema: ModelSchema
    /// How many models there are.
    public let count: Int
    /// True when each model is the only element of an array of its own (a batch `reverse` with
    /// one answer per point).
    public let wrapsEach: Bool
    /// The buffer, as laid out above.
    public let bytes: [UInt8]

    /// The size of the header and of one cell, as laid out above.
    public static let headerSize = 8
    public static let cellSize = 9

    /// The tags of a cell.
    enum Tag: UInt8 {
        case null = 0, string, integer, number, isTrue, isFalse
    }

    /// The models as values: `.array` of models (of one-model arrays when ``wrapsEach``).
    public var values: [Value] {
        var reader = Reader(bytes: bytes, fieldCount: schema.names.count)
        var result: [Value] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            var fields: [Value] = []
            fields.reserveCapacity(schema.names.count)
            for _ in 0..<schema.names.count { fields.append(reader.next()) }
            let model = Value.model(DataModel(schema, fields))
            result.append(wrapsEach ? .array([model]) : model)
        }
        return result
    }

    /// Reads cells in order.
    private struct Reader {
        let bytes: [UInt8]
        let poolStart: Int
        var position = PackedModels.headerSize

        init(bytes: [UInt8], fieldCount: Int) {
            self.bytes = bytes
            let count = Int(Self.word(bytes, at: 0, size: 4))
            poolStart = PackedModels.headerSize + count * fieldCount * PackedModels.cellSize
        }

        static func word(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in (0..<size).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
            return value
        }

        mutating func next() -> Value {
            defer { position += PackedModels.cellSize }
            let payload = Self.word(bytes, at: position + 1, size: 8)
            switch Tag(rawValue: bytes[position]) {
            case .string:
                let start = poolStart + Int(payload & 0xFFFF_FFFF)
                return .string(String(decoding: bytes[start..<start + Int(payload >> 32)], as: UTF8.self))
            case .integer: return .integer(Int64(bitPattern: payload))
            case .number: return .number(Double(bitPattern: payload))
            case .isTrue: return .bool(true)
            case .isFalse: return .bool(false)
            case .null, nil: return .null
            }
        }
    }

    /// Packs models of one shared schema, field by field: each model's cells in the schema's
    /// order, then ``endModel()``.
    public struct Builder: Sendable {
        let schema: ModelSchema
        /// The cells, zeros past ``end`` (written in place: appending byte by byte took twice as long).
        private var cells: [UInt8]
        private var end = 0
        private var pool: [UInt8] = []
        private var count = 0
        private var fieldsInModel = 0

        /// A string already in the pool, to add again without copying it.
        public struct PooledString: Sendable {
            let offset: UInt32
            let length: UInt32
        }

        /// A builder for about `capacity` models of `schema`, whose strings take about
        /// `poolCapacity` bytes.
        public init(schema: ModelSchema, capacity: Int, poolCapacity: Int = 0) {
            self.schema = schema
            cells = Array(repeating: 0, count: capacity * schema.names.count * PackedModels.cellSize)
            pool.reserveCapacity(poolCapacity)
        }

        /// Copies `bytes` (UTF-8) into the pool, for ``add(_:)-(PooledString)``.
        public mutating func pool(_ bytes: some Collection<UInt8>) -> PooledString {
            let offset = UInt32(truncatingIfNeeded: pool.count)
            pool.append(contentsOf: bytes)
            return PooledString(offset: offset, length: UInt32(truncatingIfNeeded: bytes.count))
        }

        public mutating func add(_ string: PooledString) {
            cell(.string, UInt64(string.length) << 32 | UInt64(string.offset))
        }

        public mutating func add(_ number: Double) { cell(.number, number.bitPattern) }
        public mutating func add(_ integer: Int64) { cell(.integer, UInt64(bitPattern: integer)) }
        public mutating func addNull() { cell(.null, 0) }

        private mutating func cell(_ tag: Tag, _ payload: UInt64) {
            if end + PackedModels.cellSize > cells.count {
                cells += Array(repeating: 0, count: max(cells.count, 64 * PackedModels.cellSize))
            }
            cells[end] = tag.rawValue
            for index in 0..<8 { cells[end + 1 + index] = UInt8(truncatingIfNeeded: payload >> UInt64(8 * index)) }
            end += PackedModels.cellSize
            fieldsInModel += 1
        }

        /// Adds the models `other` packed after these (its strings' offsets moved past this
        /// pool): a batch packed in parts at once is joined in order.
        public mutating func append(_ other: Builder) {
            let shift = UInt32(truncatingIfNeeded: pool.count)
            pool += other.pool
            if end + other.end > cells.count { cells += Array(repeating: 0, count: end + other.end - cells.count) }
            var position = 0
            while position < other.end {
                for index in 0..<PackedModels.cellSize { cells[end + index] = other.cells[position + index] }
                if other.cells[position] == Tag.string.rawValue {
                    var offset = UInt32(0)
                    for index in 0..<4 { offset |= UInt32(other.cells[position + 1 + index]) << UInt32(8 * index) }
                    offset &+= shift
                    for index in 0..<4 { cells[end + 1 + index] = UInt8(truncatingIfNeeded: offset >> UInt32(8 * index)) }
                }
                end += PackedModels.cellSize
                position += PackedModels.cellSize
            }
            count += other.count
        }

        /// Ends a model; a model with fewer cells than the schema has names is padded with nils.
        public mutating func endModel() {
            while fieldsInModel < schema.names.count { addNull() }
            fieldsInModel = 0
            count += 1
        }

        /// The packed models. The pool must stay under 4 GiB (offsets are 32-bit): callers bound
        /// how many models one buffer holds.
        public func finish(wrapsEach: Bool) -> PackedModels {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(PackedModels.headerSize + end + pool.count)
            for word in [UInt32(truncatingIfNeeded: count), UInt32(truncatingIfNeeded: schema.names.count)] {
                for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
            }
            bytes += cells[..<end]
            bytes += pool
            return PackedModels(schema: schema, count: count, wrapsEach: wrapsEach, bytes: bytes)
        }
    }
}

extension PackedModels: Hashable {
    /// Equal when of the same schema object with the same models.
    public static func == (lhs: PackedModels, rhs: PackedModels) -> Bool {
        lhs.schema === rhs.schema && lhs.wrapsEach == rhs.wrapsEach && lhs.bytes == rhs.bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(schema))
        hasher.combine(wrapsEach)
        hasher.combine(bytes)
    }
}
