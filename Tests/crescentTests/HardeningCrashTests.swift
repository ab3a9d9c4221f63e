import Foundation
import HTTPTestServer
import Testing

/// Nothing a script, a server, a file or a setting sends kills the process: each input that
/// once crashed it now gets an error that names it, and the run goes on.
@Suite struct HardeningCrashTests {
    @Test func aURLPortOutsideTheRangeIsAnErrorNotACrash() async throws {
        let result = try await runScript("""
            services.http:get("http://127.0.0.1:99999/", function(r, err) print("http", err and err.code) end)
            services.feeds:add("http://127.0.0.1:70000/feed", function(f, err) print("feeds", err and err.code) end)
            """)
        #expect(result.stdoutLines.sorted() == ["feeds\tinvalid_argument", "http\tinvalid_argument"], "\(result)")
        #expect(result.stderrShowsNoCrash && !result.killedBySignal, "\(result)")
    }

    @Test func aRedirectToAPortOutsideTheRangeIsAnError() async throws {
        let server = try await HTTPTestServer.start { _ in
            .respond(status: 302, headers: [("Location", "http://127.0.0.1:70000/")])
        }
        defer { Task { await server.stop() } }
        let result = try await runScript("""
            services.http:get("\(server.baseURL)/", function(r, err) print(err and err.code, r and r.status) end)
            """)
        #expect(!result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        #expect(result.stdout != "", "the completion ran: \(result)")
    }

    @Test func aHugeFeedIntervalIsRefusedAndNothingIsStored() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("add.lua", """
            services.feeds:add("http://127.0.0.1:9/feed", { interval = 1e16 }, function(f, err)
              print(err and err.code, err and err.message)
            end)
            """)
        let first = try await crescent(["--data-dir", "data", "add.lua"], in: sandbox)
        #expect(first.stdout.hasPrefix("invalid_argument\toptions.interval must be a number in [0, "), "\(first)")
        try sandbox.write("list.lua", "print(#services.feeds.feeds)")
        let second = try await crescent(["--data-dir", "data", "list.lua"], in: sandbox)
        #expect(second.status == 0 && second.stdout == "0\n", "\(second)")
    }

    @Test func aFinalizerCallingAServiceAtExitIsALuaErrorNotACrash() async throws {
        let result = try await runScript("""
            X = setmetatable({}, { __gc = function() services.store:collection("x") end })
            Y = setmetatable({}, { __gc = function() observe(services.store, "path", print) end })
            print("done")
            """, options: ["--data-dir", "data"])
        // The finalizers' errors are reported as the run ends, and fail it (they were silent).
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("crescent: error in a __gc finalizer as the run ended (and 1 more): "), "\(result)")
        #expect(result.stdout == "done\n", "\(result)")
        #expect(result.stderrShowsNoCrash && !result.killedBySignal, "\(result)")
    }

    @Test func anNMEADeviceThatCannotBeWatchedFailsNamingIt() async throws {
        let result = try await runScript("""
            services.location:on("didFail", function(e) print(e.code, e.message) app.exit(0) end)
            services.location:start()
            """, options: ["--location", "nmea:/dev/null"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix("unavailable\tcannot read the NMEA device /dev/null:"), "\(result)")
        #expect(result.stderrShowsNoCrash && !result.killedBySignal, "\(result)")
    }

    @Test func aTinyOrAbsurdReplaySpeedUpIsAUsageErrorNotACrash() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.gpx", #"<gpx><trk><trkseg><trkpt lat="1" lon="2"><time>2024-01-01T00:00:00Z</time></trkpt><trkpt lat="1" lon="2.1"><time>2024-01-01T01:00:00Z</time></trkpt></trkseg></trk></gpx>"#)
        try sandbox.write("script.lua", "services.location:start()")
        for setting in ["gpx:t.gpx@1e-20x", "gpx:t.gpx@abcx", "gpx:t.gpx@1e300x"] {
            let result = try await crescent(["--location", setting, "script.lua"], in: sandbox)
            #expect(result.stderr.contains("the speed-up after '@' must be a number in [0.001, 1000000]"), "\(setting): \(result)")
            #expect(result.stderrShowsNoCrash && !result.killedBySignal, "\(setting): \(result)")
        }
    }

    /// Found by fuzzing the config file: a dotted key makes a table per part, which no parser
    /// limit bounds, and converting 20,000 nested tables overflowed the stack.
    @Test func aConfigNestedTooDeeplyIsAnErrorNotACrash() async throws {
        let sandbox = try Sandbox()
        for depth in [101, 20_000, 200_000] {
            try sandbox.write("deep.toml", "[store]\nx" + String(repeating: ".a", count: depth) + " = 1\n")
            let result = try await crescent(["--config", "deep.toml", "-e", "print('ran')"], in: sandbox)
            #expect(result.status == 2 || result.status == 1, "depth \(depth): \(result)")
            #expect(result.stderr.contains("deep.toml:2: a key has more than 101 dotted parts"), "depth \(depth): \(result)")
            #expect(result.stderrShowsNoCrash && !result.killedBySignal, "depth \(depth): \(result)")
            try sandbox.write("deep.toml", "[x" + String(repeating: ".a", count: depth) + "]\n")
            let header = try await crescent(["--config", "deep.toml", "-e", "print('ran')"], in: sandbox)
            #expect(header.stderr.contains("deep.toml:1: a key has more than 101 dotted parts"), "depth \(depth): \(header)")
            #expect(result.stderrShowsNoCrash && !result.killedBySignal, "depth \(depth): \(result)")
        }
        // Nested through inline tables and arrays instead (the parser bounds those at 256 levels).
        try sandbox.write("deep.toml", "[store]\nx = " + String(repeating: "{ a = ", count: 150) + "1" + String(repeating: " }", count: 150) + "\n")
        let inline = try await crescent(["--config", "deep.toml", "-e", "print('ran')"], in: sandbox)
        #expect(inline.stderr.contains("deep.toml:2: tables and arrays are nested more than 100 levels deep"), "\(inline)")
        try sandbox.write("deep.toml", "[store]\nx" + String(repeating: ".a", count: 98) + " = 1\n")
        let allowed = try await crescent(["--config", "deep.toml", "-e", "print('ran')"], in: sandbox)
        #expect(allowed.stdout == "ran\n" && allowed.stderrShowsNoCrash, "\(allowed)")
    }

    /// Found by fuzzing the config file: a table name starting with a character TOML does not
    /// allow there (`[café]`, a control character) made the TOML parser assert.
    @Test func aTableNameStartingWithAForbiddenCharacterIsAnErrorNotACrash() async throws {
        let sandbox = try Sandbox()
        let cases: [(text: String, found: String)] = [("[\u{1}", "U+1"), ("[café]\n", "c"), ("[é]\n", "é"), ("[[ \u{7F}x]]\n", "U+7F"), ("[\u{369}]\n", "U+369"),
                                                      ("# note\n[store]\nurl = \"a\"\n\n[\u{202E}x]\n", "\u{202E}")]
        for (text, found) in cases {
            try sandbox.write("bad.toml", text)
            let result = try await crescent(["--config", "bad.toml", "-e", "print('ran')"], in: sandbox)
            #expect(result.stderrShowsNoCrash && !result.killedBySignal, "\(text.debugDescription): \(result)")
            if found != "c" {
                #expect(result.stderr.contains("a table name cannot start with '\(found)'"), "\(text.debugDescription): \(result)")
            }
        }
        // Brackets inside values and strings are not headers.
        try sandbox.write("good.toml", "[store]\nx = [\n  [1, 2],\n  [+3],\n]\ny = \"\"\"\n[é\n\"\"\"\n")
        let good = try await crescent(["--config", "good.toml", "-e", "print('ran')"], in: sandbox)
        #expect(good.stdout == "ran\n" && good.stderrShowsNoCrash, "\(good)")
    }

    /// Found by fuzzing the config file: an array closed by a brace inside an inline table
    /// (`[1, {a = [}]`) made the TOML parser the host used then abort on an assertion, in debug
    /// and release builds alike. The host's own reader reports it, and every malformed file, as
    /// `file:line`.
    @Test func aMalformedConfigIsAnErrorWithItsLineNotAnAbort() async throws {
        let sandbox = try Sandbox()
        let cases: [(text: String, message: String)] = [
            ("[feeds]\nintervStringal = 1e16\nmin_ilterval = -0\n[locaton]\nx = [1, {a = [}]\n[http]\ntimmout = \"soon\"\n",
             "bad.toml:5: expected a value, found '}'"),
            ("x = [}\n", "bad.toml:1: expected a value, found '}'"),
            ("[[[x]]]\n", "bad.toml:1: a table name cannot start with '['"),
            ("[store]\npath = \"a\"\npath = \"b\"\n", "bad.toml:3: the key 'path' is defined twice"),
        ]
        for (text, message) in cases {
            try sandbox.write("bad.toml", text)
            let result = try await crescent(["--config", "bad.toml", "-e", "print('ran')"], in: sandbox)
            #expect(result.stderrShowsNoCrash && !result.killedBySignal, "\(text.debugDescription): \(result)")
            #expect(result.stderr.contains(message) && result.stdout.isEmpty, "\(text.debugDescription): \(result)")
        }
        // Bytes that are not UTF-8 (a surrogate's encoding) are refused, not replaced.
        try Data(Array("[store]\n# U+D800: ".utf8) + [0xED, 0xA0, 0x80, 0x0A]).write(to: URL(fileURLWithPath: sandbox.path + "/bad.toml"))
        let bytes = try await crescent(["--config", "bad.toml", "-e", "print('ran')"], in: sandbox)
        #expect(bytes.stderr.contains("bad.toml:2: the file is not valid UTF-8") && bytes.stdout.isEmpty, "\(bytes)")
    }

    @Test func foreignUserdataGivenToTheBridgeIsRefusedNotTrusted() async throws {
        let result = try await runScript("""
            local mt = debug.getmetatable(services.store)
            mt.__gc(io.stdout)                                   -- ignored: not one of ours
            io.stdout:write("stdout still works\\n")
            local f = io.tmpfile()
            debug.setmetatable(f, mt)                            -- a file dressed as the store
            -- A read goes through the metatable's own cache table: it yields the real store's
            -- value or nothing, never anything read from the file's memory.
            local ok, path = pcall(function() return f.path end)
            print(not ok or path == nil or path == services.store.path)
            print(pcall(function() return f:collection("x") end))
            f = nil
            collectgarbage() collectgarbage()
            local call = services.store.collection
            debug.setupvalue(call, 1, io.stdout)                 -- a replaced trampoline upvalue
            print(pcall(call, services.store, "x"))
            print("alive")
            """)
        #expect(result.stdoutLines.first == "stdout still works", "\(result)")
        #expect(result.stdoutLines.last == "alive", "\(result)")
        #expect(result.stdoutLines.dropFirst().dropLast().allSatisfy { $0.hasPrefix("false") || $0 == "true" }, "\(result)")
        #expect(result.stderrShowsNoCrash && !result.killedBySignal, "\(result)")
    }
}
