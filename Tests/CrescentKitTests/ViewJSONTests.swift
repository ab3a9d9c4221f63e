@testable import CrescentKit
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--ui json` (issue 4): one JSON object per render, `{"controller": NAME, "view": TREE}`, where
/// the tree has each component's `kind`, `id`, fields, `children` and a slot's `content`.
/// Parsed back with Foundation's JSONSerialization.
@Suite struct ViewJSONTests {
    // MARK: Through the binary

    static let dashboard = """
        local Child = controller("Child")
        function Child:loadView() return view.text{ id = "inner", text = "child view" } end

        local Dashboard = controller("Dashboard")
        function Dashboard:loadView()
          return view.stack{ gap = 1,
            view.text{ id = "title", text = "Orders \\"today\\"\\n日本 👍🏽" },
            view.list{ id = "todo", items = { "pack", "ship" }, marker = "*" },
            view.table{ id = "orders", columns = { "id", { key = "total", title = "Total", align = "right" } },
                        rows = { { id = 1, total = 9.5 }, { id = 2, total = 12 } } },
            view.keyvalue{ id = "info", pairs = { open = true, count = 2 } },
            view.progress{ id = "bar", value = 1, total = 4, label = "sync" },
            view.row{ view.text("left"), view.text("right") },
            view.slot{ id = "detail" },
            view.template{ id = "tpl", source = "{{n}} orders", data = { n = 2 } },
          }
        end
        function Dashboard:viewDidLoad() self:addChild(Child, "detail") end
        function Dashboard:viewDidAppear()
          self:after(0.05, function()
            self.view.orders:set(2, "total", 15)
            self.view.bar.value = 2
            self.view.title.text = "Orders"
          end)
          self:after(0.1, function()
            self.view.todo:update({ "ship" })
            self.view.tpl:update({ n = 1 })
          end)
          self:after(0.15, function() app.exit(0) end)
        end
        app.push(Dashboard)
        """

    @Test func everyLineIsOneJSONObjectWithTheControllerAndTheViewTree() throws {
        let result = try runCrescentBinary(["--ui", "json", "script.lua"], files: ["script.lua": Self.dashboard])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr == "", "\(result)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.last == "", "the output ends with a newline")
        let objects = try lines.dropLast().map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "\(line)")
        }
        #expect(objects.count == 3, "one object per render: the first view and two updates\n\(result.stdout)")
        for object in objects {
            #expect(Set(object.keys) == ["controller", "view"])
            #expect(object["controller"] as? String == "Dashboard")
        }
        guard objects.count == 3 else { return }

        let first = try #require(objects[0]["view"] as? [String: Any])
        #expect(first["kind"] as? String == "stack")
        #expect(first["gap"] as? Int == 1)
        let children = try #require(first["children"] as? [[String: Any]])
        #expect(children.map { $0["kind"] as? String } == ["text", "list", "table", "keyvalue", "progress", "row", "slot", "template"])
        #expect(children.map { $0["id"] as? String } == ["title", "todo", "orders", "info", "bar", nil, "detail", "tpl"])

        #expect(children[0]["text"] as? String == "Orders \"today\"\n日本 👍🏽", "strings survive escaping")
        #expect(children[1]["items"] as? [String] == ["pack", "ship"])
        #expect(children[1]["marker"] as? String == "*")
        let rows = try #require(children[2]["rows"] as? [[String: Any]])
        #expect(rows.count == 2)
        #expect(rows.first?["id"] as? Int == 1)
        #expect(rows.first?["total"] as? Double == 9.5)
        let columns = try #require(children[2]["columns"] as? [Any])
        #expect(columns.first as? String == "id")
        #expect((columns.last as? [String: Any])?["align"] as? String == "right")
        let info = try #require(children[3]["pairs"] as? [String: Any])
        #expect(info["open"] as? Bool == true)
        #expect(info["count"] as? Int == 2)
        #expect(children[4]["value"] as? Int == 1)
        #expect(children[4]["total"] as? Int == 4)
        #expect(children[4]["label"] as? String == "sync")
        let rowChildren = try #require(children[5]["children"] as? [[String: Any]])
        #expect(rowChildren.map { $0["text"] as? String } == ["left", "right"])
        let content = try #require(children[6]["content"] as? [String: Any], "the slot's content is the child's view")
        #expect(content["kind"] as? String == "text")
        #expect(content["id"] as? String == "inner")
        #expect(content["text"] as? String == "child view")
        #expect(children[7]["source"] as? String == "{{n}} orders")
        #expect((children[7]["data"] as? [String: Any])?["n"] as? Int == 2)

        // The second render: one cell, the bar and the title changed in one turn.
        let second = try #require((objects[1]["view"] as? [String: Any])?["children"] as? [[String: Any]])
        #expect(second[0]["text"] as? String == "Orders")
        #expect((second[2]["rows"] as? [[String: Any]])?.last?["total"] as? Int == 15)
        #expect(second[4]["value"] as? Int == 2)
        #expect(second[1]["items"] as? [String] == ["pack", "ship"], "unchanged until the next turn")
        // The third.
        let third = try #require((objects[2]["view"] as? [String: Any])?["children"] as? [[String: Any]])
        #expect(third[1]["items"] as? [String] == ["ship"])
        #expect((third[7]["data"] as? [String: Any])?["n"] as? Int == 1)
    }

    @Test func plainModeOfTheSameScriptPrintsEachRenderAtCOLUMNS() throws {
        let result = try runCrescentBinary(["--ui", "plain", "script.lua"], files: ["script.lua": Self.dashboard],
                                     environment: ["COLUMNS": "40"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr == "", "\(result)")
        func render(title: [String], todo: [String], total2: String, bar: String, orders: Int) -> [String] {
            title + [""] + todo + ["", "id  Total", "──  ─────", " 1    9.5", " 2  " + total2, "", "count  2", "open   true", "", bar, "",
                                   "left" + String(repeating: " ", count: 17) + "right", "", "child view", "", "\(orders) orders"]
        }
        // 40 columns: the bar gets 40 - "25%" - " sync" - 3 = 29 columns; the row's children 19 each.
        let first = render(title: ["Orders \"today\"", "日本 👍🏽"], todo: ["* pack", "* ship"], total2: "   12",
                           bar: "[#######----------------------] 25% sync", orders: 2)
        let second = render(title: ["Orders"], todo: ["* pack", "* ship"], total2: "   15",
                            bar: "[###############--------------] 50% sync", orders: 2)
        let third = render(title: ["Orders"], todo: ["* ship"], total2: "   15",
                           bar: "[###############--------------] 50% sync", orders: 1)
        #expect(result.stdout == renderText(first) + renderText(second) + renderText(third))
    }

    // MARK: In process

    @Test func theControllerNameFollowsTheTopController() throws {
        let test = try ViewTestHost(ui: .json)
        test.run("""
            local A = controller("Alpha")
            function A:loadView() return view.text("a") end
            local B = controller("Beta")
            function B:loadView() return view.text{ id = "b", text = "b" } end
            app.push(A)
            timer.after(1, function() app.push(B) end)
            timer.after(2, function() app.pop() end)
            """)
        test.settle()
        test.advance(seconds: 1)
        test.settle()
        test.advance(seconds: 1)
        test.settle()
        let objects = try jsonLines(test.stdout)
        #expect(objects.map { $0["controller"] as? String } == ["Alpha", "Beta", "Alpha"])
        #expect(objects.map { ($0["view"] as? [String: Any])?["text"] as? String } == ["a", "b", "a"])
        #expect((objects[1]["view"] as? [String: Any])?["id"] as? String == "b")
        #expect((objects[0]["view"] as? [String: Any])?["id"] == nil, "no id, no id key")
    }

    @Test func oneObjectPerTurnWhateverTheNumberOfUpdates() throws {
        let test = try ViewTestHost(ui: .json)
        test.show(#"view.stack{ view.text{ id = "t", text = "0" }, view.progress{ id = "p", value = 0 } }"#)
        #expect(test.turn("for i = 1, 10 do ctl.view.t.text = tostring(i) ctl.view.p.value = i / 10 end") == nil)
        let objects = try jsonLines(test.stdout)
        #expect(objects.count == 2)
        let last = try #require((objects.last?["view"] as? [String: Any])?["children"] as? [[String: Any]])
        #expect(last[0]["text"] as? String == "10")
        #expect(last[1]["value"] as? Double == 1.0)
    }

    @Test func stringsAndNumbersRoundTrip() throws {
        let test = try ViewTestHost(ui: .json)
        test.show(#"""
            view.keyvalue{ pairs = {
              quote = "say \"hi\"", slash = "a\\b/c", control = "tab\tbell\7nul\0end", newline = "1\n2\r3",
              unicode = "日本 👨‍👩‍👧 e\u{301}", int = 42, neg = -7, float = 2.5, big = 1e300, tiny = 1e-300,
              yes = true, no = false, list = { 1, "two", { three = 3 } },
            } }
            """#)
        #expect(test.stderr == "")
        let objects = try jsonLines(test.stdout)
        let pairs = try #require((objects.first?["view"] as? [String: Any])?["pairs"] as? [String: Any])
        #expect(pairs["quote"] as? String == "say \"hi\"")
        #expect(pairs["slash"] as? String == "a\\b/c")
        #expect(pairs["control"] as? String == "tab\tbell\u{7}nul\u{0}end")
        #expect(pairs["newline"] as? String == "1\n2\r3")
        #expect(pairs["unicode"] as? String == "日本 👨‍👩‍👧 e\u{301}")
        #expect(pairs["int"] as? Int == 42)
        #expect(pairs["neg"] as? Int == -7)
        #expect(pairs["float"] as? Double == 2.5)
        #expect(pairs["big"] as? Double == 1e300)
        #expect(pairs["tiny"] as? Double == 1e-300)
        #expect(pairs["yes"] as? Bool == true)
        #expect(pairs["no"] as? Bool == false)
        let list = try #require(pairs["list"] as? [Any])
        #expect(list.count == 3)
        #expect(list[0] as? Int == 1)
        #expect(list[1] as? String == "two")
        #expect((list[2] as? [String: Any])?["three"] as? Int == 3)
    }

    /// JSON's one rule: a render holding what JSON cannot (NaN, an infinity) is refused as
    /// `json.encode` refuses it, naming the place, instead of writing null.
    @Test func nonFiniteNumbersAreRefusedNamingThePlace() throws {
        let test = try ViewTestHost(ui: .json)
        test.show(#"view.keyvalue{ pairs = { nan = 0/0, inf = math.huge, ninf = -math.huge } }"#)
        let line = try #require(try jsonLines(test.stdout).first)
        #expect(line["view"] == nil)
        #expect(line["error"] as? String == "view.pairs.inf is inf: JSON has no NaN or infinity; give null, a string or a finite number instead",
                "\(test.stdout)")
    }

    @Test func tableRowsFollowSetAndApply() throws {
        let test = try ViewTestHost(ui: .json)
        test.show(#"view.table{ id = "t", columns = { "n", "q" }, rows = { { n = "a", q = 1 }, { n = "b", q = 2 } } }"#)
        #expect(test.turn(#"ctl.view.t:set(1, "q", 10)"#) == nil)
        #expect(test.turn(#"ctl.view.t:apply({ deleted = { 2 }, inserted = { 1 } }, { { n = "z", q = 0 }, { n = "a", q = 10 } })"#) == nil)
        let objects = try jsonLines(test.stdout)
        let rows = objects.map { (($0["view"] as? [String: Any])?["rows"] as? [[String: Any]])?.map { "\($0["n"] ?? "")=\($0["q"] ?? "")" } }
        #expect(rows == [["a=1", "b=2"], ["a=10", "b=2"], ["z=0", "a=10"]])
    }

    @Test func aClearedFieldLeavesTheObject() throws {
        let test = try ViewTestHost(ui: .json)
        test.show(#"view.progress{ id = "p", value = 1, label = "x" }"#)
        #expect(test.turn("ctl.view.p.label = nil") == nil)
        let objects = try jsonLines(test.stdout)
        let view = try #require(objects.last?["view"] as? [String: Any])
        do {
            #expect(view["label"] == nil, "\(view)")
        }
    }
}

// MARK: - Helpers

/// The JSON objects of `text`, one per line.
private func jsonLines(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { line in
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any], "\(line)")
    }
}

/// The outcome of one run of the `crescent` binary.
private struct ViewProcessResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "exit status \(status)\n--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)" }
}

/// Runs the `crescent` binary (`$CRESCENT_BIN`, else the one built next to the tests, else
/// `.build/debug/crescent`) with `arguments` in a fresh folder holding `files`; stdin is
/// /dev/null; killed after `timeLimit` seconds (recorded as a test failure).
private func runCrescentBinary(
    _ arguments: [String], files: [String: String], environment: [String: String] = [:],
    timeLimit: Double = 20, sourceLocation: SourceLocation = #_sourceLocation
) throws -> ViewProcessResult {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-view-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    for (name, text) in files {
        try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: viewTestsBinary)
    process.arguments = arguments
    process.currentDirectoryURL = folder
    var variables = ProcessInfo.processInfo.environment
    for name in ["NO_COLOR", "COLUMNS", "LUA_INIT", "LUA_INIT_5_4", "LUA_PATH", "LUA_PATH_5_4"] { variables[name] = nil }
    for (name, value) in environment { variables[name] = value }
    process.environment = variables
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let outputData = ViewLockedValue(Data()), errorData = ViewLockedValue(Data())
    let readers = [(output.fileHandleForReading, outputData), (errors.fileHandleForReading, errorData)].map { handle, sink in
        let thread = Thread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                sink.update { $0.append(chunk) }
            }
            sink.finish()
        }
        thread.start()
        return thread
    }
    _ = readers
    let deadline = Date().addingTimeInterval(timeLimit)
    while process.isRunning && Date() < deadline { usleep(2_000) }
    let timedOut = process.isRunning
    if timedOut {
        kill(process.processIdentifier, SIGKILL)
        Issue.record("crescent \(arguments) did not exit within \(timeLimit) s", sourceLocation: sourceLocation)
    }
    process.waitUntilExit()
    // A crash (a trap's SIGILL, SIGSEGV, SIGABRT) fails the test whatever it checks next.
    if !timedOut && process.terminationReason == .uncaughtSignal {
        Issue.record("crescent \(arguments) died by signal \(process.terminationStatus)", sourceLocation: sourceLocation)
    }
    let drain = Date().addingTimeInterval(2)
    while !(outputData.finished && errorData.finished) && Date() < drain { usleep(1_000) }
    return ViewProcessResult(status: process.terminationStatus,
                             stdout: String(decoding: outputData.value, as: UTF8.self),
                             stderr: String(decoding: errorData.value, as: UTF8.self))
}

/// The binary under test.
private let viewTestsBinary: String = {
    if let path = ProcessInfo.processInfo.environment["CRESCENT_BIN"], !path.isEmpty { return path }
    var candidates: [URL] = []
    if let executable = Bundle.main.executableURL {
        var folder = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(folder.appendingPathComponent("crescent"))
            folder = folder.deletingLastPathComponent()
        }
    }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    candidates.append(root.appendingPathComponent(".build/debug/crescent"))
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }?.path
        ?? root.appendingPathComponent(".build/debug/crescent").path
}()

/// A value shared with a reader thread.
private final class ViewLockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    private var ended = false
    init(_ value: Value) { stored = value }
    func update(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
    func finish() { lock.withLock { ended = true } }
    var finished: Bool { lock.withLock { ended } }
    var value: Value { lock.withLock { stored } }
}
