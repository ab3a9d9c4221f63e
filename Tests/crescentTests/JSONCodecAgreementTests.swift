import Foundation
import Testing

/// One JSON codec: the same values through every path that writes JSON — `json.encode`, the store
/// (the record's JSON as written in the SQLite file), `--ui json`, a remote `eval --json` over a
/// real Unix socket and the `event` notification a remote `on` subscriber gets for a posted
/// payload — give the same text, or are refused with the same error (the same place and problem;
/// each path words the rest for its caller: an event the payload of which JSON cannot hold comes
/// with `error` instead of `payload`). The one difference is the store's own rule:
/// it refuses a NUL character, which PostgreSQL cannot store.
@Suite struct JSONCodecAgreementTests {
    /// What a path gave: the JSON text of `{ v = VALUE }`, or the error's place and problem
    /// (`.v is NaN`).
    enum Answer: Equatable, CustomStringConvertible {
        case text(String)
        case error(String)

        var description: String {
            switch self {
            case .text(let text): "text \(text)"
            case .error(let problem): "error \(problem)"
            }
        }

        /// `.v.me is a table that contains itself` from any path's message (`json.encode:
        /// value.v.me is ...: JSON values cannot ...`, `invalid_argument: record.v.me ...`).
        static func error(message: String) -> Answer {
            let line = message.split(separator: "\n").first.map(String.init) ?? message
            guard let start = line.range(of: ".v") else { return .error(line) }
            let problem = line[start.lowerBound...]
            return .error(String(problem.range(of: ": ").map { problem[..<$0.lowerBound] } ?? problem))
        }
    }

    /// Defines what the values below use, in every path's chunk.
    static let helpers = """
        local function deep(n) local t = {} local c = t for _ = 2, n do c.a = {} c = c.a end return t end
        local function cycle() local t = {} t.me = t return t end
        """

    /// Nested `{"a":` n - 1 times around `[]`: `deep(n)`'s JSON.
    static func deepText(_ levels: Int) -> String {
        String(repeating: "{\"a\":", count: levels - 1) + "[]" + String(repeating: "}", count: levels - 1)
    }

    /// The values (Lua expressions) and what every path must give for `{ v = VALUE }`.
    static let cases: [(name: String, lua: String, expected: Answer)] = [
        ("nested tables", #"{ a = { b = { 1, 2.5, "x" } }, t = true }"#, .text(#"{"v":{"a":{"b":[1,2.5,"x"]},"t":true}}"#)),
        ("empty table", "{}", .text(#"{"v":[]}"#)),
        ("empty table marked object", "json.object()", .text(#"{"v":{}}"#)),
        ("empty table marked array", "json.array()", .text(#"{"v":[]}"#)),
        ("json.null", "json.null", .text(#"{"v":null}"#)),
        ("json.null in an array", "{ 1, json.null, 3 }", .text(#"{"v":[1,null,3]}"#)),
        ("NaN", "0/0", .error(".v is NaN")),
        ("infinity", "math.huge", .error(".v is inf")),
        ("minus infinity", "-math.huge", .error(".v is -inf")),
        ("minus zero", "-0.0", .text(#"{"v":-0.0}"#)),
        ("largest integer", "math.maxinteger", .text(#"{"v":9223372036854775807}"#)),
        ("smallest integer", "math.mininteger", .text(#"{"v":-9223372036854775808}"#)),
        ("2^53+1 as an integer", "(1 << 53) + 1", .text(#"{"v":9007199254740993}"#)),
        ("2^53+1 as a float", "2.0^53 + 1", .text(#"{"v":9007199254740992.0}"#)),
        ("a float of 17 digits", "0.1 + 0.2", .text(#"{"v":0.30000000000000004}"#)),
        ("a whole float", "3.0", .text(#"{"v":3.0}"#)),
        ("a large float", "1e300", .text(#"{"v":1e+300}"#)),
        ("invalid UTF-8", #""ok\xff""#, .error(".v is a string that is not valid UTF-8")),
        ("embedded NUL", #""a\0b""#, .text(#"{"v":"a\u0000b"}"#)),
        ("control characters", #""\1\31\n\t\"\\""#, .text(#"{"v":"\u0001\u001f\n\t\"\\"}"#)),
        ("text beyond ASCII", #""h\u{e9}llo \u{2603} \u{1F600}""#, .text("{\"v\":\"h\u{e9}llo \u{2603} \u{1F600}\"}")),
        ("nesting at the limit", "deep(99)", .text("{\"v\":" + deepText(99) + "}")),
        ("nesting beyond the limit", "deep(100)", .error(".v.a.a.a…(92 more)….a.a.a.a is nested too deeply (more than 100 tables)")),
        ("a cycle", "cycle()", .error(".v.me is a table that contains itself")),
        ("a function", "print", .error(".v is a function")),
        ("userdata", "io.stdout", .error(".v is a FILE*")),
        ("a sparse array", "{ 1, nil, 3 }", .error(".v has a hole at [2]")),
        ("mixed keys", "{ 1, a = 2 }", .error(".v mixes array items and named fields")),
        ("a float key", "{ [1.5] = 1 }", .error(".v has a number key")),
        ("a __tojson value", "setmetatable({}, { __tojson = function() return { z = 1 } end })", .text(#"{"v":{"z":1}}"#)),
        ("a __tojson inside an array", "{ 1, setmetatable({}, { __tojson = function() return 0.5 end }) }", .text(#"{"v":[1,0.5]}"#)),
        ("a __tojson that raises", #"setmetatable({}, { __tojson = function() error("must fail", 0) end })"#,
         .error(".v has a __tojson that raised an error")),
        ("a __tojson that is no function", #"setmetatable({}, { __tojson = "x" })"#,
         .error(".v has a __tojson that is a string")),
        ("a mark the contents contradict", #"setmetatable({ 1, 2 }, { __jsontype = "object" })"#,
         .error(".v is marked object (json.object, decoded JSON or its __jsontype) but holds array items")),
        ("an unknown shape", #"setmetatable({}, { __jsontype = "bogus" })"#, .error(#".v has __jsontype "bogus""#)),
    ]

    /// The store refuses a NUL character (PostgreSQL cannot store it): its one rule of its own.
    static let storeOnly: [String: Answer] = ["embedded NUL": .error(".v has a string with a NUL character (\\0)")]

    /// `--ui json` writes the value inside its line's own objects (`{"controller", "view":
    /// {"pairs": {"v": ...}}}`), and the line as a whole keeps the one limit, so that any reader
    /// using it (`view_json()`, a remote `view`, `json.decode`) reads the line back: a value at
    /// the limit is refused there, naming the place, on every view path alike.
    static let uiJSONOnly: [String: Answer] = [
        "nesting at the limit": .error(".v.a.a…(91 more)….a.a.a.a is nested too deeply (more than 100 tables)"),
    ]

    @Test func everyPathWritesTheSameJSONOrRefusesWithTheSameError() async throws {
        let encoded = try await encodedAndStored()
        let viewed = try await shownWithUIJSON()
        let evaluated = try await evaluatedRemotely()
        let posted = try await postedToASubscriber()
        for (name, _, expected) in Self.cases {
            #expect(encoded.encode[name] == expected, "json.encode, \(name)")
            #expect(encoded.store[name] == (Self.storeOnly[name] ?? expected), "the store, \(name)")
            #expect(viewed[name] == (Self.uiJSONOnly[name] ?? expected), "--ui json, \(name)")
            #expect(evaluated[name] == expected, "eval --json, \(name)")
            #expect(posted[name] == expected, "a remote on's event, \(name)")
        }
    }

    /// `json.encode` of each value, and the store's record: the JSON in the SQLite file, or the
    /// error `add` gave.
    private func encodedAndStored() async throws -> (encode: [String: Answer], store: [String: Answer]) {
        let sandbox = try Sandbox()
        var script = Self.helpers + "\nlocal cases = {\n"
        for (index, entry) in Self.cases.enumerated() { script += "  [\(index + 1)] = function() return \(entry.lua) end,\n" }
        script += """
            }
            task(function()
              for i = 1, #cases do
                local record = { v = cases[i]() }
                local ok, text = pcall(json.encode, record)
                print(i .. "\\tencode\\t" .. (ok and "text\\t" or "error\\t") .. text)
                local collection = services.store:collection("case" .. i)
                local called, added, err = pcall(collection.add, collection, record)
                if not called then print(i .. "\\tstore\\terror\\t" .. tostring(added))
                elseif err then print(i .. "\\tstore\\terror\\t" .. tostring(err)) end
              end
            end)
            """
        try sandbox.write("script.lua", script)
        let run = try await crescent(["--data-dir", "data", "script.lua"], in: sandbox, timeLimit: 60)
        #expect(run.status == 0 && !run.timedOut, "\(run)")
        var encode: [String: Answer] = [:], store: [String: Answer] = [:]
        for line in run.stdout.split(separator: "\n", omittingEmptySubsequences: true) {
            let parts = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 4, let index = Int(parts[0]), Self.cases.indices.contains(index - 1) else { continue }
            let answer = parts[2] == "text" ? Answer.text(parts[3]) : Answer.error(message: parts[3])
            if parts[1] == "encode" { encode[Self.cases[index - 1].name] = answer } else { store[Self.cases[index - 1].name] = answer }
        }
        let database = sandbox.path + "/data/store.sqlite"
        let rows = try toolOutput(["/usr/bin/sqlite3", "-separator", "\t", database, "SELECT collection, data FROM records"])
        for line in rows.split(separator: "\n", omittingEmptySubsequences: true) {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            guard parts.count == 2, let index = Int(parts[0].dropFirst("case".count)), Self.cases.indices.contains(index - 1) else { continue }
            store[Self.cases[index - 1].name] = .text(parts[1])
        }
        return (encode, store)
    }

    /// The `pairs` of a `view.keyvalue { pairs = { v = VALUE } }` as `--ui json` prints it, or the
    /// error of the render (or of making the view).
    private func shownWithUIJSON() async throws -> [String: Answer] {
        var answers: [String: Answer] = [:]
        for (name, lua, _) in Self.cases {
            let sandbox = try Sandbox()
            try sandbox.write("script.lua", Self.helpers + """

                local Shown = controller("Shown")
                function Shown:loadView() return view.keyvalue { pairs = { v = \(lua) } } end
                app.push(Shown)
                timer.after(0.2, function() app.exit(0) end)
                """)
            let run = try await crescent(["--ui", "json", "script.lua"], in: sandbox, stdin: "", timeLimit: 30)
            let prefix = #"{"controller":"Shown","view":{"kind":"keyvalue","pairs":"#
            if let line = run.stdout.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }), line.hasSuffix("}}") {
                answers[name] = .text(String(line.dropFirst(prefix.count).dropLast(2)))
            } else if let line = run.stdout.split(separator: "\n").first(where: { $0.contains(#""error":"#) }),
                      let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let message = object["error"] as? String {
                answers[name] = .error(message: message)
            } else {
                answers[name] = .error(message: run.stderr)
            }
        }
        return answers
    }

    /// `crescent eval --json HOST 'return { v = VALUE }'` against a host listening on its socket.
    private func evaluatedRemotely() async throws -> [String: Answer] {
        let sandbox = try Sandbox()
        try sandbox.write("host.lua", "timer.every(60, function() end)\n")
        let host = try await ListeningHost(script: "host.lua", name: "agree", sandbox: sandbox)
        var answers: [String: Answer] = [:]
        for (name, lua, _) in Self.cases {
            let run = try await host.crescentCommand(["eval", "agree", "--json", Self.helpers + "\nreturn { v = \(lua) }"])
            answers[name] = run.status == 0 ? .text(run.stdout.trimmingCharacters(in: .newlines)) : .error(message: run.stderr)
        }
        _ = await host.stop()
        return answers
    }

    /// `post("agree.case", { v = VALUE })` in a host, and the `event` notification a client that
    /// subscribed with `on` gets: the payload's text as it came on the wire, or its `error`. After
    /// every case the host still answers (a payload it cannot send ends nothing).
    private func postedToASubscriber() async throws -> [String: Answer] {
        let sandbox = try Sandbox()
        try sandbox.write("host.lua", "timer.every(60, function() end)\n")
        let host = try await ListeningHost(script: "host.lua", name: "posts", sandbox: sandbox)
        let client = try RemoteTestClient(path: host.socketPath)
        let subscribed = client.call("on", ["event": "agree.case"])
        #expect(subscribed?["result"] != nil, "\(String(describing: subscribed))")
        var answers: [String: Answer] = [:]
        for (name, lua, _) in Self.cases {
            // The event may come before or after the eval's answer: both are read off the wire.
            let id = client.request("eval", ["code": Self.helpers + "\npost('agree.case', { v = \(lua) })"])
            var event: String?, answered = false
            let deadline = Date().addingTimeInterval(15)
            while event == nil || !answered, let line = client.nextLine(until: deadline) {
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                if object?["id"] as? Int == id {
                    answered = true
                    #expect(object?["result"] != nil, "\(name): \(line)")
                } else if object?["method"] as? String == "event" {
                    event = line
                }
            }
            guard let line = event else {
                answers[name] = .error("no event notification")
                continue
            }
            if let start = line.range(of: #""payload":"#), let end = line.range(of: #","subscription":"#, options: .backwards) {
                answers[name] = .text(String(line[start.upperBound..<end.lowerBound]))
            } else if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let params = object["params"] as? [String: Any], let message = params["error"] as? String {
                #expect(params["name"] as? String == "agree.case", "\(line)")
                answers[name] = .error(message: message)
            } else {
                answers[name] = .error(line)
            }
        }
        let alive = client.call("eval", ["code": "return 1 + 1"])?["result"] as? [String: Any]
        #expect(alive?["text"] as? String == "2", "the host answers after every payload")
        _ = await host.stop()
        return answers
    }

    /// The standard output of a tool the test reads files with.
    private func toolOutput(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(arguments)")
        return String(decoding: data, as: UTF8.self)
    }
}
