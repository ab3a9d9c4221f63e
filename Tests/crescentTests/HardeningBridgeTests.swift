import Foundation
import HTTPTestServer
import Testing

/// What scripts can reach of the bridge holds: read-only stays read-only against `rawset`, only
/// source text loads, and values given to services keep their meaning.
@Suite struct HardeningBridgeTests {
    /// A cheap KDF, so the session answers at once in a debug build.
    static let config = "[session]\nkdf_rounds = 1000\n"

    @Test func rawsetCannotSpoofADataModelOrReplaceAService() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("crescent.toml", Self.config)
        try sandbox.write("script.lua", """
            task(function()
              local s = services.session
              s:register("ann", "correct horse")
              s:login("ann", "correct horse")
              local user = s.currentUser
              print((pcall(rawset, user, "name", "admin")))
              print(s.currentUser.name, s.currentUser == s.currentUser, s.currentUser == user)
              print(pcall(rawset, services, "store", 1))
              print(type(services.store), services.store.path ~= nil)
            end)
            """)
        let result = try await crescent(["--data-dir", "data", "script.lua"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "false",
            "ann\ttrue\ttrue",
            "false\tbad argument #1 to 'rawset' (table expected, got userdata)",
            "userdata\ttrue",
        ], "\(result)")
    }

    @Test func precompiledChunksAreRefusedEverywhere() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", """
            local dumped = string.dump(function() return "ran" end)
            assert(io.open("compiled.lua", "wb")):write(dumped):close()
            print(load(dumped))
            print(load(dumped, "x", "b"))
            print(load(dumped, "x", "bt", {}))
            print(loadfile("compiled.lua", "b"))
            print(pcall(dofile, "compiled.lua"))
            package.path = "./?.lua"
            print(pcall(require, "compiled"))
            print(load("return 'text loads'", "x", "b"))
            print(load("return 'text loads'")())
            """)
        let result = try await crescent(["script.lua"], in: sandbox)
        let refusals = result.stdout.components(separatedBy: "attempt to load a binary chunk (mode is 't')").count - 1
        #expect(refusals == 6, "load, load 'b', load 'bt', loadfile 'b', dofile, require: \(result)")
        #expect(!result.stdout.contains("ran"), "\(result)")
        // Mode "b" refuses text as Lua does (it loaded the text, the second permissions attack's D10).
        #expect(result.stdoutLines.contains("nil\tattempt to load a text chunk (mode is 'b')"), "\(result)")
        #expect(result.stdoutLines.last == "text loads", "\(result)")
        let direct = try await crescent(["compiled.lua"], in: sandbox)
        #expect(direct.status == 1 && direct.stderr.contains("attempt to load a binary chunk"), "\(direct)")
        #expect(direct.stderrShowsNoCrash, "\(direct)")
    }

    @Test func keysThatAreNotTextAreRefusedAndJSONMarksAreHonoured() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("add.lua", """
            local c = services.store:collection("k")
            c:add({ ["\\xff"] = 1, ["\\xfe"] = 2 }, function(r, err) print(err.code, err.message) end)
            c:add({ tags = { ["ok"] = { ["\\xc3"] = 1 } } }, function(r, err) print(err.code, err.message) end)
            c:add({ gone = json.null, none = json.object({}), empty = json.array({}) }, function(r, err)
              print(r and tostring(r.gone), err)
            end)
            """)
        let added = try await crescent(["--data-dir", "data", "add.lua"], in: sandbox)
        #expect(added.stdoutLines.count == 3, "\(added)")
        #expect(added.stdoutLines.first?.hasPrefix("invalid_argument\trecord has a key that is not valid UTF-8") == true, "\(added)")
        #expect(added.stdoutLines.dropFirst().first?.hasPrefix("invalid_argument\trecord.tags.ok has a key that is not valid UTF-8") == true, "\(added)")
        // A field holding null is kept, as json.decode and a remote observe show it.
        #expect(added.stdoutLines.last == "json.null\tnil", "json.null is a field: \(added)")
        try sandbox.write("read.lua", """
            local r = services.store:collection("k").items[1]
            print(json.encode(r.none), json.encode(r.empty), r.gone)
            """)
        let read = try await crescent(["--data-dir", "data", "read.lua"], in: sandbox)
        #expect(read.stdout == "{}\t[]\tjson.null\n", "\(read)")
    }

    @Test func theMemoryLimitAppliesWhereASwiftValueIsMade() async throws {
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 9 << 20)
        let server = try await HTTPTestServer.start { _ in .respond(status: 200, body: body) }
        defer { Task { await server.stop() } }
        let result = try await runScript("""
            task(function()
              local ok, response, err = pcall(function()
                return services.http:get("\(server.baseURL)/big", { maxBytes = 16777216 })
              end)
              print(ok, response, err and err.code, err and err.message:match("did not fit in the Lua memory limit of 8 MiB"))
              print("after")
            end)
            """, options: ["--memory-limit", "8"])
        // The result is dropped and the call answers an error the script handles like any other.
        #expect(result.stdoutLines == ["true\tnil\tio\tdid not fit in the Lua memory limit of 8 MiB", "after"], "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func aCancelAfterTheWriteCommittedReportsTheWrite() async throws {
        let result = try await runScript("""
            local c = services.store:collection("c")
            local answers = {}
            for i = 1, 20 do
              c:add({ n = i }, function(r, err) answers[#answers + 1] = err and err.code or "ok" end):cancel()
            end
            timer.after(0.2, function()
              local ok = 0
              for _, a in ipairs(answers) do if a == "ok" then ok = ok + 1 end end
              print(#answers, ok, c.count)
            end)
            """, options: ["--data-dir", "data"])
        let fields = result.stdout.split(separator: "\t").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(fields.count == 3 && fields[0] == "20", "\(result)")
        #expect(fields.count == 3 && fields[1] == fields[2], "each success is a stored record and each cancel is not: \(result)")
    }
}

/// A store another process keeps locked: opening a collection never holds the loop up, its
/// records arrive once the lock is free, and a lock is reported as a lock, not as a database that
/// cannot be opened (which reads like corruption).
@Suite struct HardeningStoreLockTests {
    /// Makes `data/store.sqlite` with the script `made` (run once), then starts a process that
    /// holds SQLite's write lock until the file `release` appears (or 60 s pass). Before taking the
    /// lock it empties the write-ahead log and clears the schema's mark, so opening the database
    /// needs the lock (as when another process has just created it).
    static func lockedStore(made script: String) async throws -> (Sandbox, Process) {
        let sandbox = try Sandbox()
        let made = try await crescent(["--data-dir", "data", "-e", script], in: sandbox)
        #expect(made.status == 0, "\(made)")
        try sandbox.write("hold.py", """
            import os, sqlite3, time
            c = sqlite3.connect("data/store.sqlite", isolation_level=None)
            c.execute("PRAGMA user_version = 0")
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            c.execute("BEGIN IMMEDIATE")
            open("locked", "w").close()
            deadline = time.time() + 60
            while not os.path.exists("release") and time.time() < deadline: time.sleep(0.02)
            c.execute("COMMIT")
            """)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["python3", "hold.py"]
        holder.currentDirectoryURL = URL(fileURLWithPath: sandbox.path)
        try holder.run()
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: sandbox.path + "/locked") {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(FileManager.default.fileExists(atPath: sandbox.path + "/locked"), "the lock holder started")
        return (sandbox, holder)
    }

    /// The loop's timers keep firing while the open waits for the lock; then the stored record
    /// arrives as a change, and a write made meanwhile commits after it.
    @Test func openingACollectionNeverHoldsTheLoopUp() async throws {
        let (run, _) = try await Self.runWhileLocked("""
            local c = services.store:collection("a")
            print("opened", c.count)
            local changes, written = {}, nil
            c:on("didChange", function(change) changes[#changes + 1] = #change.inserted end)
            c:add({ x = 2 }, function(record, err) written = record and "written" or tostring(err) end)
            timer.after(1, function()
              print("ticks while locked", ticks >= 5, ticks)
              io.open("release", "w"):close()
              local check
              check = timer.every(0.05, function()
                if c.count == 2 and written then
                  check:cancel()
                  print("loaded", c.items[1].x, c.items[2].x, written, table.concat(changes, ","))
                  app.exit(0)
                end
              end)
            end)
            """)
        #expect(run.status == 0, "\(run)")
        // The committed record is read at once (a WAL reader waits for no writer); only the
        // write arrives as a change.
        #expect(run.stdoutLines.first == "opened\t1", "the collection answers at once, with its committed records: \(run)")
        #expect(run.stdoutLines.dropFirst().first?.hasPrefix("ticks while locked\ttrue") == true, "\(run)")
        #expect(run.stdoutLines.last == "loaded\t1\t2\twritten\t1", "\(run)")
        #expect(run.stderr.isEmpty, "\(run)")
    }

    /// harden4 H4: while another process holds a write transaction (with a record of its own not
    /// committed), a collection opened meanwhile reads the committed records at once and all
    /// along, not an empty collection whose records arrive after the lock (a script seeding an
    /// empty collection would seed it twice).
    @Test func aCollectionOpenedWhileAnotherProcessWritesReadsItsCommittedRecords() async throws {
        let (run, _) = try await Self.runWhileLocked(made: """
            local c = services.store:collection("l")
            c:add({ { i = 1 }, { i = 2 }, { i = 3 } }, function() end)
            """, """
            local c = services.store:collection("l")
            local changes = 0
            c:on("didChange", function() changes = changes + 1 end)
            print("at once", c.count, #c.items, c.items[3] and c.items[3].i)
            timer.after(1, function()
              print("while locked", c.count, changes)
              io.open("release", "w"):close()
              app.exit(0)
            end)
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines == ["at once\t3\t3\t3", "while locked\t3\t0"], "\(run)")
    }

    /// A lock held past the open's wait is reported as a lock, to the writes that waited.
    @Test func aLockHeldByAnotherProcessIsReportedAsALock() async throws {
        let (sandbox, holder) = try await Self.lockedStore(made: #"services.store:collection("a"):add({ x = 1 }, function() end)"#)
        defer {
            _ = try? sandbox.write("release", "")
            holder.waitUntilExit()
        }
        let read = try await crescent(["--data-dir", "data", "-e", """
            local c = services.store:collection("a")
            c:add({ x = 2 }, function(record, err)
              print(record and "written" or tostring(err))
              io.open("release", "w"):close()
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(read.stdout == "written\n" || read.stdout.contains("is locked by another process"), "\(read)")
        #expect(!read.stdout.contains("cannot open the store database"), "\(read)")
    }

    /// Runs `script` in the store `made` makes while another process keeps it locked until the
    /// script makes the file `release`. `ticks` counts a 50 ms timer from the start.
    static func runWhileLocked(made: String = #"services.store:collection("a"):add({ x = 1 }, function() end)"#,
                               _ script: String) async throws -> (RunResult, Sandbox) {
        let (sandbox, holder) = try await lockedStore(made: made)
        defer {
            _ = try? sandbox.write("release", "")
            holder.waitUntilExit()
        }
        let run = try await crescent(["--data-dir", "data", "-e", """
            local ticks = 0
            timer.every(0.05, function() ticks = ticks + 1 end)
            """ + script], in: sandbox, timeLimit: 60)
        return (run, sandbox)
    }

    /// Runs `script` (with `feeds`, the service) while locked, in a store holding two feeds,
    /// subscribed though their first fetch failed (nothing listens on port 9, and such a feed
    /// stays subscribed).
    static func runWithLockedFeeds(_ script: String) async throws -> (RunResult, Sandbox) {
        try await runWhileLocked(made: """
            local left = 2
            for _, name in ipairs({ "a", "b" }) do
              services.feeds:add("http://127.0.0.1:9/" .. name .. ".xml", function()
                left = left - 1
                if left == 0 then app.exit(0) end
              end)
            end
            """, "local feeds = services.feeds\n" + script)
    }

    /// Reading `feeds` and `latest` and calling `remove` while another process holds the lock
    /// answer at once and the loop's timers keep firing; the subscriptions arrive as a change of
    /// `feeds` once the lock is free, without the one removed meanwhile, which the database
    /// forgets too.
    @Test func readingAndRemovingFeedsNeverHoldsTheLoopUp() async throws {
        let (run, sandbox) = try await Self.runWithLockedFeeds("""
            print("at once", #feeds.feeds, #feeds.latest)
            feeds:remove("http://127.0.0.1:9/b.xml")
            feeds:on("didFail", function(failure) print("failed", failure.error.message) end)
            timer.after(1, function()
              print("ticks while locked", ticks >= 5, ticks)
              io.open("release", "w"):close()
              local check
              check = timer.every(0.05, function()
                if #feeds.feeds > 0 then
                  check:cancel()
                  print("loaded", #feeds.feeds, feeds.feeds[1].url)
                  timer.after(0.5, function() app.exit(0) end)
                end
              end)
            end)
            """)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines.first == "at once\t0\t0", "\(run)")
        #expect(run.stdoutLines.dropFirst().first?.hasPrefix("ticks while locked\ttrue") == true, "\(run)")
        #expect(run.stdoutLines.dropFirst(2).first == "loaded\t1\thttp://127.0.0.1:9/a.xml", "\(run)")
        #expect(!run.stdout.contains("failed"), "\(run)")
        let later = try await crescent(["--data-dir", "data", "-e", """
            for _, feed in ipairs(services.feeds.feeds) do print(feed.url) end
            app.exit(0)
            """], in: sandbox)
        #expect(later.stdout == "http://127.0.0.1:9/a.xml\n", "the removal reached the database: \(later)")
    }

    /// The session's users live in the same database: registering while another process holds
    /// the lock waits off the loop (its timers keep firing) and is answered as a lock.
    @Test func registeringAUserNeverHoldsTheLoopUpAndALockIsALock() async throws {
        let (run, _) = try await Self.runWhileLocked("""
            services.session:register("ann", "correct horse", function(name, err)
              print(name, err and err.code, err and err.message)
              print("ticks", ticks >= 20)
              io.open("release", "w"):close()
              app.exit(0)
            end)
            print("asked")
            """)
        #expect(run.stdoutLines.first == "asked", "\(run)")
        #expect(run.stdout.contains("nil\tunavailable\t") && run.stdout.contains("is locked by another process"), "\(run)")
        #expect(run.stdoutLines.last == "ticks\ttrue", "\(run)")
    }

    /// A lock held past the store's wait: `remove` answered at once, and the database's failure
    /// to forget the feed comes as a `didFail` that says the database is locked.
    @Test func aLockOutlastingTheWaitIsReportedAsALockToRemove() async throws {
        let (run, _) = try await Self.runWithLockedFeeds("""
            feeds:on("didFail", function(failure)
              print(failure.feed.url, failure.error.code, failure.error.message)
              print("ticks", ticks >= 20)
              io.open("release", "w"):close()
              app.exit(0)
            end)
            feeds:remove("http://127.0.0.1:9/a.xml")
            print("removed")
            """)
        #expect(run.stdoutLines.first == "removed", "\(run)")
        #expect(run.stdout.contains("http://127.0.0.1:9/a.xml\tunavailable\t") && run.stdout.contains("is locked by another process"), "\(run)")
        #expect(run.stdoutLines.last == "ticks\ttrue", "\(run)")
    }
}
