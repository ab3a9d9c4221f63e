import Foundation
import Testing

/// The one JSON rule where the codec agreement table does not reach: the shared metatables of data
/// models and of the json marks, marks the contents contradict, `find` queries, `fake.http` bodies,
/// `__tojson` errors' wording, views nested near the limit on every path, and how numbers that
/// underflow or indents below zero are read. Each runs the built binary on a real script.
@Suite struct JSONRuleEverywhereTests {
    /// Runs `script` with `crescent --data-dir :memory:`; its standard output.
    private func run(_ script: String, arguments: [String] = [], stdin: String? = nil) async throws -> RunResult {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", script)
        return try await crescent(["--data-dir", ":memory:"] + arguments + ["script.lua"], in: sandbox, stdin: stdin, timeLimit: 30)
    }

    @Test func aModelsSharedMetatableIsHandedOutAsACopyThatChangesNoModel() async throws {
        // A service error is a data model: every error model shares one metatable.
        let result = try await run("""
            task(function()
              local c = services.store:collection("m")
              local _, first = c:add({ v = 0/0 })
              local mt = debug.getmetatable(first)
              print("plain", getmetatable(first))
              print("one copy", debug.getmetatable(first) == mt, mt.__name)
              mt.__index = function() return "hacked" end
              mt.__newindex = nil
              local _, second = c:add({ v = 0/0 })
              print("reads", first.code, second.code)
              print("assign", (pcall(function() second.code = "x" end)))
              print("same", first == first, second.code == "invalid_argument")
              local forged = debug.setmetatable({ code = "FORGED" }, mt)
              print("forged", json.encode(forged))
            end)
            """)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("plain\terror"), "\(result)")
        #expect(lines.contains("one copy\ttrue\terror"), "\(result)")
        #expect(lines.contains("reads\tinvalid_argument\tinvalid_argument"), "\(result)")
        #expect(lines.contains("assign\tfalse"), "\(result)")
        #expect(lines.contains("same\ttrue\ttrue"), "\(result)")
        // The copy holds no model marker: a table given it is a plain table, not a forged model.
        #expect(lines.contains("forged\t" + #"{"code":"FORGED"}"#), "\(result)")
    }

    @Test func theJSONMarksCannotBeChangedByScripts() async throws {
        let result = try await run("""
            print("write", (pcall(function() getmetatable(json.array({})).__jsontype = "object" end)))
            print("plain", getmetatable(json.decode("[]")).__jsontype, getmetatable(json.object()).__jsontype)
            debug.getmetatable(json.array({})).__jsontype = "object"
            debug.getmetatable(json.object()).__index = { hung = true }
            print("encode", json.encode({ t = json.decode("[]"), u = json.array({}), o = json.decode("{}") }))
            print("no method", json.decode("{}").hung)
            local Class = { __index = { kind = function() return "mine" end } }
            local t = setmetatable(json.decode('{"a":1}'), Class)
            print("class", getmetatable(t) == Class, t:kind())
            print("remark", json.encode(json.object(json.decode("[]"))))
            """)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("write\tfalse"), "\(result)")
        #expect(lines.contains("plain\tarray\tobject"), "\(result)")
        #expect(lines.contains("encode\t" + #"{"o":{},"t":[],"u":[]}"#), "\(result)")
        #expect(lines.contains("no method\tnil"), "\(result)")
        #expect(lines.contains("class\ttrue\tmine"), "\(result)")
        #expect(lines.contains("remark\t{}"), "\(result)")
    }

    @Test func theStoreKeepsKeysHoldingNullAsARemoteObserverSeesThem() async throws {
        let result = try await run(#"""
            task(function()
              local c = services.store:collection("n")
              c:add({ name = "n", a = json.null, d = json.decode('{"x":null,"e":[]}') })
              local got = c:get(1)
              print("get", rawequal(got.a, json.null), json.encode(got))
              print("items", json.encode(c.items[1]))
              local found = c:find({ name = "n" })
              print("find", json.encode(found[1]))
              print("page", json.encode(c:page(0, 1)[1]))
            end)
            """#)
        #expect(result.status == 0, "\(result)")
        let record = #"{"a":null,"d":{"e":[],"x":null},"id":1,"name":"n"}"#
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("get\ttrue\t" + record), "\(result)")
        #expect(lines.contains("items\t" + record), "\(result)")
        #expect(lines.contains("find\t" + record), "\(result)")
        #expect(lines.contains("page\t" + record), "\(result)")
    }

    @Test func aRemoteObserverAndTheLuaReaderSeeOneRecord() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("host.lua", """
            services.store:collection("n"):add({ name = "n", a = json.null, o = json.object() }, function() end)
            timer.every(60, function() end)
            """)
        let host = try await ListeningHost(script: "host.lua", name: "nulls", options: ["--data-dir", ":memory:"], sandbox: sandbox)
        let client = try RemoteTestClient(path: host.socketPath)
        let read = client.call("eval", ["code": #"return json.encode(services.store:collection("n").items)"#])?["result"] as? [String: Any]
        // The first `changed` may come before or after the answer: both are read off the wire.
        let id = client.request("observe", ["service": #"services.store:collection("n")"#, "key": "items"])
        var changed: [String: Any]?, answered = false
        let deadline = Date().addingTimeInterval(15)
        while changed == nil || !answered, let message = client.next(until: deadline) {
            if message["id"] as? Int == id {
                answered = true
                #expect(message["result"] != nil, "\(message)")
            } else if message["method"] as? String == "changed" {
                changed = message["params"] as? [String: Any]
            }
        }
        let seen = (changed?["value"] as? [[String: Any]])?.first
        #expect(seen?.keys.sorted() == ["a", "id", "name", "o"], "\(String(describing: changed))")
        #expect(seen?["a"] is NSNull, "\(String(describing: changed))")
        #expect(read?["value"] as? String == #"[{"a":null,"id":1,"name":"n","o":{}}]"#, "\(String(describing: read))")
        _ = await host.stop()
    }

    @Test func aMarkTheContentsContradictIsAnError() async throws {
        let result = try await run("""
            print(pcall(json.object, { 1, 2 }))
            print(pcall(json.array, { x = 1 }))
            local t = json.object()
            t[1] = "item"
            print(pcall(json.encode, { a = t }))
            task(function()
              local _, err = services.store:collection("c"):add({ a = t })
              print(err)
            end)
            """)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("false\t") && $0.contains("json.object: the table holds array items") }, "\(result)")
        #expect(lines.contains { $0.hasPrefix("false\t") && $0.contains("json.array: the table holds named fields") }, "\(result)")
        #expect(lines.contains { $0.contains("json.encode: value.a is marked object") && $0.contains("holds array items") }, "\(result)")
        #expect(lines.contains { $0.contains("invalid_argument: record.a is marked object") }, "\(result)")
    }

    @Test func aFindQueryFollowsTheRuleOfRecords() async throws {
        let result = try await run(#"""
            task(function()
              local c = services.store:collection("q")
              c:add({ a = 1 })
              for _, query in ipairs({ { a = 0/0 }, { a = "\255" }, { a = 1 } }) do
                local found, err = c:find(query)
                print(found and #found, err)
              end
            end)
            """#)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result)")
        #expect(lines.first?.contains("invalid_argument: query.a is NaN") == true, "\(result)")
        #expect(lines.dropFirst().first?.contains("invalid_argument: query.a is a string that is not valid UTF-8") == true, "\(result)")
        #expect(lines.last == "1\tnil", "\(result)")
    }

    @Test func aFakeHTTPBodyJSONCannotHoldIsRefusedAtFakeHTTP() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/body_spec.lua", #"""
            describe("fake.http", function()
              it("refuses a body JSON cannot hold, naming the route", function()
                local ok, err = pcall(fake.http, { ["GET http://127.0.0.1/x"] = { status = 200, body = { a = 0/0 } } })
                assert.is_false(ok)
                assert.matches("fake.http: route GET http://127.0.0.1/x: body.a is NaN", err, 1, true)
                ok, err = pcall(fake.http, { ["GET http://127.0.0.1/y"] = { body = { "\255" } } })
                assert.is_false(ok)
                assert.matches("body[1] is a string that is not valid UTF-8", err, 1, true)
              end)
            end)
            """#)
        let result = try await crescent(["test", "spec/body_spec.lua"], in: sandbox, timeLimit: 30)
        #expect(result.status == 0, "\(result)")
    }

    @Test func aToJSONThatIsNoFunctionOrRaisesIsNamedAtTheUsersCall() async throws {
        let result = try await run("""
            print(pcall(json.encode, { p = setmetatable({}, { __tojson = "x" }) }))
            print(pcall(json.encode, { q = { setmetatable({}, { __tojson = function() error("must fail", 0) end }) } }))
            print(pcall(json.encode, {}, { indent = -5 }))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(!result.stdout.contains("[crescent"), "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "false\tjson.encode: value.p has a __tojson that is a string: __tojson must be a function(value)", "\(result)")
        #expect(lines.dropFirst().first == "false\tjson.encode: value.q[1] has a __tojson that raised an error: must fail", "\(result)")
        #expect(lines.last?.hasPrefix("false\tjson.encode: opts.indent must be a number of spaces from 0 up") == true, "\(result)")
    }

    @Test func numbersReadAsTheNearestDouble() async throws {
        // As Python's json, JavaScript's JSON.parse and lua-cjson: an underflow
        // is the nearest double (zero, signed); an overflow would be infinity and is refused.
        let result = try await run("""
            local tiny, minus = json.decode("1e-400"), json.decode("-1e-400")
            print(math.type(tiny), tiny, 1 / minus)
            print(pcall(json.decode, "1e400"))
            """)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "float\t0.0\t-inf", "\(result)")
        #expect(lines.last?.hasPrefix("false\t") == true, "\(result)")
    }

    /// A keyvalue view at the root whose `x` nests `levels` arrays: inside the `--ui json` line
    /// (`{"controller", "view": {"pairs": {"x": ...}}}`) that is `levels + 3` deep.
    private static func deepView(_ levels: Int) -> String {
        """
        local function nest(n) local t = {} for _ = 2, n do t = { t } end return t end
        local Deep = controller("Deep")
        function Deep:loadView() return view.keyvalue { pairs = { x = nest(\(levels)) } } end
        app.push(Deep)
        """
    }

    @Test func aViewNestedPastTheLimitGetsOneAnswerOnEveryPath() async throws {
        // --ui json: 100 levels print the view; 101 print the error line naming the place.
        let fits = try await run(Self.deepView(97) + "\ntimer.after(0.2, function() app.exit(0) end)", arguments: ["--ui", "json"], stdin: "")
        #expect(fits.stdout.contains(#"{"controller":"Deep","view":{"kind":"keyvalue","pairs":{"x":[[["#), "\(fits)")
        let deep = try await run(Self.deepView(98) + "\ntimer.after(0.2, function() app.exit(0) end)", arguments: ["--ui", "json"], stdin: "")
        let line = deep.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(line.hasPrefix(#"{"controller":"Deep","error":"view.pairs.x"#) && line.contains("is nested too deeply"), "\(deep)")

        // view_json() in a test says the same.
        let sandbox = try Sandbox()
        try sandbox.write("app.lua", Self.deepView(98))
        try sandbox.write("spec/deep_spec.lua", """
            describe("a deep view", function()
              it("is refused by view_json as by --ui json", function()
                script("app.lua")
                local ok, err = pcall(view_json)
                assert.is_false(ok)
                assert.matches("view_json(): view.pairs.x", err, 1, true)
                assert.matches("is nested too deeply", err, 1, true)
              end)
            end)
            """)
        let tested = try await crescent(["test", "spec/deep_spec.lua"], in: sandbox, timeLimit: 30)
        #expect(tested.status == 0, "\(tested)")

        // A remote view: the same error, not a view of nulls as if no controller ran.
        let hostBox = try Sandbox()
        try hostBox.write("host.lua", Self.deepView(98) + "\ntimer.every(60, function() end)")
        let host = try await ListeningHost(script: "host.lua", name: "deep", options: ["--ui", "plain"], sandbox: hostBox)
        let client = try RemoteTestClient(path: host.socketPath)
        let answer = client.call("view", ["format": "json"])?["result"] as? [String: Any]
        #expect(answer?["controller"] as? String == "Deep", "\(String(describing: answer))")
        #expect((answer?["error"] as? String)?.hasPrefix("view.pairs.x") == true, "\(String(describing: answer))")
        _ = await host.stop()
    }
}
