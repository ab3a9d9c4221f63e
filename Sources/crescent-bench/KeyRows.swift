import Foundation
import Glibc
import LuaBridge

/// The rows of a controller app driven from a terminal: the crescent binary runs a
/// selectable 10,000-row table on a pseudo-terminal, and the bench presses `down` and `up` in
/// turn (the selection stays on screen, so each move changes two rows).
///
/// - `key-to-frame`: from a key's bytes written to the terminal to the end of the frame it
///   causes (`CSI ?2026l`), against formatting the same screenful in plain Lua
///   (`string.format` + `table.concat`) in the same run.
/// - `key-bytes`: the bytes of that frame, against two changed rows' worth (each row's cursor
///   move and its full width, reverse video on one, inside the synchronized-output marks).
enum KeyRows {
    static let columns = 100
    static let rows = 30
    static let moves = 200

    static let script = """
        local rows = {}
        for i = 1, 10000 do rows[i] = { name = "row " .. i, n = i } end
        local T = controller("Table")
        -- A key of its own, so keys go to the table (a controller without keys keeps the command line open).
        function T:viewDidLoad() self:key("r", "refresh", "refresh") end
        function T:refresh() end
        function T:loadView() return view.table { id = "t", selectable = true, columns = { "name", "n" }, rows = rows } end
        app.push(T)
        """

    /// The same screenful as plain Lua formats it: the rows a frame shows, padded to the width.
    static let baselineSource = """
        local rows = {}
        for i = 1, 10000 do rows[i] = { name = "row " .. i, n = i } end
        local format, concat = string.format, table.concat
        return function(first)
          local lines = {}
          for i = first, first + \(rows - 1) do
            local row = rows[i]
            lines[#lines + 1] = format("%-49s %50d", row.name, row.n)
          end
          return #concat(lines, "\\n")
        end
        """

    static func keyToFrame() throws(BenchFailure) -> BenchRow {
        let row = "key-to-frame"
        let frames = try measureFrames(row: row)
        let value = Statistics.median(frames.map(\.nanoseconds)) / 1000
        let baseline = try formatBaseline(row: row)
        let roundTrip = try ptyRoundTrip(row: row)
        return BenchRow(name: row, value: value, baseline: baseline, unit: "µs", goal: .ratioAtMost(2.0),
                        note: "median of \(moves) down/up keys on a selectable 10,000-row table (crescent binary on a \(columns)x\(rows) pty), "
                            + "from the key's bytes written to the frame's end read back; baseline: the same screenful "
                            + "formatted in plain Lua (string.format + table.concat), median of 2,000 calls, in-process: it pays "
                            + "no pty round trip, which alone (a lua5.4 program answering each key with the frame's end mark only, "
                            + "timed the same way) took \(String(format: "%.1f", roundTrip)) µs here, "
                            + "\(String(format: "%.1f", roundTrip / baseline))x the baseline; key-to-frame-pty is the fair comparison")
    }

    /// A plain `lua5.4` program on the pty answering each key with the frame's end mark and
    /// nothing else: what any program's frame pays before it formats anything.
    static let echoProgram = """
        os.execute("stty raw -echo")
        local write = io.write
        write("\\27[?2026l")
        io.stdout:flush()
        while true do
          local key = io.read(1)
          if key == nil or key == "q" then break end
          if key == "\\27" then
            io.read(2)
            write("\\27[?2026l")
            io.stdout:flush()
          end
        end
        os.execute("stty sane")
        """

    /// Median microseconds of the pty round trip alone (``echoProgram``), timed as frames are.
    static func ptyRoundTrip(row: String) throws(BenchFailure) -> Double {
        let folder = try BenchFolder(row: row)
        try folder.write("echo.lua", echoProgram, row: row)
        let echoes = try measureFrames(row: row, command: ["/usr/bin/env", StartupBench.plainLua, folder.path + "/echo.lua"])
        return Statistics.median(echoes.map(\.nanoseconds)) / 1000
    }

    /// A plain `lua5.4` program on the same kind of pty answering the same keys: raw mode, then
    /// for each `down`/`up` the same screenful (the rows shown, the selected one in reverse video)
    /// written whole inside the synchronized-output marks. What a frame costs with nothing of a
    /// host: the pty round trip and the formatting.
    static let plainLuaProgram = """
        os.execute("stty raw -echo")
        local rows = {}
        for i = 1, 10000 do rows[i] = { name = "row " .. i, n = i } end
        local format, concat, write = string.format, table.concat, io.write
        local selected = 1
        local function frame()
          local lines = { "\\27[?2026h" }
          for i = 1, \(rows - 2) do
            local row, on = rows[i], i == selected
            lines[#lines + 1] = format("\\27[%d;1H%s%-47s %50d%s", i, on and "\\27[7m> " or "  ", row.name, row.n, on and "\\27[0m" or "")
          end
          lines[#lines + 1] = "\\27[?2026l"
          write(concat(lines))
          io.stdout:flush()
        end
        frame()
        while true do
          local key = io.read(1)
          if key == nil or key == "q" then break end
          if key == "\\27" then
            local rest = io.read(2)
            if rest == "[B" then selected = selected + 1 elseif rest == "[A" then selected = selected - 1 end
            frame()
          end
        end
        os.execute("stty sane")
        """

    /// `key-to-frame-pty`: the crescent side of `key-to-frame` against ``plainLuaProgram`` on the
    /// same pty, both timed the same way (the fair comparison: `key-to-frame`'s baseline formats
    /// in-process and pays no pty round trip).
    static func keyToFramePty() throws(BenchFailure) -> BenchRow {
        let row = "key-to-frame-pty"
        let frames = try measureFrames(row: row)
        let folder = try BenchFolder(row: row)
        try folder.write("plain.lua", plainLuaProgram, row: row)
        let plain = try measureFrames(row: row, command: ["/usr/bin/env", StartupBench.plainLua, folder.path + "/plain.lua"])
        return BenchRow(name: row, value: Statistics.median(frames.map(\.nanoseconds)) / 1000,
                        baseline: Statistics.median(plain.map(\.nanoseconds)) / 1000, unit: "µs", goal: .ratioAtMost(2.0),
                        note: "median of \(moves) down/up keys, from the key's bytes written to the frame's end read back, on a "
                            + "\(columns)x\(rows) pty: the crescent binary's selectable 10,000-row table against a plain lua5.4 program "
                            + "answering each key with the same screenful written whole")
    }

    static func keyBytes() throws(BenchFailure) -> BenchRow {
        let row = "key-bytes"
        let frames = try measureFrames(row: row)
        let value = Statistics.median(frames.map { Double($0.bytes) })
        // Two rows' worth: each row's cursor move and its full width, reverse video on and off
        // for the selected one, and the synchronized-output marks around the frame.
        let twoRows = 2 * ("\u{1B}[\(rows);1H".utf8.count + columns) + "\u{1B}[7m\u{1B}[0m".utf8.count
            + "\u{1B}[?2026h\u{1B}[?2026l".utf8.count
        return BenchRow(name: row, value: value, baseline: Double(twoRows), unit: "B", goal: .ratioAtMost(1.0),
                        note: "median bytes written per selection move (the frames of key-to-frame); "
                            + "baseline: two changed \(columns)-column rows with their cursor moves, reverse video and synchronized-output marks")
    }

    private struct Frame {
        let nanoseconds: Double
        let bytes: Int
    }

    /// Presses `down`/`up` in turn ``moves`` times and times each frame.
    /// `command` runs instead of the crescent binary's table when given.
    private static func measureFrames(row: String, command: [String]? = nil) throws(BenchFailure) -> [Frame] {
        let folder = try BenchFolder(row: row)
        try folder.write("table.lua", script, row: row)
        let launch = if let command { command } else { [try StartupBench.crescentPath(), folder.path + "/table.lua"] }
        let terminal = try BenchTerminal(row: row, command: launch,
                                         columns: columns, rows: rows)
        defer { terminal.stop() }
        // The first frame, whole.
        _ = try terminal.readFrame(within: 30)
        var frames: [Frame] = []
        for index in 0..<moves {
            let started = MonotonicClock.nanoseconds()
            terminal.write(index % 2 == 0 ? "\u{1B}[B" : "\u{1B}[A")
            let bytes = try terminal.readFrame(within: 10)
            frames.append(Frame(nanoseconds: Double(MonotonicClock.nanoseconds() - started), bytes: bytes))
        }
        return frames
    }

    /// Median microseconds to format one screenful in plain Lua.
    private static func formatBaseline(row: String) throws(BenchFailure) -> Double {
        let vm = try BenchVM.make(row: row)
        let format = try BenchVM.evaluate(baselineSource, in: vm, row: row)
        var samples: [Double] = []
        do {
            for index in 0..<2000 {
                let first = Int64(index % 100 + 1)
                samples.append(try MonotonicClock.time { () throws(LuaError) -> Void in _ = try vm.call(format, first) } / 1000)
            }
        } catch {
            throw BenchFailure(row: row, reason: error.message)
        }
        return Statistics.median(samples)
    }
}
