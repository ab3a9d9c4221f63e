import Model
import Testing

/// Packed models (a batch answer's one buffer): what goes in reads back out, across parts packed
/// apart and joined, in the layout `packed.c` reads.
@Suite struct PackedModelsTests {
    static let schema = ModelSchema("spot", ["name", "country", "lat", "count"])

    /// Two parts, as a big batch is packed in halves at once: the second part's strings are
    /// moved past the first part's pool when joined; an empty string, whose offset is the next
    /// string's, and a string pooled once and added twice read back as they went in; a model
    /// given fewer cells than names is padded with nils.
    @Test func partsJoinedReadBackInOrder() {
        var first = PackedModels.Builder(schema: Self.schema, capacity: 2)
        let paris = first.pool(Array("Paris".utf8))
        first.add(paris)
        first.add(first.pool(Array("France".utf8)))
        first.add(48.85)
        first.add(Int64(2_100_000))
        first.endModel()
        first.add(paris)
        first.endModel()

        var second = PackedModels.Builder(schema: Self.schema, capacity: 1)
        let empty = second.pool([UInt8]())
        let tokyo = second.pool(Array("東京".utf8))
        second.add(tokyo)
        second.add(empty)
        second.addNull()
        second.add(Int64(-1))
        second.endModel()

        first.append(second)
        let packed = first.finish(wrapsEach: true)
        #expect(packed.count == 3 && packed.wrapsEach)
        let model = { (values: [Value]) in Value.array([.model(DataModel(Self.schema, values))]) }
        #expect(packed.values == [
            model(["Paris", "France", 48.85, 2_100_000]),
            model(["Paris", .null, .null, .null]),
            model(["東京", "", .null, -1]),
        ])
        // The header, a tag byte per cell, zeros up to a multiple of 8, 8 bytes per cell, the pool.
        let cells = 3 * 4, pool = "ParisFrance東京".utf8.count
        #expect(packed.bytes.count == 24 + cells * 8 + pool)
        #expect(Array(packed.bytes.prefix(8)) == [3, 0, 0, 0, 4, 0, 0, 0])
        #expect(Array(packed.bytes[8..<12]) == [1, 1, 3, 2], "the first model's tags: string, string, number, integer")
        #expect(packed.bytes[20..<24].allSatisfy { $0 == 0 }, "the padding after the tags")
    }
}
