import Foundation
import Glibc

/// The rows of the process service, each a whole `crescent` process running a Lua
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

    /// Lines per second the process service reads from a program printing ``lineCount`` lines:
    /// a script's `process:run({ "seq", n })`, its output checked whole (every line's bytes, the
    /// last line), launch to exit, against `wc -l` reading the same program's output through a
    /// pipe, launch to exit. The note also gives the same run with the lines counted in Lua
    /// (`gsub`), the script's own work on top of the reading.
    static func lines() throws(BenchFailure) -> BenchRow {
        let row = "process-lines"
        let folder = try BenchFolder(row: row)
        // seq's output: the digits of 1…n, one newline each.
        let bytes = (1...lineCount).reduce(0) { $0 + String($1).utf8.count + 1 }
        try folder.write("run.lua", """
            task(function()
              local r = services.process:run({ "seq", "\(lineCount)" })
              assert(r.status == 0 and not r.truncated and #r.stdout == \(bytes), "read " .. #r.stdout .. " bytes")
              assert(r.stdout:sub(-\(String(lineCount).count + 2)) == "\\n\(lineCount)\\n", "the last line is not \(lineCount)")
            end)
            """, row: row)
        try folder.write("count.lua", """
            task(function()
              local r = services.process:run({ "seq", "\(lineCount)" })
              local _, lines = r.stdout:gsub("\\n", "")
              assert(r.status == 0 and lines == \(lineCount), "counted " .. lines .. " lines")
            end)
            """, row: row)
        let crescent = try StartupBench.crescentPath()
        var ours: [Double] = [], counted: [Double] = [], wc: [Double] = []
        for _ in 0..<rounds {
            ours.append(try StartupBench.milliseconds(running: [crescent, folder.path + "/run.lua"], row: row))
            wc.append(try StartupBench.milliseconds(running: ["/bin/sh", "-c", "seq \(lineCount) | wc -l"], row: row))
            counted.append(try StartupBench.milliseconds(running: [crescent, folder.path + "/count.lua"], row: row))
        }
        let rate = { (milliseconds: Double) in Double(lineCount) / (milliseconds / 1e3) }
        let countedRatio = rate(counted.min() ?? .nan) / rate(wc.min() ?? .nan)
        return BenchRow(name: row, value: rate(ours.min() ?? .nan), baseline: rate(wc.min() ?? .nan), unit: "lines/s", goal: .ratioAtLeast(0.5),
                        note: "a Lua script's awaited services.process:run({ \"seq\", \"\(lineCount)\" }), its stdout checked whole (length, last line), "
                            + "crescent binary launch to exit, best of \(rounds) (\(spread(ours))); baseline: sh -c 'seq \(lineCount) | wc -l', "
                            + "launch to exit, best of \(rounds) (\(spread(wc))); the same run with the lines counted in Lua (stdout:gsub) takes "
                            + "\(spread(counted)), ratio " + NumberFormat.fixed(countedRatio, digits: 2))
    }

    // MARK: process-line-events

    /// Lines per second a script hears one by one as `didOutput` events of `process:spawn` from
    /// a program printing ``lineCount`` lines, against plain `lua5.4` counting the same program's
    /// lines with `io.lines()` from a pipe; both launch to exit.
    static func lineEvents() throws(BenchFailure) -> BenchRow {
        let row = "process-line-events"
        let folder = try BenchFolder(row: row)
        try folder.write("lines.lua", """
            local count = 0
            local p = services.process:spawn({ "seq", "\(lineCount)" })
            p:on("didOutput", function() count = count + 1 end)
            p:on("didExit", function() assert(count == \(lineCount), "heard " .. count .. " lines") end)
            """, row: row)
        try folder.write("plain.lua", """
            local count = 0
            for _ in io.lines() do count = count + 1 end
            assert(count == \(lineCount), "read " .. count .. " lines")
            """, row: row)
        let crescent = try StartupBench.crescentPath()
        var ours: [Double] = [], lua: [Double] = []
        for _ in 0..<rounds {
            ours.append(try StartupBench.milliseconds(running: [crescent, folder.path + "/lines.lua"], row: row))
            lua.append(try StartupBench.milliseconds(running: ["/bin/sh", "-c", "seq \(lineCount) | \(StartupBench.plainLua) \(folder.path)/plain.lua"], row: row))
        }
        let rate = { (milliseconds: Double) in Double(lineCount) / (milliseconds / 1e3) }
        return BenchRow(name: row, value: rate(ours.min() ?? .nan), baseline: rate(lua.min() ?? .nan), unit: "lines/s", goal: .informational,
                        note: "a Lua script hearing each line of `seq \(lineCount)` as a didOutput event of services.process:spawn (the lines "
                            + "of one read reach the loop as one report), crescent binary launch to exit, best of \(rounds) (\(spread(ours))); "
                            + "baseline: sh -c 'seq \(lineCount) | \(StartupBench.plainLua)' counting io.lines(), launch to exit, best of \(rounds) (\(spread(lua)))")
    }

    static let rounds = 5

    /// `min–max ms` of `samples` (milliseconds).
    private static func spread(_ samples: [Double]) -> String {
        NumberFormat.fixed(samples.min() ?? .nan, digits: 1) + "–" + NumberFormat.fixed(samples.max() ?? .nan, digits: 1) + " ms"
    }
}
