import CrescentKit
import Dispatch
import Foundation
import Model
import Services
import Synchronization
import Testing

/// Runs of scripts with the store and session on a real loop (their writes are Swift tasks).
typealias StoreScriptRun = RealLoopRun

extension RealLoopRun {
    /// The store's plugin alone, as `crescent` loads it.
    struct StorePlugin: Plugin {
        let name = "store"
        func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { try Store.make(context) }
    }

    /// A data folder with a `crescent.toml`; removed when the value goes away.
    final class DataFolder: Sendable {
        let path: String
        var configPath: String { path + "/crescent.toml" }

        /// - Parameter config: the config file's text (a cheap KDF and no failure delay by default).
        init(config: String = "[session]\nkdf_rounds = 1000\nfailure_delay = 0\n") throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-lua-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Runs `source` as `test.lua` with the store and session over `folder`.
    static func run(_ source: String, in folder: DataFolder, timeout: Double = 20) async -> RealLoopRun {
        var options = HostOptions()
        options.timeout = timeout
        options.dataDirectory = folder.path
        options.configPath = folder.configPath
        return await run(source, options: options, plugins: [StorePlugin()])
    }
}

@Suite struct StoreLuaTests {
    /// `inserted={1,2} deleted={} updated={} reload=false`.
    static let showChange = """
        local function list(t) local s = {} for i, v in ipairs(t) do s[i] = tostring(v) end return "{" .. table.concat(s, ",") .. "}" end
        local function show(cs)
          return "inserted=" .. list(cs.inserted) .. " deleted=" .. list(cs.deleted) .. " updated=" .. list(cs.updated) .. " reload=" .. tostring(cs.reload)
        end
        local function titles(c) local s = {} for i, r in ipairs(c.items) do s[i] = tostring(r.title) end return table.concat(s, ",") end

        """

    @Test func theSameNameGivesTheSameObject() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let run = await StoreScriptRun.run("""
            local store = services.store
            local a = store:collection("todo")
            print(rawequal(a, store:collection("todo")), rawequal(a, store:collection("other")))
            print(a.name, a.count, #a.items, tostring(a))
            print(pcall(function() a.count = 3 end))
            local ok, err = pcall(function() store:collection("") end)
            print(ok, err.code, tostring(err))
            print(store.path == "\(folder.path)/store.sqlite")
            """, in: folder)
        #expect(run.lines == [
            "true\tfalse",
            "todo\t0\t0\t<collection>",
            "false\ttest.lua:5: cannot set 'collection.count': its properties are read-only (its service updates them; see help(collection))",
            "false\tinvalid_argument\ttest.lua:6: store.collection: invalid_argument: a collection name must be 1 to 200 bytes long",
            "true",
        ], "\(run.stderr)")
        #expect(run.status == 0)
    }

    /// The same contract whether writes run in Swift tasks (the default) or on the loop.
    @Test(arguments: [false, true])
    func recordsWithCompletionsAndAwaitedInATask(writeOnLoop: Bool) async throws {
        let folder = try StoreScriptRun.DataFolder(config: "[store]\nwrite_on_loop = \(writeOnLoop)\n")
        let run = await StoreScriptRun.run(Self.showChange + """
            local todo = services.store:collection("todo")
            todo:add({ title = "a", done = false }, function(record, err)
              print("callback", record.title, math.type(record.id), err)
              task(function()
                local more = todo:add({ { title = "b", done = true }, { title = "c", done = false } })
                print("batch", #more, more[2].id == more[1].id + 1)
                print("get", todo:get(record.id).title)
                local updated = todo:update(record.id, { done = true, note = "x" })
                print("update", updated.title, updated.done, updated.note, updated.id == record.id)
                print("page", #todo:page(1, 10), todo:page(1, 1)[1].title)
                local found = todo:find({ done = true }, { order = "-title" })
                print("find", #found, found[1].title, found[2].title)
                print("remove", todo:remove({ record.id, more[1].id }), titles(todo))
                print("clear", todo:clear(), todo.count)
                local missing, err = todo:get(record.id)
                print("get missing", missing, err.code, tostring(err))
              end)
            end)
            """, in: folder)
        #expect(run.lines == [
            "callback\ta\tinteger\tnil",
            "batch\t2\ttrue",
            "get\ta",
            "update\ta\ttrue\tx\ttrue",
            "page\t2\tb",
            "find\t2\tb\ta",
            "remove\t2\tc",
            "clear\t1\t0",
            "get missing\tnil\tnot_found\tcollection.get: not_found: no record with id 1 in collection 'todo'",
        ], "\(run.stderr)")
        #expect(run.status == 0)
    }

    @Test(arguments: [false, true])
    func didChangeCarriesChangeSetsWithItemsAlreadyUpdated(writeOnLoop: Bool) async throws {
        let folder = try StoreScriptRun.DataFolder(config: "[store]\nwrite_on_loop = \(writeOnLoop)\n")
        let run = await StoreScriptRun.run(Self.showChange + """
            local todo = services.store:collection("todo")
            todo:on("didChange", function(cs, info)
              print(info.name, show(cs), todo.count, titles(todo))
            end)
            observe(todo, "count", function(new, old, change) print("count", new, old, change.initial) end)
            task(function()
              local a = todo:add({ title = "a" })
              local b, c = table.unpack(todo:add({ { title = "b" }, { title = "c" } }))
              todo:update(b.id, { title = "B" })
              todo:remove({ a.id, c.id })
              todo:clear()
            end)
            """, in: folder)
        let lines = run.lines
        #expect(lines.first == "count\t0\tnil\ttrue")
        #expect(lines.filter { $0.hasPrefix("collection.didChange") } == [
            "collection.didChange\tinserted={1} deleted={} updated={} reload=false\t1\ta",
            "collection.didChange\tinserted={2,3} deleted={} updated={} reload=false\t3\ta,b,c",
            "collection.didChange\tinserted={} deleted={} updated={2} reload=false\t3\ta,B,c",
            "collection.didChange\tinserted={} deleted={1,3} updated={} reload=false\t1\tB",
            "collection.didChange\tinserted={} deleted={1} updated={} reload=false\t0\t",
        ], "\(run.stderr)")
        #expect(lines.filter { $0.hasPrefix("count") }.last == "count\t0\t1\tfalse")
        #expect(run.status == 0)
    }

    @Test func valuesRecordsCannotHoldNameThePathAndNothingIsWritten() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let run = await StoreScriptRun.run("""
            local todo = services.store:collection("todo")
            task(function()
              local r, err = todo:add({ title = "x", score = 0/0 })
              print(r, err.code, err.message)
              r, err = todo:add({ title = "x", tags = { "a", "b", math.huge } })
              print(r, err.code, err.message)
              r, err = todo:add({ { ok = true }, { meta = { x = -math.huge } } })
              print(r, err.code, err.message)
              r, err = todo:add({ owner = todo })
              print(r, err.code, err.message)
              local deep = 1
              for i = 1, 101 do deep = { a = deep } end
              r, err = todo:add(deep)
              print(r, err.code, #err.message > 0)
              r, err = todo:update(12345, { done = true })
              print(r, tostring(err))
              print("count", todo.count)
            end)
            """, in: folder)
        #expect(run.lines == [
            "nil\tinvalid_argument\trecord.score is NaN: JSON has no NaN or infinity; give null, a string or a finite number instead",
            "nil\tinvalid_argument\trecord.tags[3] is inf: JSON has no NaN or infinity; give null, a string or a finite number instead",
            "nil\tinvalid_argument\trecords[2].meta.x is -inf: JSON has no NaN or infinity; give null, a string or a finite number instead",
            "nil\tinvalid_argument\trecord.owner is a collection object: JSON holds only null, booleans, numbers, strings and tables",
            "nil\tinvalid_argument\ttrue",
            "nil\tcollection.update: not_found: no record with id 12345 in collection 'todo'",
            "count\t0",
        ], "\(run.stderr)")
        #expect(run.status == 0)
    }

    /// A function, a foreign userdata, a cycle, mixed or odd keys inside a record: the argument is
    /// a table, so the call does not raise; its completion gets invalid_argument naming the path,
    /// for single records, batches (nothing of the batch is written), update and find alike.
    @Test func contentsNoServiceCanReceiveComeBackThroughTheCompletion() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let run = await StoreScriptRun.run("""
            local todo = services.store:collection("todo")
            local cyclic = { title = "x" }
            cyclic.self = cyclic
            local function done(r, err) print("completion", r, tostring(err)) end
            local calls = {
              function() return todo:add({ title = "x", tags = { "a", "b", print } }, done) end,
              function() return todo:add({ title = "x", file = io.stdout }, done) end,
              function() return todo:add(cyclic, done) end,
              function() return todo:add({ title = "x", tags = { 1, 2, n = 3 } }, done) end,
              function() return todo:add({ title = "x", [true] = 1 }, done) end,
              function() return todo:add({ 1, x = 2 }, done) end,
              function() return todo:add({ { title = "ok" }, { title = "x", tags = { "a", "b", print } } }, done) end,
              function() return todo:add({ { title = "ok" }, { title = "x", ["odd key"] = { f = coroutine.create(print) } } }, done) end,
            }
            for _, call in ipairs(calls) do
              local ok, request = pcall(call)
              print(ok, type(request))
            end
            task(function()
              local kept = todo:add({ title = "kept" })
              local r, err = todo:update(kept.id, { title = "y", on = { print } })
              print(r, tostring(err))
              r, err = todo:find({ title = print })
              print(r, tostring(err))
              r, err = todo:find({}, { order = { print } })
              print(r, tostring(err))
              r, err = todo:add({ title = "x", tags = { "a", "b", print } })
              print(r, tostring(err))
              print("count", todo.count, todo.items[1].title)
            end)
            """, in: folder)
        #expect(run.lines == Array(repeating: "true\tuserdata", count: 8) + [
            "record.tags[3] is a function: values given to a service hold only strings, numbers, booleans and tables",
            "record.file is a FILE*: values given to a service hold only strings, numbers, booleans and tables",
            "record.self is a table that contains itself: values given to a service cannot have cycles",
            "record.tags mixes array items and named fields: a table is either an array {a, b, ...} or an object {name = value, ...}",
            "record has a boolean key: object keys are strings and array positions are integers",
            "record mixes array items and named fields: a table is either an array {a, b, ...} or an object {name = value, ...}",
            "records[2].tags[3] is a function: values given to a service hold only strings, numbers, booleans and tables",
            "records[2][\"odd key\"].f is a thread: values given to a service hold only strings, numbers, booleans and tables",
        ].map { "completion\tnil\tcollection.add: invalid_argument: " + $0 } + [
            "nil\tcollection.update: invalid_argument: fields.on[1] is a function: values given to a service hold only strings, numbers, booleans and tables",
            "nil\tcollection.find: invalid_argument: query.title is a function: values given to a service hold only strings, numbers, booleans and tables",
            "nil\tcollection.find: invalid_argument: options.order[1] is a function: values given to a service hold only strings, numbers, booleans and tables",
            "nil\tcollection.add: invalid_argument: record.tags[3] is a function: values given to a service hold only strings, numbers, booleans and tables",
            "count\t1\tkept",
        ], "\(run.stderr)")
        #expect(run.status == 0)

        // Nothing of the refused calls reached the database.
        let reread = await StoreScriptRun.run("""
            local todo = services.store:collection("todo")
            print(todo.count, todo.items[1].title)
            """, in: folder)
        #expect(reread.lines == ["1\tkept"], "\(reread.stderr)")
    }

    /// What is not a table at all is a wrong type: it raises at the call site, as does a table
    /// that is neither a record nor an array of records.
    @Test func aNonTableArgumentStillRaisesAtTheCallSite() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let run = await StoreScriptRun.run("""
            local todo = services.store:collection("todo")
            print(select(2, pcall(function() todo:add("text", print) end)))
            print(select(2, pcall(function() todo:add(print, print) end)))
            print(select(2, pcall(function() todo:add({ { title = "a" }, "b" }, print) end)))
            print(select(2, pcall(function() todo:update(1, 42, print) end)))
            print(select(2, pcall(function() todo:find(io.stdout, print) end)))
            print("count", todo.count)
            """, in: folder)
        #expect(run.lines == [
            "test.lua:2: collection:add(records, completion): argument #1 must be a record {} or an array of records, got string",
            "test.lua:3: collection:add(records, completion): argument #1 must be a record {} or an array of records, got a function",
            "test.lua:4: collection:add(records, completion): argument #1 must be a record {} or an array of records, got table whose [2] is a string",
            "test.lua:5: collection:update(id, fields, completion): argument #2 must be a table, got number",
            "test.lua:6: collection:find(query[, options], completion): argument #1 must be a table, got a FILE*",
            "count\t0",
        ], "\(run.stderr)")
        #expect(run.status == 0)
    }

    @Test func recordsPersistAcrossRuns() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let first = await StoreScriptRun.run("""
            services.store:collection("notes"):add({ text = "hello", n = 1.5 }, function(r) print(r.id) end)
            """, in: folder)
        #expect(first.lines == ["1"], "\(first.stderr)")
        let second = await StoreScriptRun.run("""
            local notes = services.store:collection("notes")
            print(notes.count, notes.items[1].text, notes.items[1].n, math.type(notes.items[1].n))
            """, in: folder)
        #expect(second.lines == ["1\thello\t1.5\tfloat"], "\(second.stderr)")
    }

    /// `json.null` in an array keeps its place through the store: it reads back as json.null,
    /// not as a hole, so the record can be encoded and written back as it was.
    @Test func nullsInArraysRoundTripThroughTheStore() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let first = await StoreScriptRun.run("""
            local c = services.store:collection("nulls")
            c:add({ list = { json.null, json.null, 1 }, nested = { { json.null } } }, function(r)
                print(json.encode(c.items[1].list), #c.items[1].list, json.encode(c.items[1].nested))
            end)
            """, in: folder)
        #expect(first.lines == ["[null,null,1]\t3\t[[null]]"], "\(first.stderr)")
        let second = await StoreScriptRun.run("""
            local c = services.store:collection("nulls")
            local r = c.items[1]
            print(json.encode(r.list), r.list[1] == json.null, #r.list)
            c:update(r.id, { list = r.list, n = 1 }, function(u, err)
                print(err, json.encode(u.list))
            end)
            """, in: folder)
        #expect(second.lines == ["[null,null,1]\ttrue\t3", "nil\t[null,null,1]"], "\(second.stderr)")
    }

    @Test func aScriptThatOnlyUsesTheStoreExits() async throws {
        let folder = try StoreScriptRun.DataFolder()
        let run = await StoreScriptRun.run("""
            local c = services.store:collection("x")
            c:on("didChange", function() end)
            c:add({ n = 1 }, function() print("added") end)
            """, in: folder, timeout: 60)
        #expect(run.lines == ["added"])
        // A poller or subscription that kept the run alive would end it by the timeout, not with status 0.
        #expect(run.status == 0, "no poller or subscription keeps the run alive (took \(run.seconds) s)")
    }
}
