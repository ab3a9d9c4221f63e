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
/// count × fieldCount tags of one byte, model by model, in the schema's order:
///   0 nil, 1 string, 2 integer, 3 number, 4 true, 5 false
/// zero bytes up to a multiple of 8
/// count × fieldCount payloads of 8 bytes, in the tags' order: a string's u32 offset into the
///   pool then its u32 length, an integer's i64, a number's bits, 0 for the rest
/// the pool: the strings' UTF-8 bytes
/// ```
///
/// Tags and payloads lie apart so the builder appends whole words, never single bytes, and the
/// buffer is made with one copy of each part.
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

    /// The size of the header and of one payload, as laid out above.
    public static let headerSize = 8
    public static let payloadSize = 8

    /// Where the payloads start in a buffer of `cellCount` cells: after the tags, padded.
    static func payloadStart(cellCount: Int) -> Int {
        (headerSize + cellCount + payloadSize - 1) / payloadSize * payloadSize
    }

    /// The tags of a cell.
    @usableFromInline enum Tag: UInt8 {
        case null = 0, string, integer, number, isTrue, isFalse
    }

    /// The models as values: `.array` of models (of one-model arrays when ``wrapsEach``).
    public var values: [Value] {
        let fieldCount = schema.names.count
        let cellCount = count * fieldCount
        let payloads = Self.payloadStart(cellCount: cellCount)
        let poolStart = payloads + cellCount * Self.payloadSize
        var result: [Value] = []
        result.reserveCapacity(count)
        var cell = 0
        for _ in 0..<count {
            var fields: [Value] = []
            fields.reserveCapacity(fieldCount)
            for _ in 0..<fieldCount {
                fields.append(value(tag: bytes[Self.headerSize + cell], payload: word(at: payloads + cell * Self.payloadSize),
                                    poolStart: poolStart))
                cell += 1
            }
            let model = Value.model(DataModel(schema, fields))
            result.append(wrapsEach ? .array([model]) : model)
        }
        return result
    }

    /// The little-endian word at `offset`.
    private func word(at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (0..<Self.payloadSize).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }

    private func value(tag: UInt8, payload: UInt64, poolStart: Int) -> Value {
        switch Tag(rawValue: tag) {
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

    /// Packs models of one shared schema, field by field: each model's cells in the schema's
    /// order, then ``endModel()``.
    ///
    /// Its adding methods are inlinable: a service packs 100,000 models cell by cell from another
    /// module, where each call and each unspecialized copy into the pool cost more than the work.
    public struct Builder: Sendable {
        @usableFromInline let schema: ModelSchema
        @usableFromInline var tags: [UInt8] = []
        @usableFromInline var payloads: [UInt64] = []
        @usableFromInline var pool: [UInt8] = []
        @usableFromInline var count = 0
        @usableFromInline var fieldsInModel = 0

        /// A string already in the pool, to add again without copying it.
        public struct PooledString: Sendable {
            @usableFromInline let offset: UInt32
            @usableFromInline let length: UInt32

            @inlinable init(offset: UInt32, length: UInt32) {
                self.offset = offset
                self.length = length
            }
        }

        /// A builder for about `capacity` models of `schema`, whose strings take about
        /// `poolCapacity` bytes.
        public init(schema: ModelSchema, capacity: Int, poolCapacity: Int = 0) {
            self.schema = schema
            tags.reserveCapacity(capacity * schema.names.count)
            payloads.reserveCapacity(capacity * schema.names.count)
            pool.reserveCapacity(poolCapacity)
        }

        /// Copies `bytes` (UTF-8) into the pool, for ``add(_:)-(PooledString)``.
        @inlinable public mutating func pool(_ bytes: some Collection<UInt8>) -> PooledString {
            let offset = UInt32(truncatingIfNeeded: pool.count)
            pool.append(contentsOf: bytes)
            return PooledString(offset: offset, length: UInt32(truncatingIfNeeded: bytes.count))
        }

        @inlinable public mutating func add(_ string: PooledString) {
            cell(.string, UInt64(string.length) << 32 | UInt64(string.offset))
        }

        @inlinable public mutating func add(_ number: Double) { cell(.number, number.bitPattern) }
        @inlinable public mutating func add(_ integer: Int64) { cell(.integer, UInt64(bitPattern: integer)) }
        @inlinable public mutating func addNull() { cell(.null, 0) }

        @inlinable mutating func cell(_ tag: Tag, _ payload: UInt64) {
            tags.append(tag.rawValue)
            payloads.append(payload)
            fieldsInModel += 1
        }

        /// Adds the models `other` packed after these (its strings' offsets moved past this
        /// pool): a batch packed in parts at once is joined in order.
        public mutating func append(_ other: Builder) {
            let shift = UInt64(pool.count)
            pool += other.pool
            tags += other.tags
            payloads.reserveCapacity(payloads.count + other.payloads.count)
            for (tag, payload) in zip(other.tags, other.payloads) {
                guard tag == Tag.string.rawValue else {
                    payloads.append(payload)
                    continue
                }
                let offset = (payload & 0xFFFF_FFFF &+ shift) & 0xFFFF_FFFF
                payloads.append(payload & 0xFFFF_FFFF_0000_0000 | offset)
            }
            count += other.count
        }

        /// Ends a model; a model with fewer cells than the schema has names is padded with nils.
        @inlinable public mutating func endModel() {
            while fieldsInModel < schema.names.count { addNull() }
            fieldsInModel = 0
            count += 1
        }

        /// The packed models. The pool must stay under 4 GiB (offsets are 32-bit): callers bound
        /// how many models one buffer holds.
        public func finish(wrapsEach: Bool) -> PackedModels {
            let payloadStart = PackedModels.payloadStart(cellCount: tags.count)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(payloadStart + payloads.count * PackedModels.payloadSize + pool.count)
            for word in [UInt32(truncatingIfNeeded: count), UInt32(truncatingIfNeeded: schema.names.count)] {
                for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
            }
            bytes += tags
            bytes += repeatElement(0, count: payloadStart - bytes.count)
            // One copy of the payloads' memory, which holds their little-endian bytes on a
            // little-endian machine (elsewhere each is swapped first): byte by byte, the copy
            // was a large part of packing a batch.
            #if _endian(little)
            payloads.withUnsafeBytes { bytes.append(contentsOf: $0) }
            #else
            payloads.map(\.littleEndian).withUnsafeBytes { bytes.append(contentsOf: $0) }
            #endif
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
