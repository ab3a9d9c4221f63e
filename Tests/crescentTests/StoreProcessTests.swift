import Foundation
import GRDB
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store across real `crescent` processes (issue 7): nothing acknowledged is lost when the
/// writer is killed, and a change made by one process reaches another's observers within 1 s.
@Suite(.serialized) struct StoreProcessTests {
    /// Adds up to 10,000 records one at a time, writing each acknowledged id to stdout at once.
    static let writer = """
        local c = services.store:collection("crash")
        task(function()
          for i = 1, 10000 do
            local record, err = c:add({ i = i, text = string.rep("x", 64) })
            if err then io.stderr:write(tostring(err), "\\n") os.exit(3) end
            io.stdout:write(record.id, "\\n")
            io.stdout:flush()
          end
        end)
        """

    /// 20 rounds for each way a write runs: on the loop when nothing can make it wait (the
    /// default), and always on the store's writer queue.
    @Test(arguments: [true, false])
    func acknowledgedRecordsSurviveSIGKILL(writeOnLoop: Bool) async throws {
        var generator = SystemRandomNumberGenerator()
        var acknowledgedTotal = 0
        for round in 1...20 {
            let sandbox = try Sandbox()
            let config = try sandbox.write("crescent.toml", "[store]\nwrite_on_loop = \(writeOnLoop)\n")
            let process = CrescentProcess(["--config", config, "--data-dir", sandbox.path, "-e", Self.writer], directory: sandbox.path)
            try process.start()
            Self.kill(process, afterFirstLinePlus: UInt32.random(in: 50_000...300_000, using: &generator))
            let result = await process.finish()
            #expect(result.killedBySignal && result.status == SIGKILL, "round \(round): \(result)")
            // Only whole lines count: the last one may have been cut by the kill.
            var text = result.stdout
            if let lastNewline = text.lastIndex(of: "\n") { text = String(text[...lastNewline]) } else { text = "" }
            let acknowledged = text.split(separator: "\n").compactMap { Int64($0) }
            #expect(!acknowledged.isEmpty)
            acknowledgedTotal += acknowledged.count

            let database = try DatabaseQueue(path: sandbox.path + "/store.sqlite")
            let (integrity, stored) = try await database.read { db in
                (try String.fetchOne(db, sql: "PRAGMA integrity_check"),
                 Set(try Int64.fetchAll(db, sql: "SELECT id FROM records WHERE collection = 'crash'")))
            }
            #expect(integrity == "ok", "round \(round)")
            let lost = acknowledged.filter { !stored.contains($0) }
            #expect(lost.isEmpty, "round \(round): acknowledged but missing: \(lost.prefix(10))")
            try database.close()
        }
        #expect(acknowledgedTotal > 20, "the writer got some way in each round")
    }

    /// Sends SIGKILL `microseconds` after the child's first line, from a thread of its own, so a
    /// busy test runner (few cooperative threads) cannot delay the kill.
    static func kill(_ process: CrescentProcess, afterFirstLinePlus microseconds: UInt32) {
        Thread {
            let deadline = Date().addingTimeInterval(10)
            while !process.stdout.contains("\n") && Date() < deadline { usleep(1_000) }
            usleep(microseconds)
            process.send(SIGKILL, expecting: .death)
        }.start()
    }

    @Test func theStoreOpensAgainAfterAKill() async throws {
        let sandbox = try Sandbox()
        let process = CrescentProcess(["--data-dir", sandbox.path, "-e", Self.writer], directory: sandbox.path)
        try process.start()
        Self.kill(process, afterFirstLinePlus: 100_000)
        let killed = await process.finish()
        #expect(killed.killedBySignal, "\(killed)")
        let acknowledged = killed.stdoutLines.dropLast().count
        let reader = try await crescent(["--data-dir", sandbox.path, "-e",
                                         "print(services.store:collection('crash').count)"], in: sandbox)
        #expect(reader.status == 0, "\(reader)")
        #expect((Int(reader.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1) >= acknowledged, "\(reader)")
    }

    @Test func aChangeByOneProcessReachesAnotherWithinASecond() async throws {
        let sandbox = try Sandbox()
        let observer = CrescentProcess(["--data-dir", sandbox.path, "-e", """
            local shared = services.store:collection("shared")
            local guard = timer.after(10, function() print("no change arrived") end)
            local sub
            sub = shared:on("didChange", function(change)
              print("change", #change.inserted, shared.items[#shared.items].from)
              guard:cancel()
              sub:cancel()
            end)
            print("ready")
            """], directory: sandbox.path)
        try observer.start()
        #expect(await observer.waitForOutput("ready\n", within: 10), "\(observer.stderr)")
        let writer = CrescentProcess(["--data-dir", sandbox.path, "-e", """
            services.store:collection("shared"):add({ from = "writer" }, function(record, err)
              print(record and "acknowledged" or tostring(err))
            end)
            """], directory: sandbox.path)
        try writer.start()
        #expect(await writer.waitForOutput("acknowledged\n", within: 10), "\(writer.stderr)")
        let acknowledged = Date()
        #expect(await observer.waitForOutput("change\t1\twriter\n", within: 3), "\(observer.stdout)\n\(observer.stderr)")
        let delay = Date().timeIntervalSince(acknowledged)
        #expect(delay < 1.0, "the change took \(delay) s to arrive")
        let observed = await observer.finish()
        #expect(observed.status == 0, "the observer exits once it has seen the change: \(observed)")
        let written = await writer.finish()
        #expect(written.status == 0, "\(written)")
    }

    /// Adds, updates and removes records of collection `shared` in a task, while a table view
    /// follows the collection through its change sets alone (`apply`, as `scripts/releases.lua`
    /// does); then marks itself done. Once both writers' marks have arrived, it prints whether
    /// the view's rows are exactly the collection's items, the number of change sets and the ids.
    static let sharer = """
        local me, other = arg[1], arg[2]
        local c = services.store:collection("shared")
        local shown = view.table { columns = { "id", "n", "from", "by" }, rows = c.items }
        local changes, failures, done = 0, {}, {}
        local function describe(r)
          return table.concat({ r.id, tostring(r.n), tostring(r.from), tostring(r.by), tostring(r.done) }, "/")
        end
        local function finish()
          local rows, items, ids = shown.rows, c.items, {}
          local same = #rows == #items
          for i, item in ipairs(items) do
            ids[#ids + 1] = item.id
            if not rows[i] or describe(rows[i]) ~= describe(item) then same = false end
          end
          print(same and "exact" or "drift", changes, #failures, table.concat(ids, ","))
          for _, failure in ipairs(failures) do io.stderr:write(failure, "\\n") end
          app.exit(0)
        end
        c:on("didChange", function(change)
          changes = changes + 1
          local ok, err = pcall(shown.apply, shown, change, change.reload and c.items or nil)
          if not ok then failures[#failures + 1] = tostring(err) end
          for _, item in ipairs(change.insertedItems) do
            if item.done then done[item.done] = true end
          end
          if done[me] and done[other] then timer.after(0.3, finish) end
        end)
        task(function()
          local random = math.random
          for i = 1, 60 do
            c:add({ n = i, from = me })
            local items = c.items
            if i % 3 == 0 and #items > 0 then
              local r = items[random(#items)]
              c:update(r.id, { n = (r.n or 0) + 1000, by = me })
            end
            if i % 4 == 0 and #items > 0 then c:remove(items[random(#items)].id) end
            if i % 10 == 0 then sleep(0.02) end
          end
          c:add({ done = me })
        end)
        timer.after(60, function() print("timeout", changes) app.exit(1) end)
        """

    /// Two processes writing one collection at once: every change set each receives turns the
    /// items it last saw into the new ones, so a view following the change sets alone ends
    /// exactly where the collection is, and both processes end with the same records.
    @Test func changeSetsStayExactWithTwoProcessesWriting() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("share.lua", Self.sharer)
        // The database exists before both start, so neither waits for the other to create it.
        let made = try await crescent(["--data-dir", sandbox.path, "-e", "services.store:collection('shared')"], in: sandbox)
        #expect(made.status == 0, "\(made)")
        for round in 1...3 {
            let first = CrescentProcess(["--data-dir", sandbox.path, "share.lua", "A\(round)", "B\(round)"], directory: sandbox.path)
            let second = CrescentProcess(["--data-dir", sandbox.path, "share.lua", "B\(round)", "A\(round)"], directory: sandbox.path)
            try first.start()
            try second.start()
            let results = [await first.finish(timeLimit: 90), await second.finish(timeLimit: 90)]
            var idLists: [String] = []
            for result in results {
                #expect(result.status == 0 && result.stderr.isEmpty, "round \(round): \(result)")
                let fields = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\t").map(String.init)
                #expect(fields.count == 4 && fields[0] == "exact" && fields[2] == "0", "round \(round): \(result.stdout)")
                #expect((Int(fields.count == 4 ? fields[1] : "") ?? 0) >= 60, "round \(round): each change set counted: \(result.stdout)")
                idLists.append(fields.last ?? "")
            }
            #expect(idLists[0] == idLists[1] && !idLists[0].isEmpty, "round \(round): both end with the same records")
        }
    }

    /// Adds and removes records of collection `race` at random in a task while checking, in
    /// each `didChange` handler, that the change set turns the items the handler read last time
    /// into the items it reads now (or says `reload`). Prints the number of change sets, of
    /// wrong ones and the first few wrong ones.
    static let checker = """
        local me = arg[1]
        local c = services.store:collection("race")
        local seen = c.items
        local changes, wrong, details = 0, 0, {}
        local function ids(list)
          local out = {}
          for i, r in ipairs(list) do out[i] = r.id end
          return table.concat(out, ",")
        end
        c:on("didChange", function(change)
          changes = changes + 1
          local now = c.items
          if not change.reload then
            local list = {}
            for i, r in ipairs(seen) do list[i] = r.id end
            local deleted = { table.unpack(change.deleted) }
            table.sort(deleted)
            for i = #deleted, 1, -1 do table.remove(list, deleted[i]) end
            for i, position in ipairs(change.inserted) do table.insert(list, position, change.insertedItems[i].id) end
            if table.concat(list, ",") ~= ids(now) then
              wrong = wrong + 1
              if #details < 3 then
                details[#details + 1] = string.format("prev %d deleted %d inserted %d items %d", #seen, #deleted, #change.inserted, #now)
              end
            end
          end
          seen = now
        end)
        task(function()
          local random = math.random
          for i = 1, 150 do
            local items = c.items
            if #items > 5 and random() < 0.45 then
              c:remove(items[random(#items)].id)
            else
              c:add({ n = i, from = me })
            end
            if i % 5 == 0 then sleep(0.01) end
          end
          sleep(1.5)
          print(changes, wrong, table.concat(details, "; "))
          app.exit(0)
        end)
        timer.after(60, function() print("timeout", changes) app.exit(1) end)
        """

    /// Two processes adding and removing at random on one store: every change set each handler
    /// receives turns the items it read in its last call into the items it reads now, though
    /// the other process's commits change the list under it at any moment.
    @Test func everyChangeSetMatchesTheItemsReadInItsHandlerWithTwoWriters() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("check.lua", Self.checker)
        let made = try await crescent(["--data-dir", sandbox.path, "-e", "services.store:collection('race')"], in: sandbox)
        #expect(made.status == 0, "\(made)")
        var total = 0
        for round in 1...2 {
            let first = CrescentProcess(["--data-dir", sandbox.path, "check.lua", "A\(round)"], directory: sandbox.path)
            let second = CrescentProcess(["--data-dir", sandbox.path, "check.lua", "B\(round)"], directory: sandbox.path)
            try first.start()
            try second.start()
            for result in [await first.finish(timeLimit: 90), await second.finish(timeLimit: 90)] {
                #expect(result.status == 0 && !result.killedBySignal, "round \(round): \(result)")
                let fields = result.stdout.trimmingCharacters(in: .newlines).split(separator: "\t", omittingEmptySubsequences: false)
                #expect(fields.count == 3 && fields[1] == "0", "round \(round): wrong change sets: \(result.stdout) \(result.stderr)")
                total += Int(fields.first ?? "") ?? 0
            }
        }
        #expect(total >= 300, "each process saw its own and the other's changes: \(total)")
    }

    /// Services start on first use: an unusable data folder fails only what uses the store.
    @Test func anUnusableDataFolderFailsOnlyWhatUsesTheStore() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("not-a-folder", "hello")
        let unused = try await crescent(["--data-dir", file, "-e", "print('runs')"], in: sandbox)
        #expect(unused.status == 0 && unused.stdout == "runs\n" && unused.stderr.isEmpty, "\(unused)")
        let used = try await crescent(["--data-dir", file, "-e", "services.store:collection('x')"], in: sandbox)
        #expect(used.status == 1, "\(used)")
        #expect(used.stderr.contains("cannot open the store database \(file)/store.sqlite: \(file) is not a folder"), "\(used)")
    }
}
