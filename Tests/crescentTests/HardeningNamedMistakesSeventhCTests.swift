import Foundation
import Testing

/// Issue 39's findings D16–D31 of the fifth attack (new27m): options, services, modules, specs,
/// plugins and controllers whose mistakes were silent, misleading or named without the fix. Each
/// test is one finding (or a few small ones), run through the `crescent` binary.
@Suite struct HardeningNamedMistakesSeventhCTests {
    /// D16: `--location gpx:` (no file), a file that is not there and a gpsd port out of range
    /// were printed as errors and the run went on (exit 0), where `fixed:1` is a usage error.
    @Test func aBadLocationProviderArgumentIsAUsageError() async throws {
        for (setting, message) in [
            ("gpx:", "crescent: --location gpx: needs a file (gpx:FILE)\n"),
            ("gpx:none.gpx@2x", "crescent: --location gpx:none.gpx@2x: cannot read the file: No such file or directory\n"),
            ("nmea:/nonexistent/track.nmea", "--location nmea:/nonexistent/track.nmea: cannot read the file: No such file or directory"),
            ("gpsd:127.0.0.1:99999", "--location gpsd:127.0.0.1:99999: the port must be a number in [1, 65535], got '99999'"),
        ] {
            let result = try await crescent(["--location", setting, "-e", "print('ran')"])
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains(message) && result.stderr.contains(usageHintPrefix), "\(result)")
            #expect(!result.stdout.contains("ran"), "\(result)")
        }
        // A file that is there is fine.
        let sandbox = try Sandbox()
        try sandbox.write("t.gpx", "<gpx></gpx>")
        let fine = try await crescent(["--location", "gpx:t.gpx", "-e", "print('ran')"], in: sandbox)
        #expect(fine.status == 0 && fine.stdout == "ran\n", "\(fine)")
    }

    /// D17: `request { method = "GTE" }` went out as GTE (a server answers 501), where a spec's
    /// `fake.http` refuses it; a method of its own (`PROPFIND`) still goes out.
    @Test func aMisspelledHTTPMethodIsNamed() async throws {
        let result = try await runScript("""
            services.http:request({ method = "GTE", url = "http://127.0.0.1:1/" }, function(r, e) print("gte", e.code, e.message) end)
            services.http:request({ method = "PROPFIND", url = "http://127.0.0.1:1/" }, function(r, e) print("propfind", e.code) end)
            """)
        // As a bad option value (`timeout = -1`) is: the request's invalid_argument, before it is sent.
        #expect(result.stdout.contains("gte\tinvalid_argument\tmethod 'GTE' is not an HTTP method (methods: CONNECT, "
                                       + "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT, TRACE; did you mean 'GET'?)"), "\(result)")
        #expect(result.stdout.contains("propfind\tnetwork"), "\(result)")
    }

    /// D18: `require("mymodule.lua")` listed the paths tried and never named the file there.
    @Test func requireOfAFileNameSaysToDropLua() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("mymodule.lua", "return { x = 1 }")
        try sandbox.write("script.lua", "local m = require(\"mymodule.lua\")")
        let result = try await crescent(["script.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("no module 'mymodule.lua': require takes a module name, without '.lua': require(\"mymodule\") "
                                       + "loads ./mymodule.lua"), "\(result)")
    }

    /// D19: `crescent observe` of an expression that raised showed the host's frames first and
    /// unfolded (`[C]: in ?`).
    @Test func observeFoldsTheHostsFrames() async throws {
        let host = try await ListeningHost(script: RemoteControlTests.groceries, name: "h1", options: ["--data-dir", "data"])
        let result = try await host.crescentCommand(["observe", "h1", "services.store:colection(\"g\")", "count"])
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("did you mean 'collection'?"), "\(result)")
        #expect(result.stderr.contains("stack traceback:\n\tremote:1: in main chunk\n\t(") && result.stderr.contains("host frame"), "\(result)")
        #expect(!result.stderr.contains("[C]: in"), "\(result)")
        _ = await host.stop()
    }

    /// D20, D26: `self.view` of a controller with no loadView said only "attempt to index a nil
    /// value", and a helper of a popped controller said "the controller was deallocated" with no
    /// line and no call.
    @Test func aControllerWithoutAViewOrPoppedIsNamed() async throws {
        let noView = try await runScript("""
            local C = controller("C")
            function C:viewDidAppear() print(self.view.t) end
            app.push(C)
            timer.after(0.2, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(noView.stderr.contains("script.lua:2: attempt to index a nil value (field 'view'); C defines no loadView, so it has no "
                                       + "view: give it one (function C:loadView() return view.text { text = \"...\" } end)"), "\(noView)")
        let popped = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "a" } end
            local saved
            function C:viewDidAppear() saved = self; app.pop() end
            app.push(C)
            timer.after(0.1, function() print(pcall(function() saved:after(1, function() end) end)) app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(popped.stdout.contains("false\tscript.lua:6: self:after(seconds, handler): C was deallocated (popped or replaced; what its "
                                       + "helpers started ended with it): use the controller shown (app.top), or the global form"), "\(popped)")
    }

    /// D21: a fix with `lng` said lat and lon were out of range.
    @Test func aFakeFixWithAMisspelledFieldIsNamed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/l_spec.lua", """
            it("a", function() fake.location { fixes = { { lat = 1, lng = 2 } } } end)
            it("b", function() fake.location { fixes = { { lat = 1, lon = 2 } } }:fail("timout") end)
            """)
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/l_spec.lua:1: fake.location: fixes[1] has 'lng', no field of a fix (fields: lat, lon, altitude, "
                                       + "speed, course, accuracy, time; did you mean 'lon'?)"), "\(result)")
        // D23: the error code misspelled in fail().
        #expect(result.stdout.contains("spec/l_spec.lua:2: ") && result.stdout.contains("did you mean 'timeout'?"), "\(result)")
    }

    /// D22: a plugin whose main file declared `gret` for the manifest's `greet` was not told what
    /// it did declare.
    @Test func aPluginDeclaringAnotherServiceNameIsToldWhich() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin(main: """
            local s = service("gret", "says hi")
            s:method("hi", {}, "string", "says hi", function() return "hi" end)
            """)
        let result = try await crescent(["plugin", "check", "plugins/greet"], in: sandbox)
        #expect(result.status != 0, "\(result)")
        #expect((result.stdout + result.stderr).contains("did not declare service 'greet', which plugins/greet/plugin.toml promises "
                                                         + "(it declared 'gret': did you mean service(\"greet\", …), or \"gret\" in the manifest?)"),
                "\(result)")
    }

    /// D23: names with a near one that the message did not suggest.
    @Test func theClosestNameIsSuggested() async throws {
        let result = try await runScript("""
            local function try(f) print((select(2, pcall(f)))) end
            try(function() observe(services.store:collection("x"), "cnt", function() end) end)
            try(function() services.process:spawn({ "cat" }):kill("SIGKIL") end)
            local C = controller("C")
            app.route("goods/:id", C)
            try(function() app.open("good/42") end)
            app.exit(0)
            """, options: ["--data-dir", ":memory:"])
        #expect(result.stdoutLines.count >= 3, "\(result)")
        #expect(result.stdoutLines.first?.hasSuffix("(properties: name, count, items; did you mean 'count'?))") == true, "\(result)")
        #expect(result.stdoutLines.dropFirst().first?.hasSuffix("got SIGKIL; did you mean 'SIGKILL'?") == true, "\(result)")
        #expect(result.stdoutLines.dropFirst(2).first == "script.lua:6: app.open: no route matches 'good/42' (routes: goods/:id; "
                + "did you mean 'goods/42'?)", "\(result)")
        let sandbox = try Sandbox()
        try sandbox.write("a001.lua", "print(1)")
        let file = try await crescent(["a001.lau"], in: sandbox)
        #expect(file.status == 2 && file.stderr.contains("cannot open 'a001.lau' (No such file or directory); did you mean 'a001.lua'?"),
                "\(file)")
    }

    /// D25: in `crescent attach`, a command that failed was said twice: the client's error and
    /// the host's own output, which attach shows.
    @Test func attachSaysAFailedCommandOnce() async throws {
        let host = try await ListeningHost(script: RemoteControlTests.groceries, name: "groceries", options: ["--data-dir", "data"])
        let terminal = try await host.attach()
        terminal.type(":ad x\r")
        await terminal.waitFor(line: "did you mean 'add'?")
        // Then something that answers, so that anything said after the first is here too.
        terminal.type("print('after' .. 'wards')\r")
        await terminal.waitFor(line: "afterwards")
        #expect(terminal.text.components(separatedBy: "unknown command 'ad'").count == 2, "\(terminal.text)")
        terminal.type("\u{4}")
        #expect(await terminal.finish() == 0)
        _ = await host.stop()
    }

    /// D27, D28, D29: a misspelled crescent option after the script, an event of a spawned
    /// process given to the service, and `help(collection)`'s observe without `latest`.
    @Test func smallOnesNameTheFix() async throws {
        let option = try await runScript("print(#arg)", arguments: ["--lcoation", "fixed:1,2"])
        #expect(option.stdout == "2\n", "\(option)")
        #expect(option.stderr.contains("put it before the script: crescent --location fixed:1,2 script.lua (--lcoation is not one of "
                                       + "crescent's options; did you mean '--location'?)"), "\(option)")
        // A script's own short option is left alone.
        let own = try await runScript("print(#arg)", arguments: ["--uid", "5"])
        #expect(own.stderr.isEmpty, "\(own)")
        let event = try await runScript("""
            print(pcall(on, "process.didExt", function() end))
            help(services.store:collection("x"))
            """, options: ["--data-dir", ":memory:"])
        #expect(event.stdout.contains("'didExt' is not an event of process (events: none); did you mean childProcess's 'didExit'? An "
                                      + "object's events are its own: obj:on(\"didExit\", handler) (childProcess events: didOutput, didExit)"),
                "\(event)")
        #expect(event.stdout.contains("collection:observe(key, handler[, { initial, coalesce, once, latest }])"), "\(event)")
    }

    /// D30: a controller adding its own class as a child as it appears gave a C stack overflow
    /// and a slot error naming the slot it had, again and again until killed.
    @Test func aControllerHoldingItselfIsOneError() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.stack { view.slot { id = "s" } } end
            function C:viewDidAppear() self:addChild(C, "s") end
            app.push(C)
            timer.after(0.5, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        // Ended by its own timer (status 1: an error was reported), not by the time limit.
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.components(separatedBy: "error in").count == 2, "\(result)")
        #expect(result.stderr.contains("script.lua:3: addChild: children nest 16 controllers deep (C > … > C); C adds its own class as a "
                                       + "child each time one appears, without end"), "\(result)")
        #expect(!result.stderr.contains("stack overflow") && !result.stderr.contains("has no view.slot"), "\(result)")
    }

    /// D31: `app.top = 5` shadowed the navigation state for every later read, without a word.
    @Test func theHostsFieldsOfAppCannotBeShadowed() async throws {
        let result = try await runScript("""
            for _, key in ipairs({ "top", "stack", "args" }) do
              print(pcall(function() app[key] = 5 end))
            end
            print(app.top, #app.stack, app.args[1])
            app.mine = 7
            app.args[2] = "y"
            print(app.mine, app.args[2])
            """, arguments: ["x"])
        #expect(result.stdoutLines == [
            "false\tscript.lua:2: cannot set 'app.top': it is the controller shown; app.push(C) shows one and app.pop() removes it; keep the "
                + "script's own fields in app under other names",
            "false\tscript.lua:2: cannot set 'app.stack': it is a copy of the navigation stack; app.push, app.pop and app.replace change it; "
                + "keep the script's own fields in app under other names",
            "false\tscript.lua:2: cannot set 'app.args': it is the script's arguments (as arg[1...]); its items can be changed "
                + "(app.args[1] = ...); keep the script's own fields in app under other names",
            "nil\t0\tx",
            "7\ty",
        ], "\(result)")
    }
}
