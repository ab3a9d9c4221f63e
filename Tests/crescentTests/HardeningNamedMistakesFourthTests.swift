import Foundation
import Testing

/// Issue 39's leftovers from the third attack (new24): mistakes that were still silent or named
/// no place. Each test is one finding (its number in the report), run through the `crescent` binary.
@Suite struct HardeningNamedMistakesFourthTests {
    /// #4: a rows-only table whose second row has none of the first row's keys (`nme` for
    /// `name`) showed that row as a blank line; with declared columns it was already an error.
    @Test func aRowsOnlyTableHoldsItsRowsToTheFirstRowsKeys() async throws {
        func shown(_ rows: String) async throws -> RunResult {
            try await runScript("""
                local C = controller("C")
                function C:loadView() return view.table { id = "t", rows = \(rows) } end
                app.push(C)
                """, stdinText: "quit\n", options: ["--ui", "plain"])
        }
        let misspelled = try await shown(#"{ { name = "a" }, { nme = "b" } }"#)
        #expect(misspelled.stderr.contains("view.table: row 2 has 'nme', which no column shows (columns: name); did you mean 'name'? "
                                           + "(without `columns` the columns are row 1's keys: give `columns` to choose them)"), "\(misspelled)")
        let unrelated = try await shown(#"{ { name = "a" }, { quantity = 2 } }"#)
        #expect(unrelated.stderr.contains("view.table: row 2 has none of the columns' keys (row: quantity; columns: name)"), "\(unrelated)")
        // A row lacking an optional field, or with data of its own, is no mistake.
        let fine = try await shown(#"{ { name = "a", qty = 1 }, { name = "b", id = 7 } }"#)
        #expect(fine.status == 0 && !fine.stderr.contains("view.table"), "\(fine)")
        #expect(fine.stdout.contains("b"), "\(fine)")
    }

    /// #8: `error({ code = 1 })` in a controller step printed `table: 0x…` with no place and no
    /// traceback; a string error has both.
    @Test func aTableRaisedInAControllerStepNamesItsLineAndShowsTheTable() async throws {
        let result = try await runScript("""
            local Base = controller("Base")
            function Base:loadView() return view.text { id = "t", text = "x" } end
            function Base:viewDidLoad() error({ code = 1 }) end
            local D = controller("D", Base)
            function D:viewDidLoad() Base.viewDidLoad(self) end
            app.push(D)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("error in D:viewDidLoad: script.lua:3: { code = 1 }\nstack traceback:"), "\(result)")
        #expect(result.stderr.contains("script.lua:5: in "), "\(result)")
        #expect(!result.stderr.contains("table: 0x"), "\(result)")
    }

    /// #13: a plugin skipped for its manifest left `services.NAME` saying only "no service".
    /// A plugin whose `main` fails names the check to run too.
    @Test func aSkippedPluginsServiceSaysWhyItIsMissing() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin()
        // greet's manifest, of another name and a kind no plugin has.
        let manifest = try String(contentsOfFile: sandbox.path + "/plugins/greet/plugin.toml", encoding: .utf8)
        try sandbox.write("plugins/p2/plugin.toml", manifest.replacingOccurrences(of: "greet", with: "p2")
                            .replacingOccurrences(of: "kind = \"lua\"", with: "kind = \"ruby\""))
        let skipped = try await crescent(["-e", "task(function() services.p2:hello('x') end)"], in: sandbox)
        #expect(skipped.status == 1, "\(skipped)")
        #expect(skipped.stderr.contains("no service 'p2' (services: "), "\(skipped)")
        #expect(skipped.stderr.contains("): plugin 'p2' was not loaded: plugins/p2/plugin.toml: field 'kind' must be \"lua\" or "
                                        + "\"process\", got \"ruby\"; see `crescent plugin check plugins/p2`"), "\(skipped)")
        // A name no plugin folder has is only the listing, as before.
        let unknown = try await crescent(["-e", "print(pcall(function() return services.p3 end))"], in: sandbox)
        #expect(unknown.stdout.contains("no service 'p3' (services: ") && !unknown.stdout.contains("was not loaded"), "\(unknown)")
        try sandbox.write("plugins/greet/main.lua", "error('broken main')\n")
        let failing = try await crescent(["-e", "task(function() services.greet:hi() end)"], in: sandbox)
        #expect(failing.stderr.contains("plugin 'greet' could not start: "), "\(failing)")
        #expect(failing.stderr.contains("see `crescent plugin check plugins/greet`"), "\(failing)")
    }

    /// #15: `fake.service("location", …)` took `{ lat = "x" }` for the location-typed property,
    /// in `properties` and by `:set`, though a real service's value of that type is checked.
    @Test func aFakeServicesPropertyValuesKeepTheirDeclaredTypes() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/x_spec.lua", """
            describe("d", function()
              it("given", function()
                fake.service("location", { properties = { location = { lat = "x" } } })
              end)
              it("set", function()
                local h = fake.service("location", {})
                h:set("location", { lat = 1 })
              end)
              it("right", function()
                local h = fake.service("location", { properties = { location = { lat = 1, lon = 2 } } })
                h:set("location", { lat = 3, lon = 4 })
                h:set("location", nil)
                h:set("updating", true)
              end)
            end)
            """)
        let result = try await crescent(["test", "spec/x_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:3: fake.service(\"location\"): property 'location' of location is location or nil, "
                                       + "got a table that is not a location {lat=, lon=}"), "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:7: bad argument #2 to 'set' ('location' of location is location or nil, "
                                       + "got a table that is not a location {lat=, lon=})"), "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 2 failed", "\(result)")
    }

    /// #18: reaching `--memory-limit` in a script said only "not enough memory: the memory limit
    /// of 2 MiB was reached", with no line and no traceback.
    @Test func theMemoryLimitsErrorNamesTheScriptsLine() async throws {
        let result = try await runScript("""
            local t = {}
            for i = 1, 1e7 do t[i] = i end
            print("never")
            """, options: ["--memory-limit", "2"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("script.lua:2: not enough memory: the memory limit of 2 MiB was reached (raise it with --memory-limit)"),
                "\(result)")
        #expect(result.stderr.contains("stack traceback:"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
        // In a task (a coroutine) too. (A pcall that catches it gets the line: LimitsTests.)
        let task = try await runScript("""
            print("start")
            task(function() local u = {} for i = 1, 1e7 do u[i] = i end end)
            """, options: ["--memory-limit", "16"])
        #expect(task.stderr.contains("error in task: script.lua:2: not enough memory: the memory limit of 16 MiB was reached"), "\(task)")
        #expect(task.stderrShowsNoCrash, "\(task)")
    }
}
