import Foundation
import Testing

/// Issue 39's seventh attack (new29m), defects 18, 27, 28, 29 and 34: a list read as one record,
/// a plugin method declared without its doc, a plugin method's wrong answer, a plugin's `set` of
/// the wrong type, and a writable change set. Each test is one finding, run through the
/// `crescent` binary, so `CRESCENT_BIN` can name the binary before the fixes.
@Suite struct HardeningNamedMistakesNinthCTests {
    /// 34: a `didChange` handler's `cs.insertd = 1` was kept and read back, while placemarks,
    /// tasks and a process's exit refuse writes.
    @Test func aChangeSetIsReadOnly() async throws {
        let result = try await runScript("""
            local c = services.store:collection("g")
            c:on("didChange", function(cs)
              print("write", pcall(function() cs.insertd = 1 end))
              print("kept", rawget(cs, "insertd"), #cs.inserted)
            end)
            task(function() c:add({ name = "x" }) end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("write\tfalse\tscript.lua:3: cannot set 'change set.insertd' (did you mean 'inserted'?): "
                                       + "a change set is read-only (it is what its service delivered); keep what you need in a local "
                                       + "or a table of your own"), "\(result)")
        #expect(result.stdout.contains("kept\tnil\t1"), "\(result)")
    }

    /// The plugin `psixteen` of the attack (pl/p16), trimmed to what a test reads.
    static func psixteen(_ methods: String) throws -> Sandbox {
        try HardeningNamedMistakesTests.greetPlugin(main: """
            local s = service("greet", "says hi")
            s:property("count", "integer", "How many.", 0)
            \(methods)
            """)
    }

    /// 28: a plugin method answering the wrong type named no line of the plugin and said
    /// "return a integer".
    @Test func aWrongAnswerNamesTheMethodsDeclaration() async throws {
        let sandbox = try Self.psixteen("""
            s:method("hi", { "name: string" }, "integer", "Says hi.", function(n) return "not an int" end)
            """)
        try sandbox.write("script.lua", "task(function() print(services.greet:hi(\"x\")) end)\n")
        let result = try await crescent(["script.lua"], in: sandbox)
        // The plugin is found beside the script, as ./plugins/greet.
        #expect(result.stdout.contains("nil\tgreet.hi: internal: plugin 'greet': greet:hi returned string (\"not an int\"), which is not "
                                       + "its declared type integer (./plugins/greet/main.lua:3 declares it): return an integer from it, "
                                       + "or declare the type it returns in its declaration"), "\(result)")
    }

    /// 29: `s:set("count", "many")` of a declared integer was a warning and the method went on
    /// as if done, while `s:emit` of an undeclared event raises at the plugin's line.
    @Test func aSetOfTheWrongTypeRaisesAtThePluginsLine() async throws {
        let sandbox = try Self.psixteen("""
            s:method("setit", {}, "boolean", "Sets.", function() s:set("count", "many") return true end)
            s:method("setok", {}, "boolean", "Sets.", function() s:set("count", 3) return true end)
            """)
        try sandbox.write("script.lua", """
            task(function()
              print("bad", services.greet:setit())
              print("ok", services.greet:setok(), services.greet.count)
            end)
            """)
        let result = try await crescent(["script.lua"], in: sandbox)
        #expect(result.stdout.contains("bad\tnil\tgreet.setit: internal: plugin 'greet': ./plugins/greet/main.lua:3: greet:set('count', ...): "
                                       + "the value is a string \"many\", which is not the type of property 'count' (integer); the "
                                       + "property keeps its value: set one of its type, or declare it with another type"), "\(result)")
        #expect(result.stdout.contains("ok\ttrue\t3"), "\(result)")
        #expect(!result.stderr.contains("dropped"), "\(result)")
    }

    /// 27: `s:method(name, args, returns, fn)` with the doc left out said only "bad argument #5
    /// to 'method' (function expected, got nil)".
    @Test func aMethodWithoutItsDocNamesTheSignature() async throws {
        let sandbox = try Self.psixteen("""
            s:method("hi", { "name: string" }, "string", function(n) return "hi" end)
            """)
        let result = try await crescent(["plugin", "check", "plugins/greet"], in: sandbox)
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("plugins/greet/main.lua:3: greet:method(name, args, returns, doc, fn): the doc string is missing "
                                       + "(the function came before it): write greet:method(\"hi\", args, returns, \"What it does.\", "
                                       + "function(...) ... end)"), "\(result)")
        let bare = try Self.psixteen("""
            s:method("hi", { "name: string" }, "string", "Says hi.")
            """)
        let bareResult = try await crescent(["plugin", "check", "plugins/greet"], in: bare)
        #expect(bareResult.stderr.contains("plugins/greet/main.lua:3: bad argument #5 to 'method' (function expected, got nil): "
                                           + "greet:method(name, args, returns, doc, fn)"), "\(bareResult)")
    }

    /// 18: the placemarks `geocoder:reverse` answers, or the locations `didUpdateLocations`
    /// delivers, read as one record (`p.name`) read nil, while every field of one placemark is
    /// checked. The list still reads, loops and encodes as before.
    @Test func aListOfRecordsReadAsOneIsNamed() async throws {
        let result = try await runScript("""
            task(function()
              local p = services.geocoder:reverse({ lat = 48.85, lon = 2.35 })
              print("one", pcall(function() return p.name end))
              print("first", type(p[1].name), #p > 0, json.encode(p):sub(1, 1))
              local n = 0
              for _, place in ipairs(p) do n = n + 1 end
              print("loop", n == #p, p[#p + 1])
              local L = services.location
              L:on("didUpdateLocations", function(locations)
                print("locations", pcall(function() return locations.lat end))
                app.exit(0)
              end)
              L:start()
            end)
            """, options: ["--location", "fixed:1,2", "--keep-running"], timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("one\tfalse\tscript.lua:3: 'name' read on a list of "), "\(result)")
        #expect(result.stdout.contains(" placemarks, not on one placemark: index it (list[1].name) or loop over it "
                                       + "(for _, placemark in ipairs(list) do ... end)")
                || result.stdout.contains("1 placemark, not on one placemark"), "\(result)")
        #expect(result.stdout.contains("first\tstring\ttrue\t["), "\(result)")
        #expect(result.stdout.contains("loop\ttrue\tnil"), "\(result)")
        #expect(result.stdout.contains("locations\tfalse\tscript.lua:10: 'lat' read on a list of 1 location, not on one location: "
                                       + "index it (list[1].lat)"), "\(result)")
    }
}
