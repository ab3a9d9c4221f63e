import Foundation
import Glibc
import Synchronization

/// The row of the files service's watches (issue 38): from a file's rename into a watched folder
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
        let ours = try latency(row: row, folder: watched, command: [crescent, folder.path + "/watch.lua", watched])
        let baseline = try latency(row: row, folder: watched,
                                   command: ["inotifywait", "-m", "-q", "-e", "moved_to", "--format", "%f", watched], readyAfterStart: true)
        return BenchRow(name: row, value: ours, baseline: baseline, unit: "µs", goal: .ratioAtMost(2.0),
                        note: "median of \(renames) renames of a written file into a watched folder, from rename(2) to the watcher's line on a pipe: "
                            + "a Lua script's services.files:watch (debounce = 0) handler printing it, run by the crescent binary; "
                            + "baseline: inotifywait -m -e moved_to --format %f on the same folder")
    }

    /// Starts `command`, waits until it is ready, renames files into `folder` one at a time
    /// (waiting for each to be heard) and returns the median latency in microseconds.
    private static func latency(row: String, folder: String, command: [String], readyAfterStart: Bool = false) throws(BenchFailure) -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw BenchFailure(row: row, reason: "cannot start \(command[0]): \(error)") }
        defer {
            // SIGKILL: a child may inherit a mask that blocks SIGTERM (then inotifywait ran on and
            // the bench waited for it for good).
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        let heard = Mutex<[Int: UInt64]>([:])
        let ready = Atomic<Bool>(readyAfterStart)
        let reading = output.fileHandleForReading
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = reading.availableData
                guard !chunk.isEmpty else { return }
                let now = MonotonicClock.nanoseconds()
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    if line == "ready" { ready.store(true, ordering: .releasing) }
                    let digits = line.hasPrefix("target") ? String(line.dropFirst(6)) : line
                    if let number = Int(digits) { heard.withLock { $0[number] = $0[number] ?? now } }
                }
            }
        }
        for _ in 0..<600 where !ready.load(ordering: .acquiring) { usleep(50_000) }
        guard ready.load(ordering: .acquiring) else { throw BenchFailure(row: row, reason: "\(command[0]) did not get ready within 30 s") }
        // inotifywait says nothing when it is ready: give it the time the script waits too.
        usleep(300_000)
        var latencies: [Double] = []
        for number in 0..<renames {
            let temporary = folder + "/.tmp\(number)", target = folder + "/target\(number)"
            guard FileManager.default.createFile(atPath: temporary, contents: Data("\(number)".utf8)) else {
                throw BenchFailure(row: row, reason: "cannot write \(temporary)")
            }
            let renamed = MonotonicClock.nanoseconds()
            guard rename(temporary, target) == 0 else { throw BenchFailure(row: row, reason: "cannot rename \(temporary)") }
            var arrival: UInt64?
            for _ in 0..<20_000 {
                arrival = heard.withLock { $0[number] }
                if arrival != nil { break }
                usleep(100)
            }
            guard let arrival else { throw BenchFailure(row: row, reason: "\(command[0]) did not report rename \(number) within 2 s") }
            latencies.append(Double(arrival - renamed) / 1e3)
            unlink(target)
        }
        latencies.sort()
        return latencies[latencies.count / 2]
    }
}
