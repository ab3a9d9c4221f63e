import Model
import Testing

/// A record's fields (`Value.object`): kept in the order added, found by name whether the record
/// is small (searched in order) or large (indexed), and equal or hashed alike whatever the order.
@Suite struct FieldsTests {
    @Test func fieldsKeepTheOrderTheyWereAddedIn() {
        var fields: Fields = ["b": 2, "a": 1]
        fields["c"] = 3
        fields["b"] = 20
        #expect(fields.keys == ["b", "a", "c"])
        #expect(fields.values == [20, 1, 3])
        #expect(fields.removeValue(forKey: "a") == 1)
        #expect(fields.keys == ["b", "c"])
        fields["c"] = nil
        #expect(fields.keys == ["b"])
        #expect(fields["c"] == nil)
        #expect(fields.count == 1)
    }

    @Test func aNameGivenTwiceKeepsItsLastValueInItsFirstPlace() throws {
        let fields = Fields(fields: [("x", 1), ("y", 2), ("x", 3)])
        #expect(fields.keys == ["x", "y"])
        #expect(fields["x"] == 3)
        let literal: Value = ["x": 1, "x": 2]
        #expect(literal == .object(["x": 2]))
        #expect(try Value(jsonText: #"{"k": 1, "j": 0, "k": 2}"#) == .object(["k": 2, "j": 0]))
    }

    @Test func namesSwiftDeemsEqualAreOneField() {
        // "é" written precomposed and as e plus a combining accent: two Lua strings, one Swift name.
        let fields = Fields(fields: [("caf\u{E9}", 1), ("cafe\u{301}", 2)])
        #expect(fields.count == 1)
        #expect(fields["caf\u{E9}"] == 2)
    }

    @Test func equalityAndHashingIgnoreTheOrder() {
        let one: Fields = ["a": 1, "b": "two", "c": [1, 2]]
        let other: Fields = ["c": [1, 2], "a": 1, "b": "two"]
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(Set([Value.object(one), .object(other)]).count == 1)
        #expect(one != ["a": 1, "b": "two"])
        #expect(one != ["a": 1, "b": "two", "c": [2, 1]])
        #expect(one != ["a": 1, "b": "two", "d": [1, 2]])
    }

    /// Random sets and removals on records growing past the indexed size and shrinking below it
    /// again, each checked against a dictionary doing the same.
    @Test(arguments: [3, 16, 17, 200])
    func manyChangesMatchADictionary(names: Int) {
        var generator = SeededGenerator(seed: UInt64(names))
        var fields = Fields()
        var dictionary: [String: Value] = [:]
        for step in 0..<4000 {
            let name = "field\(generator.next() % UInt64(names))"
            if generator.next() % 4 == 0 {
                #expect(fields.removeValue(forKey: name) == dictionary.removeValue(forKey: name))
            } else {
                let value = Value.integer(Int64(step))
                #expect(fields.updateValue(value, forKey: name) == dictionary.updateValue(value, forKey: name))
            }
            let probe = "field\(generator.next() % UInt64(names + 3))"
            #expect(fields[probe] == dictionary[probe])
        }
        #expect(fields.count == dictionary.count)
        #expect(fields.dictionary == dictionary)
        #expect(fields == Fields(dictionary))
        #expect(Set(fields.keys).count == fields.count)
    }

    @Test func aDataModelsFieldsAreARecordOfItsNonNullValues() {
        let schema = ModelSchema("point", ["lat", "lon", "name"])
        let model = DataModel(schema, [.number(1.5), .null, .string("x")])
        #expect(model.fields == ["lat": .number(1.5), "name": "x"])
        #expect(model.fields.keys == ["lat", "name"])
        #expect(DataModel("point", model.fields) == model)
    }
}
