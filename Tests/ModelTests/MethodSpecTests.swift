import Model
import Testing

@Suite struct MethodSpecTests {
    final class Geocoder: Sendable {}

    static let location = ArgumentType.record("location", fields: [.init("lat", .number), .init("lon", .number)])

    static let interface = Interface<Geocoder>(name: "geocoder", summary: "Turns places into names.") { d in
        d.method("reverse", [ArgumentSpec("location", location, "Where."),
                             ArgumentSpec("options", .table, "How.", optional: true)],
                 returns: "placemarks", "Names a place.", immediate: { _, _ throws(ServiceError) in .null })
        d.method("forward", [ArgumentSpec("address", .string, "What.")], returns: "locations", "Finds a place.",
                 body: { _, _ async throws(ServiceError) in .null })
        d.method("status", [], returns: "a status", "How it is.", immediate: { _, _ throws(ServiceError) in .null })
        d.action("stop", [], "Stops.", body: { _, _ throws(ServiceError) in })
        d.action("remove", [ArgumentSpec("url", .string, "Which.")], "Removes one.", body: { _, _ throws(ServiceError) in })
        d.action("configure", [ArgumentSpec("a", .integer, "A.", optional: true),
                               ArgumentSpec("b", .integer, "B.", optional: true)],
                 "All optional.", body: { _, _ throws(ServiceError) in })
        d.method("search", [ArgumentSpec("query", .string, "What."),
                            ArgumentSpec("limit", .integer, "How many.", optional: true),
                            ArgumentSpec("region", location, "Near.", optional: true)],
                 returns: "results", "Two optional.", immediate: { _, _ throws(ServiceError) in .null })
    }

    func method(_ name: String) throws -> AnyMethodSpec {
        try #require(Self.interface.erased.method(name))
    }

    @Test func signatureWithOptionalArgumentAndCompletion() throws {
        #expect(try method("reverse").signature(owner: "svc") == "svc:reverse(location[, options], completion)")
        #expect(try method("reverse").signature(owner: "geocoder", separator: ".") == "geocoder.reverse(location[, options], completion)")
        #expect(try method("forward").signature(owner: "geocoder") == "geocoder:forward(address, completion)")
    }

    @Test func signatureWithoutArguments() throws {
        #expect(try method("status").signature(owner: "svc") == "svc:status(completion)")
        #expect(try method("stop").signature(owner: "svc") == "svc:stop()")
    }

    @Test func actionsHaveNoCompletion() throws {
        #expect(try method("remove").signature(owner: "svc") == "svc:remove(url)")
        #expect(try !method("remove").hasCompletion)
        #expect(try method("remove").result == nil)
        #expect(try method("reverse").hasCompletion)
        #expect(try method("reverse").result == "placemarks")
    }

    @Test func optionalArgumentsNest() throws {
        #expect(try method("configure").signature(owner: "svc") == "svc:configure([a[, b]])")
        #expect(try method("search").signature(owner: "svc") == "svc:search(query[, limit[, region]], completion)")
    }

    @Test func declarationKeepsArgumentsInOrderWithTheirDocs() throws {
        let search = try method("search")
        #expect(search.arguments.map(\.name) == ["query", "limit", "region"])
        #expect(search.arguments.map(\.isOptional) == [false, true, true])
        #expect(search.arguments.map(\.type.shortName) == ["string", "integer", "location"])
        #expect(search.arguments[1].summary == "How many.")
        #expect(search.summary == "Two optional.")
    }

    @Test func argumentsReadMissingPositionsAsNil() {
        let arguments = Arguments(["a", 2])
        #expect(arguments[0] == "a")
        #expect(arguments[1] == 2)
        #expect(arguments[2] == .null)
        #expect(arguments[100] == .null)
        #expect(Arguments([])[0] == .null)
    }
}
