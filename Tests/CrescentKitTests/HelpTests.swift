import CrescentKit
import Testing

/// DESIGN.md "Globals": `help([x])` documents services, methods and globals from the same
/// declarations that drive the binding.
@Suite struct HelpTests {
    private func help(_ expression: String) throws -> [String] {
        let test = try TestHost(thermostat: Thermostat())
        test.run("help(\(expression))")
        #expect(test.stderr.isEmpty)
        return test.lines
    }

    @Test func helpOfAServiceListsPropertiesMethodsAndEvents() throws {
        let lines = try help("services.thermostat")
        #expect(lines.first == "services.thermostat — A thermostat for tests.")
        #expect(lines.contains("Properties (read-only):"))
        #expect(lines.contains("  temperature  The current temperature. [number]"))
        #expect(lines.contains("  label        A label, nil until set. [string or nil]"))
        #expect(lines.contains("  readings     Recorded temperatures. [readings]"))
        #expect(lines.contains("Methods:"))
        #expect(lines.contains("  services.thermostat:set(degrees, completion)"))
        #expect(lines.contains("      degrees: a number — The new temperature."))
        #expect(lines.contains("  services.thermostat:locate(place[, options], completion)"))
        #expect(lines.contains("      options: a table, optional — { name = }"))
        #expect(lines.contains("  services.thermostat:rename(label)"))
        #expect(lines.contains("Events (on(\"thermostat.<event>\", handler) or services.thermostat:on(\"<event>\", handler)):"))
        #expect(lines.contains("  didAlarm  Something is wrong. Payload: { level }."))
        #expect(lines.contains("  didReset  Back to defaults. Payload: nil."))
        let methodLines = lines.filter { $0.hasPrefix("  services.thermostat:") }
        #expect(methodLines.count == 8, "every declared method, in declaration order")
    }

    @Test func helpOfAMethodValueAndOfItsDottedName() throws {
        let expected = [
            "thermostat:set(degrees, completion)",
            "    Sets the temperature.",
            "    degrees: a number — The new temperature.",
            "    completion(result, err): the temperature",
        ]
        #expect(try help("services.thermostat.set") == expected)
        #expect(try help("\"thermostat.set\"") == expected)
        #expect(try help("\"thermostat:set\"") == expected)
        #expect(try help("services.thermostat.rename") == [
            "thermostat:rename(label)",
            "    Sets the label.",
            "    label: a string — The new label.",
        ])
        #expect(try help("\"thermostat\"").first == "services.thermostat — A thermostat for tests.")
    }

    @Test func helpOfACollection() throws {
        let lines = try help("services.thermostat.readings")
        #expect(lines.first == "readings — Recorded temperatures.")
        #expect(lines.contains("  readings:record(value, completion)"))
        #expect(lines.contains("  didChange  The items changed; positions are 1-based (deleted: before the change, the others: after). Payload: change set {inserted, deleted, updated, reload}."))
    }

    @Test func helpOfGlobals() throws {
        let observe = [
            "observe(obj, key, handler[, { initial, coalesce, once, latest }])",
            "    Observe property `key`; handler(new, old, change). Returns a Subscription. With latest = true each "
                + "delivery runs the handler as a task and cancels the task of the one before if it still waits.",
        ]
        #expect(try help("\"observe\"") == observe)
        #expect(try help("observe") == observe)
        #expect(try help("\"on\"").first == "on(name, handler[, { once, latest }])")
        #expect(try help("post").first == "post(name[, payload])")
        #expect(try help("subscriptions").first == "subscriptions()")
    }

    @Test func helpWithoutArgumentsGivesTheOverview() throws {
        let lines = try help("")
        #expect(lines.first == "Crescent — Lua 5.4 controllers over a Swift model. help(x) for details.")
        #expect(lines.contains("Globals:"))
        #expect(lines.contains { $0.hasPrefix("  observe ") && $0.contains("Observe property `key`; handler(new, old, change). Returns a Subscription.") })
        #expect(lines.contains { $0.hasPrefix("  services ") })
        #expect(lines.contains("Services (help(services.<name>)):"))
        #expect(lines.contains("  thermostat  A thermostat for tests."))
    }

    @Test func helpOfSomethingUnknownSaysSo() throws {
        #expect(try help("\"nope\"") == ["help: no documentation for 'nope' (try help() for the list)"])
        #expect(try help("\"thermostat.nope\"") == ["help: no documentation for 'thermostat.nope' (try help() for the list)"])
        #expect(try help("print") == ["help: no documentation for this function (try help() for the list)"])
        #expect(try help("42") == ["help: no documentation for this number (try help() for the list)"])
    }
}
