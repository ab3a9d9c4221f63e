@testable import CrescentKit
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
        #expect(lines.contains("  didChange  The items changed; positions are 1-based (deleted: before the change, the others: after), with the inserted and updated items. Payload: change set {inserted, deleted, updated, reload, insertedItems, updatedItems}."))
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

    /// Every global a fresh host defines beyond Lua's standard ones, and every function or value in
    /// its global tables, has documentation; and every documented name exists.
    @Test func everyGlobalIsDocumentedAndEveryDocumentedGlobalExists() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local standard = {}
            for name in ("_G _VERSION assert collectgarbage coroutine debug dofile error getmetatable io ipairs load "
              .. "loadfile math next os package pairs pcall print rawequal rawget rawlen rawset require select "
              .. "setmetatable string table tonumber tostring type utf8 warn xpcall arg"):gmatch("%S+") do
              standard[name] = true
            end
            local names = {}
            for name, value in pairs(_G) do
              if not standard[name] then
                names[#names + 1] = name
                if type(value) == "table" and name ~= "services" then
                  -- pairs, as a script lists them: inspect's fields appear once it loads (on first use).
                  for member in pairs(value) do names[#names + 1] = name .. "." .. member end
                end
              end
            end
            table.sort(names)
            print(table.concat(names, " "))
            """)
        test.settle()
        let defined = Set(test.lines.joined().split(separator: " ").map(String.init))
        // app.top, app.stack and app.args are read through app's metatable (a write to one is
        // refused), so pairs does not list them.
        let documented = Set(GlobalDocs.entries.map(\.name)).subtracting(["app.top", "app.stack", "app.args"])
        #expect(defined.subtracting(documented).sorted() == [], "defined but not documented")
        #expect(documented.subtracting(defined).sorted() == [], "documented but not defined")
        for name in defined.sorted() {
            let lines = try help("\"\(name)\"")
            #expect(lines.first?.hasPrefix("help: no documentation") == false, "\(name): \(lines)")
        }
    }

    @Test func helpOfGlobalTablesAndTheirFunctions() throws {
        #expect(try help("app.push") == ["app.push(ControllerOrInstance[, args])",
                                         "    Push a controller onto the navigation stack; returns it."])
        #expect(try help("\"view.table\"").first == "view.table { id, columns, rows, header, selectable }")
        #expect(try help("controller").first == "controller(name[, base])")
        let app = try help("app")
        #expect(app.first == "app.push/pop/replace/route/open/send, app.top, app.stack, app.args, app.exit([code])")
        #expect(app.contains("  app.exit([code])"))
        #expect(try help("timer.every").first == "timer.every(seconds, fn)")
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
