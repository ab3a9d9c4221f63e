import Model
import Testing

@Suite struct AnyInterfaceDocumentationTests {
    @Test func documentationListsPropertiesMethodsAndEvents() {
        #expect(Counter.erasedInterface.documentation(as: "services.counter") == """
            services.counter — Counts ticks.

            Properties (read-only):
              count  Ticks so far. [integer]
              label  An optional label. [string or nil]

            Methods:
              services.counter:add(n, completion)
                  Adds n ticks.
                  n: an integer — How many to add.
                  completion(result, err): the new count
              services.counter:rename([label], completion)
                  Renames the counter.
                  label: a string, optional — The new label.
                  completion(result, err): the old label
              services.counter:fail(completion)
                  Always fails.
                  completion(result, err): nothing ever
              services.counter:reset()
                  Sets the count back to zero.

            Events (on("counter.<event>", handler) or services.counter:on("<event>", handler)):
              didReset  The count went back to zero. Payload: nil.
              didTick   One tick, with the new count. Payload: integer.
            """)
    }

    @Test func documentationDefaultsToTheInterfaceName() {
        let text = Counter.erasedInterface.documentation()
        #expect(text.hasPrefix("counter — Counts ticks.\n"))
        #expect(text.contains("  counter:add(n, completion)"))
    }

    @Test func emptySectionsAreLeftOut() {
        final class Box: Sendable {}
        let interface = Interface<Box>(name: "box", summary: "Nothing inside.").erased
        #expect(interface.documentation() == "box — Nothing inside.")
    }

    @Test func summaryLinePadsTheName() {
        #expect(Counter.erasedInterface.summaryLine(width: 10) == "counter     Counts ticks.")
        #expect(Counter.erasedInterface.summaryLine(width: 3) == "counter  Counts ticks.")
    }

    @Test func methodDocumentationNamesArgumentTypesInWords() throws {
        let location = ArgumentType.record("location", fields: [.init("lat", .number), .init("lon", .number)])
        final class Box: Sendable {}
        let interface = Interface<Box>(name: "geocoder", summary: "") { d in
            d.method("reverse", [ArgumentSpec("location", location, "Where."),
                                 ArgumentSpec("options", .table, "How.", optional: true)],
                     returns: "placemarks", "Names a place.", immediate: { _, _ throws(ServiceError) in .null })
        }.erased
        #expect(try #require(interface.method("reverse")).documentation(owner: "geocoder") == [
            "geocoder:reverse(location[, options], completion)",
            "    Names a place.",
            "    location: a location {lat=, lon=} — Where.",
            "    options: a table, optional — How.",
            "    completion(result, err): placemarks",
        ])
    }
}
