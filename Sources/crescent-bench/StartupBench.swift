import Foundation
import Glibc

/// The `startup` row: `crescent -e ''` as a whole process (spawn to exit) against `lua5.4 -e ''`.
///
/// Each is run `runs` times, alternately, after a few unrecorded warm-up runs; the value and the
/// baseline are medians in milliseconds. The goal is a ratio: at most 4 times Lua's own start, so
/// it holds on a slow machine as on a fast one. Both run as a new user's first command does: in
/// an empty working folder, with `XDG_DATA_HOME` an empty folder of the bench's, so no plugin is
/// found (`make bench` runs in the repository, whose `plugins/` crescent would otherwise load,
/// as it would any plugin the machine's user has installed; `startup-plugins` measures those).
/// The crescent binary is `$CRESCENT_BIN`, or `crescent` next to this executable (`make bench`
/// builds both into `.build/release`); the baseline is `$LUA_BIN`, or `lua5.4` on the `PATH`.
/// Children get `/dev/null` for stdin, stdout and stderr.
enum StartupBench {
    static let name = "startup"
    static let runs = 20
    static let warmups = 3
    static let goalRatio = 4.0

    /// The baseline's interpreter: `$LUA_BIN`, or `lua5.4` on the `PATH`.
    static var plainLua: String { environment("LUA_BIN") ?? "lua5.4" }

    static func run() throws(BenchFailure) -> BenchRow {
        try measure(row: name, crescentArguments: ["-e", ""], luaArguments: ["-e", ""])
    }

    /// The `startup-script` row: a script file run with options, as people type it (`crescent
    /// --data-dir DIR --fail-fast SCRIPT.lua`), against `lua5.4 SCRIPT.lua`; the script is plain
    /// Lua, the same file for both. The goal is `startup`'s.
    static let scriptName = "startup-script"
    static let script = "local squares = {}\nfor i = 1, 10 do squares[i] = i * i end\nprint(#squares)\n"

    static func runScript() throws(BenchFailure) -> BenchRow {
        let folder = try BenchFolder(row: scriptName)
        try folder.write("script.lua", script, row: scriptName)
        let path = folder.path + "/script.lua"
        return try measure(row: scriptName, crescentArguments: ["--data-dir", folder.path + "/data", "--fail-fast", path],
                           luaArguments: [path])
    }

    private static func measure(row: String, crescentArguments: [String], luaArguments: [String]) throws(BenchFailure) -> BenchRow {
        let crescent = try absoluteCrescentPath()
        let lua = plainLua
        let data = try BenchFolder(row: row)
        let samples = try inEmptyFolder(row: row) { () throws(BenchFailure) in
            try PairedSamples.collect(
                rounds: runs, warmups: warmups,
                subject: { () throws(BenchFailure) in
                    try milliseconds(running: [crescent] + crescentArguments, row: row, environment: ["XDG_DATA_HOME": data.path])
                },
                baseline: { () throws(BenchFailure) in try milliseconds(running: [lua] + luaArguments, row: row) }
            )
        }
        let range = { (samples: [Double]) in
            "\(NumberFormat.fixed(Statistics.minimum(samples), digits: 1))–\(NumberFormat.fixed(samples.max() ?? .nan, digits: 1)) ms"
        }
        let shown = { (arguments: [String]) in arguments.map { $0.isEmpty ? "\"\"" : $0 }.joined(separator: " ") }
        return BenchRow(
            name: row,
            value: Statistics.median(samples.subject),
            baseline: Statistics.median(samples.baseline),
            unit: "ms",
            goal: .ratioAtMost(goalRatio),
            note: "median of \(runs) runs of '\(crescent) \(shown(crescentArguments))' (range \(range(samples.subject))) "
                + "vs '\(lua) \(shown(luaArguments))' (range \(range(samples.baseline)))"
        )
    }

    /// ``crescentPath()`` made absolute, for a row that runs in a folder of its own.
    static func absoluteCrescentPath() throws(BenchFailure) -> String {
        let path = try crescentPath()
        return path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Runs `body` with an empty temporary folder as the working folder, then moves back.
    static func inEmptyFolder<T>(row: String, _ body: () throws(BenchFailure) -> T) throws(BenchFailure) -> T {
        let work = try BenchFolder(row: row)
        let home = FileManager.default.currentDirectoryPath
        guard FileManager.default.changeCurrentDirectoryPath(work.path) else {
            throw BenchFailure(row: row, reason: "cannot move to \(work.path)")
        }
        defer { _ = FileManager.default.changeCurrentDirectoryPath(home) }
        return try body()
    }

    /// `$CRESCENT_BIN`, or `crescent` in the directory this executable was started from.
    static func crescentPath() throws(BenchFailure) -> String {
        let path = environment("CRESCENT_BIN") ?? ownDirectory() + "/crescent"
        guard access(path, X_OK) == 0 else {
            throw BenchFailure(row: name, reason: "cannot run '\(path)' (build it with 'make bench' or set CRESCENT_BIN)")
        }
        return path
    }

    /// This program's own path, for a row measured in a process of its own.
    static func benchPath() throws(BenchFailure) -> String {
        guard let path = executablePath() else { throw BenchFailure(row: name, reason: "cannot find crescent-bench's own path (/proc/self/exe)") }
        return path
    }

    /// `/proc/self/exe`, read.
    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
    }

    /// The directory of `argv[0]` when it names a path, else of `/proc/self/exe`.
    private static func ownDirectory() -> String {
        var invoked = CommandLine.arguments.first ?? ""
        if !invoked.contains("/") { invoked = executablePath() ?? "./" }
        guard let slash = invoked.lastIndex(of: "/") else { return "." }
        return slash == invoked.startIndex ? "/" : String(invoked[..<slash])
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// Spawns `arguments` (the first is the program: a path, or a name looked up in `PATH`), waits
    /// for it and returns the wall time in milliseconds. A failure to start or a non-zero exit fails.
    /// - Parameter environment: variables set or replaced in the child's environment.
    static func milliseconds(running arguments: [String], row: String = name,
                             environment extra: [String: String] = [:]) throws(BenchFailure) -> Double {
        try TimedRun.run(arguments, stdout: "/dev/null", stderr: "/dev/null", environment: extra, row: row).wallSeconds * 1000
    }
}
