import Foundation
import PostgresTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The PostgreSQL store across real `crescent` processes on one database (`CRESCENT_STORE_URL`):
/// hosts writing at once agree and their change sets rebuild the list; a killed writer loses
/// nothing it was told was committed; a server restart costs `unavailable` answers, not records.
@Suite(.serialized) struct StorePostgresProcessTests {
    /// Adds `count` records as host `host` while following every change set: it keeps the
    /// length the change sets give (checking each position against it) and, once that reaches
    /// `total`, its `items` hold all `total` records and its own adds are done, prints the ids it
    /// holds and that length. The starting count and the change sets after it add up: a record
    /// the count already shows is not announced to a subscription made after it was read.
    /// (The exact rebuild of the list from change sets and snapshots is checked in-process by
    /// StorePostgresTests, where each change set's list is captured as it is reported.)
    static func host(_ host: Int, count: Int, total: Int) -> String {
        """
        local c = services.store:collection("shared")
        local length, bad = c.count, nil
        local done, writing = false, true
        local guard = timer.after(90, function() print("timeout", c.count, length) os.exit(2) end)
        local sub
        local function finish()
          if done or writing or length < \(total) or c.count < \(total) then return end
          done = true
          local ids = {}
          for i, r in ipairs(c.items) do ids[i] = r.id end
          print("final " .. table.concat(ids, ","))
          print("length " .. length)
          print("bad " .. tostring(bad))
          guard:cancel() sub:cancel()
        end
        sub = c:on("didChange", function(change)
          if change.reload then length = c.count return finish() end
          for _, p in ipairs(change.deleted) do if p < 1 or p > length then bad = "deleted " .. p end end
          length = length - #change.deleted
          table.sort(change.inserted)
          for _, p in ipairs(change.inserted) do
            if p < 1 or p > length + 1 then bad = "inserted " .. p end
            length = length + 1
          end
          for _, p in ipairs(change.updated) do if p < 1 or p > length then bad = "updated " .. p end end
          finish()
        end)
        task(function()
          for i = 1, \(count) do
            local _, err = c:add({ host = \(host), i = i })
            if err then io.stderr:write(tostring(err), "\\n") os.exit(3) end
          end
          writing = false
          finish()
        end)
        """
    }

    @Test func threeHostsWritingAtOnceEndAlikeAndTheirChangeSetsAddUp() async throws {
        let url = try PostgresCluster.shared().makeDatabase("hosts")
        let sandbox = try Sandbox()
        let hosts = (1...3).map { host in
            CrescentProcess(["-e", Self.host(host, count: 40, total: 120)], directory: sandbox.path,
                            environment: ["CRESCENT_STORE_URL": url])
        }
        for host in hosts { try host.start() }
        var results: [RunResult] = []
        for host in hosts { results.append(await host.finish(timeLimit: 120)) }
        var finals: Set<String> = []
        for result in results {
            #expect(result.status == 0, "\(result)")
            #expect(result.stdoutLines.contains("length 120") && result.stdoutLines.contains("bad nil"),
                    "every change set fits the list and they add up to it: \(result)")
            let final = result.stdoutLines.first { $0.hasPrefix("final ") }.map { String($0.dropFirst(6)) }
            #expect(final?.split(separator: ",").count == 120, "\(result)")
            if let final { finals.insert(final) }
        }
        #expect(finals.count == 1, "every host ends with the same items in the same order")
    }

    /// The shipped places plugin keeps the places an earlier release saved in the scripts'
    /// collection, on PostgreSQL as on SQLite (PluginStoreTests).
    @Test func placesKeepsThePlacesAnEarlierReleaseSaved() async throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase("places")
        // The data folder holds the plugin's declarations; the records go to PostgreSQL.
        let sandbox = try Sandbox()
        try await PluginStoreTests.placesMigration(["--data-dir", sandbox.path + "/data"], environment: ["CRESCENT_STORE_URL": url])
        withExtendedLifetime(sandbox) {}
        let name = String(url.split(separator: "/").last ?? "")
        let counts = try cluster.sql(name, "SELECT collection || '|' || count(*) FROM crescent_records GROUP BY collection ORDER BY collection")
        #expect(counts.contains("places|2") && counts.contains("plugin:places:places|3"), "\(counts)")
    }

    /// Adds records one at a time, writing each acknowledged id to stdout at once.
    static let writer = """
        local c = services.store:collection("crash")
        task(function()
          for i = 1, 100000 do
            local record, err = c:add({ i = i })
            if err then io.stderr:write(tostring(err), "\\n") os.exit(3) end
            io.stdout:write(record.id, "\\n")
            io.stdout:flush()
          end
        end)
        """

    @Test func acknowledgedRecordsSurviveSIGKILL() async throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase("kill")
        let name = String(url.split(separator: "/").last ?? "")
        let sandbox = try Sandbox()
        var generator = SystemRandomNumberGenerator()
        var acknowledgedTotal = 0
        for round in 1...20 {
            let process = CrescentProcess(["-e", Self.writer], directory: sandbox.path, environment: ["CRESCENT_STORE_URL": url])
            try process.start()
            StoreProcessTests.kill(process, afterFirstLinePlus: UInt32.random(in: 50_000...300_000, using: &generator))
            let result = await process.finish()
            #expect(result.killedBySignal && result.status == SIGKILL, "round \(round): \(result)")
            var text = result.stdout
            if let lastNewline = text.lastIndex(of: "\n") { text = String(text[...lastNewline]) } else { text = "" }
            let acknowledged = text.split(separator: "\n").compactMap { Int64($0) }
            #expect(!acknowledged.isEmpty, "round \(round): \(result)")
            acknowledgedTotal += acknowledged.count
            let stored = Set(try cluster.sql(name, "SELECT id FROM crescent_records WHERE collection = 'crash'")
                .split(separator: "\n").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) })
            let lost = acknowledged.filter { !stored.contains($0) }
            #expect(lost.isEmpty, "round \(round): acknowledged but missing: \(lost.prefix(10))")
        }
        #expect(acknowledgedTotal > 20, "the writer got some way in each round")
        let reader = try await crescent(["-e", "print(services.store:collection('crash').count)"], in: sandbox,
                                        environment: ["CRESCENT_STORE_URL": url])
        #expect(reader.status == 0, "\(reader)")
        #expect((Int(reader.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1) >= acknowledgedTotal, "\(reader)")
    }

    /// A writer keeps adding through a server restart: some adds answer `unavailable`, then it
    /// goes on; an observer ends with every acknowledged record.
    @Test func aServerRestartMidRunLosesNothing() async throws {
        let cluster = try PostgresCluster.makeOwn()
        defer { try? cluster.stop() }
        let url = try cluster.makeDatabase("restart")
        let sandbox = try Sandbox()
        let writer = CrescentProcess(["-e", """
            local c = services.store:collection("log")
            task(function()
              local added, failures = 0, 0
              while added < 60 do
                local record, err = c:add({ n = added })
                if record then added = added + 1 print("ok " .. record.id) io.stdout:flush()
                else failures = failures + 1 print("failed " .. tostring(err.code)) io.stdout:flush() sleep(0.05) end
              end
              print("done " .. c.count)
            end)
            """], directory: sandbox.path, environment: ["CRESCENT_STORE_URL": url])
        try writer.start()
        #expect(await writer.waitForOutput("ok ", within: 30), "\(writer.stderr)")
        try cluster.stop()
        try await Task.sleep(nanoseconds: 300_000_000)
        try cluster.start()
        let result = await writer.finish(timeLimit: 120)
        #expect(result.status == 0, "\(result)")
        let failures = result.stdoutLines.filter { $0.hasPrefix("failed ") }
        #expect(failures.allSatisfy { $0 == "failed unavailable" }, "\(failures)")
        let acknowledged = result.stdoutLines.filter { $0.hasPrefix("ok ") }.compactMap { Int64($0.dropFirst(3)) }
        #expect(acknowledged.count == 60)
        #expect(result.stdoutLines.contains("done \(acknowledged.count)") || result.stdoutLines.contains { $0.hasPrefix("done ") }, "\(result)")
        let reader = try await crescent(["-e", "local ids = {} for _, r in ipairs(services.store:collection('log').items) do ids[#ids + 1] = r.id end print(table.concat(ids, ','))"],
                                        in: sandbox, environment: ["CRESCENT_STORE_URL": url])
        let stored = Set(reader.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int64($0) })
        #expect(acknowledged.allSatisfy { stored.contains($0) }, "nothing acknowledged lost: \(reader)")
    }
}
