import Foundation
import Synchronization

/// A `crescent` process on a PostgreSQL store running a Lua script that prints whole numbers, one
/// a line; the bench notes when each line arrives (CLOCK_MONOTONIC). Two of them time a change
/// from one host to another: both sides' lines cross a pipe to the bench the same way, so the
/// difference of their arrivals is the time between the two prints.
final class TimedLinesProcess: Sendable {
    private let process: Process
    private let folder: String
    private let arrivals = Mutex<[Int64: UInt64]>([:])
    private let ready = Mutex(false)

    /// Starts `script` with `CRESCENT_STORE_URL=url` and waits (up to 30 s) for it to print
    /// `ready`.
    init(row: String, role: String, url: String, script: String) throws(BenchFailure) {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-bench-\(UUID().uuidString.prefix(8))").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: try StartupBench.crescentPath())
        process.arguments = ["--data-dir", folder, "-e", "io.stdout:setvbuf(\"line\")\n" + script]
        var environment = ProcessInfo.processInfo.environment
        environment["CRESCENT_STORE_URL"] = url
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try process.run()
        } catch {
            throw BenchFailure(row: row, reason: "cannot start the \(role) crescent: \(error)")
        }
        // Read until the process's output ends, holding this object until then.
        TimedLines.read(output.fileHandleForReading) { [self] line, now in
            if line == "ready" {
                ready.withLock { $0 = true }
            } else if let number = Int64(line) {
                arrivals.withLock { $0[number] = $0[number] ?? now }
            }
        }
        for _ in 0..<600 where !ready.withLock({ $0 }) && process.isRunning { usleep(50_000) }
        guard ready.withLock({ $0 }) else {
            stop()
            throw BenchFailure(row: row, reason: "the \(role) crescent did not start within 30 s")
        }
    }

    /// When the line with `number` arrived, or nil.
    func arrival(of number: Int64) -> UInt64? { arrivals.withLock { $0[number] } }

    /// Waits up to `seconds` for the process to end by itself; false if it is still running.
    func waitForExit(seconds: Int) -> Bool {
        for _ in 0..<(seconds * 20) where process.isRunning { usleep(50_000) }
        return !process.isRunning
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
