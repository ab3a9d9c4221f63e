import Model
import Testing

/// The one rule for option tables: named fields only, known keys only, each of its type and range.
@Suite struct OptionTableTests {
    static let options: [OptionTable.Option] = [
        .number("distance", in: 0...), .integer("limit", in: 1...10), .string("order"), .boolean("once"),
    ]

    @Test func givenOptionsComeBackByName() throws {
        #expect(try OptionTable.check(nil, Self.options).isEmpty)
        #expect(try OptionTable.check([], Self.options).isEmpty, "{} arrives as an empty array")
        let given = try OptionTable.check(["distance": 2.5, "limit": 3.0, "order": "-name", "once": true], Self.options)
        #expect(given == ["distance": 2.5, "limit": 3.0, "order": "-name", "once": true])
    }

    static let mistakes: [(Value, String)] = [
        (.string("x"), "options must be a table of named fields (options: distance, limit, once, order), got string"),
        (.object(["bogus": .integer(1)]), "unknown option 'bogus' (options: distance, limit, once, order)"),
        (.object(["distance": .integer(-1)]), "options.distance must be a number >= 0, got -1"),
        (.object(["distance": .number(.nan)]), "options.distance must be a number >= 0, got nan"),
        (.object(["distance": .number(.infinity)]), "options.distance must be a number >= 0, got inf"),
        (.object(["distance": .string("far")]), "options.distance must be a number, got string"),
        (.object(["limit": .number(1.5)]), "options.limit must be an integer in [1, 10], got 1.5"),
        (.object(["limit": .integer(11)]), "options.limit must be an integer in [1, 10], got 11"),
        (.object(["order": .integer(1)]), "options.order must be a string, got number"),
        (.object(["once": .string("yes")]), "options.once must be a boolean, got string"),
    ]

    @Test(arguments: mistakes)
    func eachMistakeNamesTheKeyAndWhatItMustBe(value: Value, message: String) {
        #expect(throws: ServiceError(.invalidArgument, message)) { try OptionTable.check(value, Self.options) }
    }

    @Test func aMethodWithoutOptionsSaysSo() {
        #expect(throws: ServiceError(.invalidArgument, "unknown option 'x' (it takes no options)")) { try OptionTable.check(["x": 1], []) }
    }

    @Test func hugeKeysAreCutInMessages() {
        let key = String(repeating: "k", count: 10_000)
        do {
            _ = try OptionTable.check(.object([key: 1]), Self.options)
            Issue.record("accepted")
        } catch {
            #expect(error.message.utf8.count < 200, "\(error.message.prefix(100))")
        }
    }
}
