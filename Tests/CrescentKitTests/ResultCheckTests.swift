@testable import CrescentKit
import Model
import Testing

/// A plugin method's declared return type, read once at its declaration, against the values the
/// method answers.
@Suite struct ResultCheckTests {
    static let place: Value = .object(["lat": .number(48.85), "lon": .number(2.35)])

    @Test(arguments: [
        ("string", Value.string("a")), ("number", .integer(5)), ("integer", .number(3)), ("boolean", .bool(false)),
        ("string|number", .integer(5)), ("string?", .string("a")), (" number | string ", .string("a")),
        ("true", .bool(true)), ("false|string", .bool(true)), ("{string}", .array([.string("a")])),
        ("{strings}", .array([])), ("{ name, count }", .object(["name": .string("n")])), ("location", place),
        ("place", place), ("value", .integer(1)), ("any", .string("x")), ("string|nil", .string("a")), ("nil", .integer(1)),
        ("the place it found", .integer(1)), ("", .bool(true)),
    ])
    func aValueOfTheDeclaredTypeFits(returns: String, value: Value) {
        #expect(ResultCheck(returns: returns).problem(value) == nil)
    }

    @Test(arguments: [
        ("string", Value.integer(5), "returned number (5), which is not its declared type string"),
        ("integer", .number(2.5), "returned number (2.5), which is not its declared type integer"),
        ("string|number", .bool(true), "returned boolean (true), which is not its declared type string|number"),
        ("true", .string("yes"), "returned string (\"yes\"), which is not its declared type true"),
        ("{string}", .array([.integer(1)]), "returned table, which is not its declared type {string}"),
        ("location", .object(["lat": .number(1)]), "returned table, which is not its declared type location"),
        ("place", .string("Paris"), "returned string (\"Paris\"), which is not its declared type place"),
        ("{ name }", .integer(1), "returned number (1), which is not its declared type { name }"),
        // A union's nil takes only nil: it made `string|nil` take any value.
        ("string|nil", .integer(1), "returned number (1), which is not its declared type string|nil"),
    ])
    func aValueOfAnotherTypeIsNamedWithTheDeclaredOne(returns: String, value: Value, problem: String) {
        #expect(ResultCheck(returns: returns).problem(value) == problem)
    }

    @Test func nilFitsEveryType() {
        #expect(ResultCheck(returns: "string").problem(.null) == nil)
    }

    @Test func aDeclaredMethodReadsItsTypeOnce() {
        let method = ServiceDeclaration.Method(name: "count", arguments: [], returns: "integer", doc: "")
        #expect(method.result.returns == "integer")
        #expect(method.result.problem(.integer(2)) == nil)
        #expect(method.result.problem(.string("2")) != nil)
    }
}
