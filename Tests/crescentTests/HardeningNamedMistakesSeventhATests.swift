import Foundation
import Testing

/// Issue 39's fifth attack (new27m), D1–D9: the most severe findings. Each test is one finding,
/// run through the `crescent` binary, so `CRESCENT_BIN` can name the binary before the fixes.
@Suite struct HardeningNamedMistakesSeventhATests {
    /// D1: `url = "postgress://…"` became a SQLite file in folders named after the URL, with no
    /// word: a store meant for PostgreSQL wrote to the current folder.
    @Test func aStoreURLWithAnUnknownSchemeIsRefusedAtItsLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("crescent.toml", """
            [store]
            url = "postgress://x@127.0.0.1/db"
            """)
        try sandbox.write("script.lua", "print(services.store:collection(\"x\").count)\n")
        let result = try await crescent(["script.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("crescent.toml:2: [store] url has the unknown scheme 'postgress://': use "
                                       + "postgres://user:password@host:port/database for PostgreSQL, or sqlite:PATH (or a plain path) "
                                       + "for SQLite; did you mean 'postgres://'?"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/postgress:"), "\(result)")
    }

    /// D2: one undeclared field dropped the whole event, so every subscriber missed it; the
    /// README says the field is dropped, with a warning.
    @Test func aPayloadFieldTheEventDoesNotDeclareIsLeftOutNotTheEvent() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin(main: """
            local g = service("greet", "says hi")
            g:event("didGreet", "{ name }", "someone was greeted")
            g:method("greet", { "name: string" }, "nil", "greets", function(name) g:emit("didGreet", { nme = name, name = name .. "!" }) end)
            """)
        let result = try await crescent(["-e", """
            on("greet.didGreet", function(p) print("got", p.name, p.nme) end)
            task(function() services.greet:greet("bob") sleep(0.2) end)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["got\tbob!\tnil"], "\(result)")
        #expect(result.stderr.contains("plugins/greet/main.lua:3: emitted 'greet.didGreet' with field 'nme', which its payload { name } does "
                                       + "not declare (fields: name; did you mean 'name'?); that field was dropped"), "\(result)")
    }

    /// D3: `on("collection.didChnage", f)` and the like were accepted and never fired; a
    /// service's misspelled event was already refused.
    @Test func aMisspelledEventOfAnObjectTypeIsRefused() async throws {
        let result = try await runScript("""
            print(select(2, pcall(function() on("collection.didChnage", function() end) end)))
            print(select(2, pcall(function() on("childProcess.didExt", function() end) end)))
            print(select(2, pcall(function() on("fileWatcher.didChang", function() end) end)))
            print(pcall(function() return on("collection.didChange", function() end) end))
            on("colection.didChange", function() end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.count == 4, "\(result)")
        #expect(result.stdoutLines.first == "script.lua:1: bad argument #1 to 'on' ('didChnage' is not an event of collection "
                + "(events: didChange; did you mean 'didChange'?))", "\(result)")
        #expect(result.stdoutLines.dropFirst().first?.hasSuffix("'didExt' is not an event of childProcess (events: didOutput, didExit; "
                                                                + "did you mean 'didExit'?))") == true, "\(result)")
        #expect(result.stdoutLines.dropFirst(2).first?.contains("'didChang' is not an event of fileWatcher") == true, "\(result)")
        #expect(result.stdoutLines.dropFirst(3).first?.hasPrefix("true\t") == true, "\(result)")
        #expect(result.stderr.contains("crescent: warning: script.lua:5: on(\"colection.didChange\", handler) listens for the script's own "
                                       + "event 'colection.didChange': no service or object type is named 'colection'; did you mean "
                                       + "'collection' (on(\"collection.didChange\", handler))?"), "\(result)")
    }

    /// D4: a started location service that cannot reach gpsd said nothing unless the script
    /// listened for `didFail`: the tracker waited for ever in silence.
    @Test func anUnheardFailureOfAStartedServiceIsSaidOnce() async throws {
        let unheard = try await runScript("""
            services.location:start()
            observe(services.location, "location", function(loc) if loc then print("fix", loc.lat) end end)
            timer.after(1.5, function() app.exit(0) end)
            """, options: ["--location", "gpsd:127.0.0.1:1"])
        #expect(unheard.status == 0, "\(unheard)")
        let warnings = unheard.stderr.components(separatedBy: "nothing listens for on(\"location.didFail\", handler)")
        #expect(warnings.count == 2, "\(unheard)")
        #expect(unheard.stderr.contains("crescent: warning: location failed and nothing listens for on(\"location.didFail\", handler), so "
                                        + "this is said once: location: unavailable: cannot reach gpsd at 127.0.0.1:1"), "\(unheard)")
        #expect(unheard.stderr.contains("--location fixed:LAT,LON"), "\(unheard)")

        let heard = try await runScript("""
            services.location:start()
            on("location.didFail", function(e) print("failed") end)
            timer.after(1.5, function() app.exit(0) end)
            """, options: ["--location", "gpsd:127.0.0.1:1"])
        #expect(heard.stdoutLines.first == "failed", "\(heard)")
        #expect(!heard.stderr.contains("nothing listens"), "\(heard)")
    }

    /// D5: these took an argument past their last without a word.
    @Test func anExtraArgumentIsOneTooManyEverywhere() async throws {
        let result = try await runScript("""
            local function try(f) print((select(2, pcall(f)))) end
            local loc = services.location
            try(function() observe(loc, "location", function() end, {}, 5) end)
            try(function() observe(loc, "location", function() end, nil, 5) end)
            try(function() loc:observe("location", function() end, {}, 5) end)
            try(function() loc:on("didFail", function() end, {}, 5) end)
            try(function() help("observe", 5) end)
            try(function() json.encode({}, nil, 5) end)
            try(function() json.decode("{}", nil, 5) end)
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            try(function() app.push(C, {}, 5) end)
            try(function() app.route("a/:id", C, 5) end)
            try(function() app.pop(5) end)
            try(function() timer.after(1, function() end):cancel(5) end)
            try(function() app.exit(0, 5) end)
            task(function() try(function() sleep(0.01, 5) end) app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.stdoutLines == [
            "script.lua:3: observe(object, key, handler[, options]): argument #5 is one too many (it takes an object, a key, a handler and "
                + "options (optional))",
            "script.lua:4: observe(object, key, handler[, options]): argument #5 is one too many (it takes an object, a key, a handler and "
                + "options (optional))",
            "script.lua:5: location:observe(key, handler[, options]): argument #4 is one too many (it takes a key, a handler and options "
                + "(optional))",
            "script.lua:6: location:on(event, handler[, options]): argument #4 is one too many (it takes an event, a handler and options "
                + "(optional))",
            "script.lua:7: help([topic]): argument #2 is one too many (it takes a topic (optional))",
            "script.lua:8: json.encode(value[, opts]): argument #3 is one too many (it takes a value and opts (optional))",
            "script.lua:9: json.decode(text[, opts]): argument #3 is one too many (it takes a text and opts (optional))",
            "script.lua:12: app.push(Controller[, args]): argument #3 is one too many (it takes a controller and args (optional))",
            "script.lua:13: app.route(pattern, Controller): argument #3 is one too many (it takes a pattern and a controller class)",
            "script.lua:14: app.pop(): argument #1 is one too many (it takes none)",
            "script.lua:15: timer:cancel(): argument #1 is one too many (it takes none)",
            "script.lua:16: app.exit([code]): argument #2 is one too many (it takes a status code (optional))",
            "script.lua:17: sleep(seconds): argument #2 is one too many (it takes seconds)",
        ], "\(result)")
        #expect(result.status == 0, "\(result)")
    }

    /// D6: the stubs typed `{ a, b }` payloads as arrays of the first word's type: a file
    /// change as a collection's change sets, a feed update as feeds.
    @Test func theStubsTypeAFieldListPayloadAsATable() async throws {
        let sandbox = try Sandbox()
        let made = try await crescent(["stubs", "--out", "types"], in: sandbox)
        #expect(made.status == 0, "\(made)")
        let stubs = try String(contentsOfFile: sandbox.path + "/types/services.lua", encoding: .utf8)
        #expect(stubs.contains("event: \"didChange\", handler: fun(payload: { changes: table, overflow: boolean? }, info: table)"), "\(stubs)")
        #expect(stubs.contains("event: \"didUpdate\", handler: fun(payload: { feed: crescent.feed, newItems: crescent.item[] }, info: table)"), "\(stubs)")
        #expect(stubs.contains("event: \"didOutput\", handler: fun(payload: { stream: string, line: string, truncated: boolean }, info: table)"),
                "\(stubs)")
        #expect(!stubs.contains("crescent.change[][]") && !stubs.contains("payload: crescent.feed[]"), "\(stubs)")
        // A collection's change set keeps its class.
        #expect(stubs.contains("event: \"didChange\", handler: fun(payload: crescent.change,"), "\(stubs)")
    }

    /// D7: `p:writ("x")` suggested `wait`, one substitution away, over `write`, which starts
    /// with what was typed.
    @Test func aTieGoesToTheNameThatStartsWithWhatWasTyped() async throws {
        let result = try await runScript("""
            local p = services.process:spawn({ "cat" })
            print(select(2, pcall(function() p:writ("x") end)))
            p:kill()
            """)
        #expect(result.stdoutLines.first?.hasSuffix("did you mean 'write'?)") == true, "\(result)")
    }

    /// D8: a command method defined with '.' was reported as taking 0 arguments, with a hint
    /// about quoting.
    @Test func aCommandMethodDefinedWithADotIsNamed() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:viewDidLoad() self:command("del", "del", "x") end
            function C.del(x) print("del", x) end
            app.push(C)
            """, stdinText: "del a\nquit\n", options: ["--ui", "plain"])
        #expect(result.stderr.contains("command 'del': C.del was defined with '.', so its first parameter 'x' gets the controller, not the "
                                       + "command's first word: define it with ':' (function C:del(x))"), "\(result)")
        #expect(!result.stderr.contains("quote an argument"), "\(result)")
    }

    /// D9: `self:after(-1, …)` and `self:every(0, …)` blamed `timer.after`/`timer.every` and
    /// gave no line of the author's.
    @Test func aControllerTimerValueErrorNamesTheHelperAndTheLine() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:tick() end
            function C:viewDidLoad()
              print(select(2, pcall(function() self:after(-1, "tick") end)))
              print(select(2, pcall(function() self:every(0, "tick") end)))
              print(select(2, pcall(function() self:after(0/0, "tick") end)))
              app.exit(0)
            end
            app.push(C)
            """, options: ["--ui", "plain"])
        #expect(result.stdoutLines == [
            "script.lua:5: self:after(seconds, handler): argument #1 must be a finite number of seconds >= 0, got -1",
            "script.lua:6: self:every(seconds, handler): argument #1: an interval of 0 s would never let the loop rest; use a positive number",
            "script.lua:7: self:after(seconds, handler): argument #1 must be a finite number of seconds >= 0, got nan (0/0)",
        ], "\(result)")
    }
}
