@testable import CrescentKit
import Model
import Testing

/// A type written with `|nil` (`location|nil`, `number|nil`) takes its other types or nil, and
/// nothing else: the `nil` member alone means "any payload" (an event declared `nil`), and in a
/// union it made every value fit, so a plugin's `set("where", "x")` on a `location|nil` property
/// went through unchecked.
@Suite struct ServiceDeclarationUnionTests {
    @Test func nilInAUnionTakesOnlyNil() {
        #expect(!ServiceDeclaration.value(.string("x"), fitsProperty: "location|nil"))
        #expect(!ServiceDeclaration.value(.integer(5), fitsProperty: "string | nil"))
        #expect(!ServiceDeclaration.value(.bool(true), fits: "{place}|nil"))
        #expect(ServiceDeclaration.value(.null, fitsProperty: "location|nil"))
        #expect(ServiceDeclaration.value(.integer(5), fitsProperty: "number|nil"))
        #expect(ServiceDeclaration.value(.string("x"), fitsProperty: "string|number|nil"))
        // Alone, nil still takes any payload (an event declared without one).
        #expect(ServiceDeclaration.value(.string("x"), fits: "nil"))
    }
}
