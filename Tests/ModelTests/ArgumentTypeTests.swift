import Model
import Testing

@Suite struct ArgumentTypeTests {
    static let location = ArgumentType.record("location", fields: [
        .init("lat", .number), .init("lon", .number), .init("accuracy", .number, optional: true),
    ])

    // MARK: Wording

    @Test func descriptionsReadLikeArgumentErrors() {
        #expect(ArgumentType.any.description == "a value")
        #expect(ArgumentType.string.description == "a string")
        #expect(ArgumentType.integer.description == "an integer")
        #expect(ArgumentType.number.description == "a number")
        #expect(ArgumentType.boolean.description == "a boolean")
        #expect(ArgumentType.table.description == "a table")
        #expect(Self.location.description == "a location {lat=, lon=}", "optional fields are not listed")
        #expect(ArgumentType.record("item", fields: []).description == "an item {}")
        #expect(ArgumentType.array(of: .string).description == "an array of strings")
        #expect(ArgumentType.array(of: .integer).description == "an array of integers")
        #expect(ArgumentType.array(of: Self.location).description == "an array of locations")
        #expect(ArgumentType.array(of: .array(of: .number)).description == "an array of arrays of numbers")
        #expect(ArgumentType.array(of: .oneOf([.string, .number])).description == "an array of values")
        #expect(ArgumentType.oneOf([.string, .array(of: .string)]).description == "a string or an array of strings")
        #expect(ArgumentType.oneOf([.integer, .boolean, .table]).description == "an integer or a boolean or a table")
    }

    @Test func shortNamesForSignatures() {
        #expect(ArgumentType.any.shortName == "value")
        #expect(ArgumentType.string.shortName == "string")
        #expect(ArgumentType.integer.shortName == "integer")
        #expect(ArgumentType.number.shortName == "number")
        #expect(ArgumentType.boolean.shortName == "boolean")
        #expect(ArgumentType.table.shortName == "table")
        #expect(Self.location.shortName == "location")
        #expect(ArgumentType.array(of: .string).shortName == "{strings}")
        #expect(ArgumentType.array(of: Self.location).shortName == "{locations}")
        #expect(ArgumentType.oneOf([.string, .array(of: .string)]).shortName == "string|{strings}")
    }

    // MARK: Shapes

    @Test func anyAcceptsEverythingButNil() {
        let values: [Value] = [false, 0, 0.5, "", [], [:], .model(DataModel("location", [:]))]
        for value in values { #expect(ArgumentType.any.accepts(value), "\(value)") }
        #expect(!ArgumentType.any.accepts(.null))
    }

    @Test func scalarsAcceptOnlyTheirKind() {
        #expect(ArgumentType.string.accepts("x"))
        #expect(ArgumentType.string.accepts(""))
        #expect(!ArgumentType.string.accepts(1))
        #expect(!ArgumentType.string.accepts(.null))
        #expect(ArgumentType.boolean.accepts(true))
        #expect(ArgumentType.boolean.accepts(false))
        #expect(!ArgumentType.boolean.accepts(0))
        #expect(!ArgumentType.boolean.accepts("true"))
        #expect(!ArgumentType.boolean.accepts(.null))
    }

    @Test func integersAcceptFloatsOnlyWithExactIntegerValues() {
        #expect(ArgumentType.integer.accepts(.integer(3)))
        #expect(ArgumentType.integer.accepts(.integer(.min)))
        #expect(ArgumentType.integer.accepts(.integer(.max)))
        #expect(ArgumentType.integer.accepts(.number(3.0)))
        #expect(ArgumentType.integer.accepts(.number(-0.0)))
        #expect(ArgumentType.integer.accepts(.number(-9_007_199_254_740_992)))
        #expect(!ArgumentType.integer.accepts(.number(3.5)))
        #expect(!ArgumentType.integer.accepts(.number(.nan)))
        #expect(!ArgumentType.integer.accepts(.number(.infinity)))
        #expect(!ArgumentType.integer.accepts(.number(1e19)), "beyond Int64")
        #expect(!ArgumentType.integer.accepts(.number(9_223_372_036_854_775_808.0)), "2^63 does not fit")
        #expect(!ArgumentType.integer.accepts("3"))
        #expect(!ArgumentType.integer.accepts(.null))
    }

    @Test func numbersAcceptIntegersAndFloats() {
        #expect(ArgumentType.number.accepts(.integer(3)))
        #expect(ArgumentType.number.accepts(.number(3.25)))
        #expect(ArgumentType.number.accepts(.number(.infinity)))
        #expect(ArgumentType.number.accepts(.number(.nan)), "NaN is a number; whether it makes sense is the service's call")
        #expect(!ArgumentType.number.accepts("3"))
        #expect(!ArgumentType.number.accepts(true))
        #expect(!ArgumentType.number.accepts(.null))
    }

    @Test func tablesAcceptArraysObjectsAndModels() {
        #expect(ArgumentType.table.accepts([]))
        #expect(ArgumentType.table.accepts([1, 2]))
        #expect(ArgumentType.table.accepts(["a": 1]))
        #expect(ArgumentType.table.accepts(.model(DataModel("location", ["lat": 1]))))
        #expect(!ArgumentType.table.accepts("table"))
        #expect(!ArgumentType.table.accepts(.null))
    }

    @Test func arraysCheckEveryElement() {
        let strings = ArgumentType.array(of: .string)
        #expect(strings.accepts([]))
        #expect(strings.accepts(["a", "b"]))
        #expect(!strings.accepts(["a", 1]))
        #expect(!strings.accepts(["a", .null]))
        #expect(!strings.accepts("a"))
        #expect(!strings.accepts(["a": "b"]))
        let integers = ArgumentType.array(of: .integer)
        #expect(integers.accepts([1, 2.0]))
        #expect(!integers.accepts([1, 2.5]))
        let nested = ArgumentType.array(of: .array(of: .number))
        #expect(nested.accepts([[1, 2.5], []]))
        #expect(!nested.accepts([[1], 2]))
    }

    @Test func recordsCheckRequiredFieldsAndAllowExtraOnes() {
        let location = Self.location
        #expect(location.accepts(["lat": 48.8566, "lon": 2.3522]))
        #expect(location.accepts(["lat": 48, "lon": 2]), "integers are numbers")
        #expect(location.accepts(["lat": 1, "lon": 2, "name": "Paris", "extra": [1, 2]]), "extra fields are allowed")
        #expect(!location.accepts(["lat": 1]), "lon is required")
        #expect(!location.accepts(["lat": 1, "lon": "2"]))
        #expect(!location.accepts(["lat": 1, "lon": .null]), "a nil field is a missing field")
        #expect(!location.accepts([:]))
        #expect(!location.accepts("48,2"))
        #expect(!location.accepts(.null))
        #expect(!location.accepts([1, 2]), "an array has no fields")
    }

    @Test func optionalRecordFieldsMayBeMissingButNotWrong() {
        let location = Self.location
        #expect(location.accepts(["lat": 1, "lon": 2]))
        #expect(location.accepts(["lat": 1, "lon": 2, "accuracy": 5.5]))
        #expect(location.accepts(["lat": 1, "lon": 2, "accuracy": .null]))
        #expect(!location.accepts(["lat": 1, "lon": 2, "accuracy": "high"]))
    }

    @Test func recordsAcceptDataModelsWithTheFields() {
        #expect(Self.location.accepts(.model(DataModel("location", ["lat": 1.5, "lon": 2.5]))))
        #expect(Self.location.accepts(.model(DataModel("placemark", ["lat": 1.5, "lon": 2.5]))),
                "the shape is checked, not the type name")
        #expect(!Self.location.accepts(.model(DataModel("location", ["lat": 1.5]))))
    }

    @Test func nestedRecordFields() {
        let place = ArgumentType.record("place", fields: [
            .init("name", .string), .init("at", Self.location), .init("tags", .array(of: .string), optional: true),
        ])
        #expect(place.description == "a place {name=, at=}")
        #expect(place.accepts(["name": "Paris", "at": ["lat": 1, "lon": 2]]))
        #expect(place.accepts(["name": "Paris", "at": ["lat": 1, "lon": 2], "tags": ["capital"]]))
        #expect(!place.accepts(["name": "Paris", "at": ["lat": 1]]))
        #expect(!place.accepts(["name": "Paris", "at": ["lat": 1, "lon": 2], "tags": [1]]))
    }

    @Test func oneOfAcceptsAnyAlternative() {
        let names = ArgumentType.oneOf([.string, .array(of: .string)])
        #expect(names.accepts("a"))
        #expect(names.accepts(["a", "b"]))
        #expect(names.accepts([]))
        #expect(!names.accepts(1))
        #expect(!names.accepts(["a", 1]))
        #expect(!names.accepts(.null))
        #expect(!ArgumentType.oneOf([]).accepts("anything"))
    }
}

@Test func recordArticleFollowsPronunciation() {
    #expect(ArgumentType.record("item", fields: []).description == "an item {}")
    #expect(ArgumentType.record("place", fields: []).description == "a place {}")
    do {
        #expect(ArgumentType.record("Item", fields: []).description == "an Item {}")
        #expect(ArgumentType.record("user", fields: [.init("name", .string)]).description == "a user {name=}")
        #expect(ArgumentType.record("url", fields: []).description == "a url {}")
    }
}

/// The Lua binding converts `{}` to `.array([])` (it cannot tell an empty list from an empty record).
@Test func anEmptyTableFitsARecordWhoseFieldsAreAllOptional() {
    let options = ArgumentType.record("options", fields: [.init("limit", .integer, optional: true)])
    #expect(options.accepts([:]))
    #expect(!ArgumentType.record("location", fields: [.init("lat", .number)]).accepts([]), "required fields are missing")
    do {
        #expect(options.accepts([]))
    }
}
