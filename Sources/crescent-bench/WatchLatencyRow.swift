import Foundation
import Glibc
import Synchronization

/// The row of the files service's watches: from a file's rename into a watched folder
/// to the Lua handler hearing it (debounce off), against `inotifywait` seeing the same rename.
/// Each watcher prints the number in the file's name as it hears it; the bench notes when the
/// line arrives, so both sides pay the same pipe.
enum WatchLatencyRow {
    static let renames = 200

    /// Median microseconds from rename to the watcher's line.
    static func run() throws(BenchFailure) -> BenchRow {
        let row = "watch-latency"
        let folder = try BenchFolder(row: row)
        let watched = folder.path + "/watched"
        do {
            try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
        } catch {
            throw BenchFailure(row: row, reason: "cannot make \(watched): \(error)")
        }
        try folder.write("watch.lua", """
            io.stdout:setvbuf("line")
            local w = services.files:watch(arg[1], { debounce = 0 })
            w:on("didChange", function(event)
              for _, change in ipairs(event.changes) do
                local number = change.path:match("/target(%d+)$")
                if number and change.kind ~= "deleted" then print(number) end
              end
            end)
            timer.after(0.3, function() print("ready") end)
            """, row: row)
        let crescent = try StartupBench.crescentPath()
        let theirsFolder = folder.path + "/theirs"
        do {
            try FileManager.default.createDirectory(atPath: theirsFolder, withIntermediateDirectories: true)
        } catch {
            throw BenchFailure(row: row, reason: "cannot make \(theirsFolder): \(error)")
        }
        // Both watchers run at once, each on a folder of its own, and the renames alternate
        // between them: each pair of samples sees the same machine (other work on a shared
        // machine moved the two medians apart by more than the goal's margin when measured one
        // after the other).
        let ours = try Watcher(row: row, command: [crescent, folder.path + "/watch.lua", watched])
        defer { ours.stop() }
        let theirs = try Watcher(row: row, command: ["inotifywait", "-m", "-q", "-e", "moved_to", "--format", "%f", theirsFolder],
                                 readyAfterStart: true)
        defer { theirs.stop() }
        try ours.waitUntilReady()
        try theirs.waitUntilReady()
        // inotifywait says nothing when it is ready: give it the time the script waits too.
        usleep(300_000)
        var oursLatencies: [Double] = [], theirsLatencies: [Double] = [], ratios: [Double] = []
        for number in 0..<renames {
            let mine = try ours.latency(of: number, in: watched)
            let peer = try theirs.latency(of: number, in: theirsFolder)
            oursLatencies.append(mine)
            theirsLatencies.append(peer)
            ratios.append(mine / peer)
        }
        let median = { (samples: [Double]) in Statistics.median(samples) }
        let quartiles = { (samples: [Double]) -> String in
            let sorted = samples.sorted()
            return NumberFormat.fixed(sorted[sorted.count / 4], digits: 1) + "–" + NumberFormat.fixed(sorted[sorted.count * 3 / 4], digits: 1)
        }
        return BenchRow(name: row, value: median(oursLatencies), baseline: median(theirsLatencies), unit: "µs", goal: .ratioAtMost(2.0),
                        note: "median of \(renames) renames of a written file into a watched folder, from rename(2) to the watcher's line on a pipe: "
                            + "a Lua script's services.files:watch (debounce = 0) handler printing it, run by the crescent binary; "
                            + "baseline: inotifywait -m -e moved_to --format %f on a folder of its own, both running, renames alternating "
                            + "between them (quartiles \(quartiles(oursLatencies)) µs vs \(quartiles(theirsLatencies)) µs; "
                            + "the ratio pair by pair: median " + NumberFormat.fixed(median(ratios), digits: 2)
                            + ", quartiles \(quartiles(ratios)))")
    }

    /// A watcher process printing the number of each file renamed into its folder; the bench
    /// notes when each line arrives.
    private final class Watcher {
        /// What the reading thread notes: when each number's line arrived, and `ready`.
        private final class Arrivals: Sendable {
            let heard = Mutex<[Int: UInt64]>([:])
            let ready: Atomic<Bool>
            init(ready: Bool) { self.ready = Atomic(ready) }
        }

        private let process: Process
        private let row: String
        private let command: [String]
        private let arrivals: Arrivals

        init(row: String, command: [String], readyAfterStart: Bool = false) throws(BenchFailure) {
            self.row = row
            self.command = command
            let arrivals = Arrivals(ready: readyAfterStart)
            self.arrivals = arrivals
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch { throw BenchFailure(row: row, reason: "cannot start \(command[0]): \(error)") }
            TimedLines.read(output.fileHandleForReading) { line, now in
                if line == "ready" { arrivals.ready.store(true, ordering: .releasing) }
                let digits = line.hasPrefix("target") ? String(line.dropFirst(6)) : line
                if let number = Int(digits) { arrivals.heard.withLock { $0[number] = $0[number] ?? now } }
            }
        }

        func waitUntilReady() throws(BenchFailure) {
            for _ in 0..<600 where !arrivals.ready.load(ordering: .acquiring) { usleep(50_000) }
            guard arrivals.ready.load(ordering: .acquiring) else { throw BenchFailure(row: row, reason: "\(command[0]) did not get ready within 30 s") }
        }

        /// Writes a file, renames it into `folder` as `target<number>` and returns the
        /// microseconds until the watcher's line for it arrived.
        func latency(of number: Int, in folder: String) throws(BenchFailure) -> Double {
            let temporary = folder + "/.tmp\(number)", target = folder + "/target\(number)"
            guard FileManager.default.createFile(atPath: temporary, contents: Data("\(number)".utf8)) else {
                throw BenchFailure(row: row, reason: "cannot write \(temporary)")
            }
            let renamed = MonotonicClock.nanoseconds()
            guard rename(temporary, target) == 0 else { throw BenchFailure(row: row, reason: "cannot rename \(temporary)") }
            var arrival: UInt64?
            for _ in 0..<20_000 {
                arrival = arrivals.heard.withLock { $0[number] }
                if arrival != nil { break }
                usleep(100)
            }
            guard let arrival else { throw BenchFailure(row: row, reason: "\(command[0]) did not report rename \(number) within 2 s") }
            unlink(target)
            return Double(arrival - renamed) / 1e3
        }

        func stop() {
            // SIGKILL: a child may inherit a mask that blocks SIGTERM (then inotifywait ran on and
            // the bench waited for it for good).
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }
}
