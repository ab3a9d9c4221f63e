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
            process.send(SIGKILL)
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
