import Foundation
import Glibc

/// The rows of the process service (issue 38), each a whole `crescent` process running a Lua
/// script, launch to exit, against a baseline doing the same work, best of 3 rounds each,
/// interleaved.
enum ProcessRows {
    static let runs = 1_000
    static let lineCount = 1_000_000

    // MARK: process-run

    /// Programs per second: `runs` sequential awaited `process:run({ "true" })` against
    /// Python's `subprocess.run(["true"])` in a loop.
    static func run() throws(BenchFailure) -> BenchRow {
        let row = "process-run"
        let folder = try BenchFolder(row: row)
        try folder.write("runs.lua", """
            task(function()
              for _ = 1, \(runs) do
                local r = services.process:run({ "true" })
                assert(r.status == 0)
              end
            end)
            """, row: row)
        try folder.write("runs.py", """
            import subprocess
            for _ in range(\(runs)):
                assert subprocess.run(["true"]).returncode == 0
            """, row: row)
        let crescent = try StartupBench.crescentPath()
        var ours: [Double] = [], python: [Double] = []
        for _ in 0..<3 {
            ours.append(Double(runs) / (try StartupBench.milliseconds(running: [crescent, folder.path + "/runs.lua"], row: row) / 1e3))
            python.append(Double(runs) / (try StartupBench.milliseconds(running: ["python3", folder.path + "/runs.py"], row: row) / 1e3))
        }
        return BenchRow(name: row, value: ours.max() ?? .nan, baseline: python.max() ?? .nan, unit: "runs/s", goal: .ratioAtLeast(1.0),
                        note: "\(runs) sequential awaited services.process:run({ \"true\" }) from a Lua script run by the crescent binary, "
                            + "launch to exit, best of 3; baseline: python3 running subprocess.run([\"true\"]) \(runs) times, launch to exit, best of 3")
    }

    // MARK: process-lines

    /// Lines per second a script hears as `didOutput` events from a program printing
    /// lines (``lineCount``), against `wc -l` reading the same program's output through a pipe.
    static func lines() throws(BenchFailure) -> BenchRow {
        let row = "process-lines"
        let folder = try BenchFolder(row: row)
        try folder.write("lines.lua", """
            local count = 0
            local p = services.process:spawn({ "seq", "\(lineCount)" })
            p:on("didOutput", function() count = count + 1 end)
            p:on("didExit", function() assert(count == \(lineCount), "heard " .. count .. " lines") end)
            """, row: row)
        let crescent = try StartupBench.crescentPath()
        var ours: [Double] = [], wc: [Double] = []
        for _ in 0..<3 {
            ours.append(Double(lineCount) / (try StartupBench.milliseconds(running: [crescent, folder.path + "/lines.lua"], row: row) / 1e3))
            wc.append(Double(lineCount) / (try StartupBench.milliseconds(running: ["/bin/sh", "-c", "seq \(lineCount) | wc -l"], row: row) / 1e3))
        }
        return BenchRow(name: row, value: ours.max() ?? .nan, baseline: wc.max() ?? .nan, unit: "lines/s", goal: .ratioAtLeast(0.5),
                        note: "a Lua script hearing each line of `seq \(lineCount)` as a didOutput event of services.process:spawn, "
                            + "crescent binary launch to exit, best of 3; baseline: sh -c 'seq \(lineCount) | wc -l', launch to exit, best of 3")
    }
}
