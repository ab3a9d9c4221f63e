import Foundation
import Testing

/// The rest of what the attack on issue 39 (new23) found: names without the closest one, a fake
/// that failed without the line that reached it, option typos raised by some services and
/// returned by others, a warning on correct code, and a nil that said nothing. Each test is one
/// finding, run through the `crescent` binary.
@Suite struct HardeningNamedMistakesRestTests {
    /// `inspect`'s and `json`'s unknown options listed the options without the closest one.
    @Test func misspelledOptionsOfInspectAndJSONNameTheClosest() async throws {
        let result = try await runScript("""
            local function try(f) print((select(2, pcall(f)))) end
            try(function() local _ = inspect(1, { dept = 1 }) end)
            try(function() local _ = json.encode({ a = 1 }, { sort_key = true }) end)
            try(function() local _ = json.decode("{}", { maxdepth = 3 }) end)
            try(function() local _ = json.encode({ a = 1 }, { zzz = true }) end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "script.lua:2: inspect: unknown option 'dept' (options: depth, indent, length, newline, string, width; did you mean 'depth'?)",
            "script.lua:3: json.encode: unknown option 'sort_key' (options: indent, sortKeys; did you mean 'sortKeys'?)",
            "script.lua:4: json.decode: unknown option 'maxdepth' (options: maxDepth; did you mean 'maxDepth'?)",
            "script.lua:5: json.encode: unknown option 'zzz' (options: indent, sortKeys)",
        ], "\(result)")
    }

    /// A manifest's unknown top-level field (`mian`) listed the fields without the closest one.
    @Test func aMisspelledManifestFieldNamesTheClosest() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin(mainField: "mian")
        let result = try await crescent(["plugin", "check", "plugins/greet"], in: sandbox)
        #expect(result.status != 0, "\(result)")
        #expect((result.stdout + result.stderr).contains("field 'mian' is not a manifest field (fields: command, crescent, description, kind, "
                                                         + "main, name, permissions, requires, services, settings, version; did you mean 'main'?)"),
                "\(result)")
    }

    /// The remote `observe` named an unknown property without the closest one, and a misspelled
    /// service only as "gives a nil, not an observable object".
    @Test func remoteObserveNamesTheClosestServiceAndProperty() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("idle.lua", "timer.every(60, function() end)\n")
        let host = try await ListeningHost(script: "idle.lua", name: "idle", options: ["--location", "fixed:1,2"], sandbox: sandbox)
        let property = try await host.crescentCommand(["observe", "idle", "location", "locaton"])
        #expect(property.status != 0, "\(property)")
        #expect(property.stderr.contains("observe: 'locaton' is not a property of location (properties: "), "\(property)")
        #expect(property.stderr.contains("did you mean 'location'?)"), "\(property)")
        let service = try await host.crescentCommand(["observe", "idle", "locaton", "location"])
        #expect(service.status != 0, "\(service)")
        #expect(service.stderr.contains("observe: no service 'locaton' (services: "), "\(service)")
        #expect(service.stderr.contains("did you mean 'location'?), and as a Lua expression it gives nil"), "\(service)")
        _ = await host.stop()
    }

    /// A misspelled global of a spec (`descibe`, `before_eac`, `view_txt`) was Lua's bare
    /// "attempt to call a nil value", where a script's (`prnt`) names the closest global; and
    /// `assert.view`'s screen with `widht` said only that width was missing.
    @Test func misspelledSpecGlobalsAndScreenKeysNameTheClosest() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/load_spec.lua", "descibe(\"d\", function() it(\"t\", function() end) end)\n")
        try sandbox.write("spec/hook_spec.lua", "describe(\"d\", function() before_eac(function() end) it(\"t\", function() end) end)\n")
        try sandbox.write("spec/body_spec.lua", "describe(\"d\", function() it(\"t\", function() view_txt() end) end)\n")
        try sandbox.write("app.lua", """
            local V = controller("V")
            function V:loadView() return view.text { text = "hi" } end
            app.push(V)
            """)
        try sandbox.write("spec/view_spec.lua", """
            describe("d", function() it("t", function() script("app.lua"); assert.view("g.txt", { widht = 80 }) end) end)
            """)
        let cases: [(file: String, expected: String)] = [
            ("spec/load_spec.lua", "spec/load_spec.lua:1: attempt to call a nil value (global 'descibe'); did you mean 'describe'?"),
            ("spec/hook_spec.lua", "spec/hook_spec.lua:1: attempt to call a nil value (global 'before_eac'); did you mean 'before_each'?"),
            ("spec/body_spec.lua", "spec/body_spec.lua:1: attempt to call a nil value (global 'view_txt'); did you mean 'view_text'?"),
            ("spec/view_spec.lua", "spec/view_spec.lua:1: assert.view(golden, screen): unknown key 'widht' in screen (keys: height, width; "
                + "did you mean 'width'?), as { width = 80, height = 12 }"),
        ]
        for (file, expected) in cases {
            let result = try await crescent(["test", file], in: sandbox)
            #expect(result.status == 1, "\(file): \(result)")
            #expect(result.stdout.contains(expected), "\(file): \(result)")
        }
    }

    /// A fake that did not match (`fake.http`, `fake.process`, a `fake.service` without the
    /// method) failed without the line of the call that reached it; the line is the spec's, or
    /// the script's that `script()` ran.
    @Test func aFakeThatDoesNotMatchNamesTheLineThatReachedIt() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("fetch.lua", """
            task(function()
              services.http:get("http://x/z")
            end)
            """)
        try sandbox.write("spec/fakes_spec.lua", """
            describe("d", function()
              it("http", function()
                fake.http { ["GET http://x/"] = { status = 200 } }
                local r = services.http:get("http://x/y")
              end)
              it("process", function()
                fake.process { git = "ok" }
                services.process:run({ "gti" }, function() end)
              end)
              it("script", function()
                fake.http { ["GET http://x/"] = { status = 200 } }
                script("fetch.lua")
              end)
              it("answer", function()
                fake.http { ["GET http://x/"] = function() return { stats = 200 } end }
                services.http:get("http://x/")
              end)
              it("service", function()
                fake.service("geocoder", {})
                local _, err = services.geocoder:search("Paris")
                error(tostring(err), 0)
              end)
            end)
            """)
        let result = try await crescent(["test", "spec/fakes_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/fakes_spec.lua:4: no fake.http route for GET http://x/y (routes: GET http://x/)"), "\(result)")
        #expect(result.stdout.contains("spec/fakes_spec.lua:8: no fake.process answer for gti (answers: git; did you mean 'git'?)"), "\(result)")
        #expect(result.stdout.contains("fetch.lua:2: no fake.http route for GET http://x/z (routes: GET http://x/)"), "\(result)")
        #expect(result.stdout.contains("spec/fakes_spec.lua:16: fake.http: route GET http://x/'s function answered a table with: unknown key 'stats'"),
                "\(result)")
        #expect(result.stdout.contains("geocoder.search: unavailable: spec/fakes_spec.lua:20: fake.service(\"geocoder\") has no method 'search'"),
                "\(result)")
        #expect(result.stdoutLines.last == "0 passed, 5 failed", "\(result)")
    }

    /// `self:start(services.location, { distanse = 3 })` in a controller raised without the
    /// script's line, which the same call in a plain script has.
    @Test func aControllersStartOptionErrorNamesTheScriptsLine() async throws {
        let result = try await runScript("""
            local V = controller("V")
            function V:loadView()
              return view.text { text = "hi" }
            end
            function V:viewDidLoad() self:start(services.location, { distanse = 3 }) end
            app.push(V)
            timer.after(0.2, function() app.exit(0) end)
            """, options: ["--location", "fixed:1,2"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("script.lua:5: location:start([options]): argument #1: unknown option 'distanse' "
                                       + "(options: distance; did you mean 'distance'?)"), "\(result)")
        // A helper of a controller that is gone says so at the script's line, not at the prelude's.
        let gone = try await runScript("""
            local V = controller("V")
            local saved
            function V:loadView() return view.text { text = "hi" } end
            function V:viewDidLoad() saved = self end
            app.push(V)
            timer.after(0.05, function() app.pop() end)
            timer.after(0.2, function()
              print(select(2, pcall(function() saved:start(services.location) end)))
              print(select(2, pcall(function() saved:on("x", function() end) end)))
              app.exit(0)
            end)
            """, options: ["--location", "fixed:1,2", "--ui", "plain"])
        // Naming the helper called too (new27m D26).
        let lines = Array(gone.stdoutLines.suffix(2))
        #expect(lines.count == 2 && lines[0].hasPrefix("script.lua:8: self:start(service[, options]): V was deallocated (popped")
                && lines[1].hasPrefix("script.lua:9: self:on(event, handler[, options]): V was deallocated (popped"), "\(gone)")
    }

    /// The same option typo raised at the line in some services (`location:start`, `timer.at`,
    /// `on`) and came back through the completion in others, where an awaited call printed only
    /// `nil`: a misspelled option name is raised at the call's line by every service.
    @Test func aMisspelledOptionIsRaisedAtItsLineByEveryService() async throws {
        let calls = [
            #"services.http:get("http://127.0.0.1:1/", { timout = 1 }, function() end)"#,
            #"services.http:request({ url = "http://127.0.0.1:1/", mehtod = "POST" }, function() end)"#,
            #"services.geocoder:search("Paris", { limt = 3 }, function() end)"#,
            #"services.geocoder:reverse({ lat = 1, lon = 2 }, { cout = 3 }, function() end)"#,
            #"services.store:collection("g"):find({}, { limt = 1 }, function() end)"#,
            #"services.process:run({ "true" }, { timout = 1 }, function() end)"#,
            #"services.process:spawn({ "true" }, { timout = 1 })"#,
            #"services.feeds:add("http://127.0.0.1:1/f", { intervall = 60 }, function() end)"#,
            #"services.files:watch(".", { recursiv = true })"#,
        ]
        let expected = [
            "http:get(url[, options], completion): argument #2: unknown option 'timout' (options: headers, maxBytes, timeout; did you mean 'timeout'?)",
            "argument #1: unknown option 'mehtod' (options: body, headers, maxBytes, method, timeout, url; did you mean 'method'?)",
            "argument #2: unknown option 'limt' (options: country, limit; did you mean 'limit'?)",
            "argument #2: unknown option 'cout' (options: count; did you mean 'count'?)",
            "argument #2: unknown option 'limt' (options: limit, offset, order; did you mean 'limit'?)",
            "argument #2: unknown option 'timout' (options: cwd, env, maxBytes, outliveTask, shell, stdin, timeout; did you mean 'timeout'?)",
            "argument #2: unknown option 'timout' (options: cwd, env, maxBytes, outliveTask, shell, stdin, timeout; did you mean 'timeout'?)",
            "argument #2: unknown option 'intervall' (options: interval; did you mean 'interval'?)",
            "argument #2: unknown option 'recursiv' (options: debounce, glob, recursive; did you mean 'recursive'?)",
        ]
        let script = calls.map { "print((select(2, pcall(function() \($0) end))))" }.joined(separator: "\n")
            + "\nservices.store:collection(\"g\"):find({}, { limit = -1 }, function(r, e) print('completion', e.code) end)\n"
        let result = try await runScript(script, options: ["--data-dir", ":memory:"])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.count == calls.count + 1, "\(result)")
        for (index, text) in expected.enumerated() where index < lines.count {
            #expect(lines[index].hasPrefix("script.lua:\(index + 1): "), "\(calls[index]): \(result)")
            #expect(lines[index].contains(text), "\(calls[index]): \(result)")
        }
        // A value the method rejects stays a value: through the completion.
        #expect(lines.last == "completion\tinvalid_argument", "\(result)")
    }

    /// `on("file.saved")` and `on("stores.updated")` are a script's own names, but were warned
    /// about as misspelled services; a prefix one letter from a service followed by one of its
    /// events still is.
    @Test func aScriptsOwnEventNearAServiceNameIsNotWarned() async throws {
        let quiet = try await runScript("""
            on("file.saved", function(p) print("saved", p.n) end)
            on("stores.updated", function() end)
            post("file.saved", { n = 1 })
            """)
        #expect(quiet.status == 0 && quiet.stdout.contains("saved\t1"), "\(quiet)")
        #expect(quiet.stderr.isEmpty, "\(quiet)")
        let warned = try await runScript("on(\"locaton.didUpdateLocations\", function() end)\n")
        #expect(warned.stderr.contains("warning: script.lua:1: on(\"locaton.didUpdateLocations\", handler) listens for the script's own event"),
                "\(warned)")
        #expect(warned.stderr.contains("did you mean 'location'"), "\(warned)")
        let close = try await runScript("on(\"locaton.didUpdateLocation\", function() end)\n")
        #expect(close.stderr.contains("did you mean 'location'"), "\(close)")
    }

    /// `view_text()` with no controller shown returned nil, so a test failed later with
    /// `actual: nil` and no reason.
    @Test func viewTextWithNoControllerSaysWhy() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plain.lua", "print(\"no controller\")\n")
        try sandbox.write("spec/x_spec.lua", """
            describe("d", function()
              it("text", function()
                script("plain.lua")
                assert.matches("hi", view_text())
              end)
              it("json", function() view_json() end)
            end)
            """)
        let result = try await crescent(["test", "spec/x_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:4: view_text(): no controller is shown, so there is no view"), "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:6: view_json(): no controller is shown"), "\(result)")
        #expect(!result.stdout.contains("actual:  nil"), "\(result)")
    }

    /// The places plugin's `near` read nil right after it started (the first fix came a turn
    /// later); it holds the saved place at once, and didEnter still comes once.
    @Test func placesNearIsSetWhenThePluginStarts() async throws {
        let sandbox = try Sandbox()
        let root = CrescentProcess.packageRoot.path
        let data = sandbox.path + "/data"
        let location = ["--data-dir", data, "--location", "fixed:48.8566,2.3522"]
        let saved = try await crescent(location + ["-e", """
            task(function() print(services.places:add("hotel", { lat = 48.8567, lon = 2.3523 }).name) end)
            """], directory: root, timeLimit: 60)
        #expect(saved.status == 0 && saved.stdout.contains("hotel"), "\(saved)")
        // The plugin starts at the first read of services.places, once the location has a fix.
        let result = try await crescent(location + ["-e", """
            services.location:start()
            local sub
            sub = observe(services.location, "location", function(fix)
              if not fix then return end
              sub:cancel()
              local places = services.places
              print("near", places.near and places.near.name)
              places:on("didEnter", function(p) print("entered", p.place.name) services.location:stop() end)
            end)
            """], directory: root, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["near\thotel", "entered\thotel"], "\(result)")
    }
}
