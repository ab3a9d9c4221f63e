import Foundation
import Synchronization

/// A `crescent` process on a PostgreSQL store that prints the id of each record its
/// `didChange` handler is told was inserted; the bench notes when each line arrives
/// (CLOCK_MONOTONIC, as the writer's start times).
final class ObserverProcess: Sendable {
    private let process: Process
    private let folder: String
    private let arrivals = Mutex<[Int64: UInt64]>([:])
    private let ready = Mutex(false)

    init(row: String, url: String, collection: String) throws(BenchFailure) {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-bench-\(UUID().uuidString.prefix(8))").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: try StartupBench.crescentPath())
        process.arguments = ["--data-dir", folder, "-e", """
            io.stdout:setvbuf("line")
            local c = services.store:collection("\(collection)")
            c:on("didChange", function(change)
              for _, record in ipairs(change.insertedItems) do print(record.id) end
            end)
            timer.after(600, function() os.exit(0) end)
            print("ready")
            """]
        var environment = ProcessInfo.processInfo.environment
        environment["CRESCENT_STORE_URL"] = url
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try process.run()
        } catch {
            throw BenchFailure(row: row, reason: "cannot start the observing crescent: \(error)")
        }
        let reading = output.fileHandleForReading
        // Reads until the process's output ends (``stop()``), holding this object until then.
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = reading.availableData
                guard !chunk.isEmpty else { return }
                let now = MonotonicClock.nanoseconds()
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    if line == "ready" {
                        ready.withLock { $0 = true }
                    } else if let id = Int64(line) {
                        arrivals.withLock { $0[id] = $0[id] ?? now }
                    }
                }
            }
        }
        for _ in 0..<600 where !ready.withLock({ $0 }) && process.isRunning { usleep(50_000) }
        guard ready.withLock({ $0 }) else {
            stop()
            throw BenchFailure(row: row, reason: "the observing crescent did not start within 30 s")
        }
    }

    /// When the line with `id` arrived, or nil.
    func arrival(of id: Int64) -> UInt64? { arrivals.withLock { $0[id] } }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
