import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C on `crescent test`: the run died by the signal at once, with no summary and no JUnit
/// file, and a Ctrl-C that only a test's `os.execute` program saw ended the program while the run
/// went on (and could end 0). Each test starts crescent in a process group of its own, with
/// SIGINT at its default, and sends SIGINT to the whole group as a terminal does.
@Suite struct HardeningTestInterruptTests {
    /// Starts `crescent test ARGUMENTS` on `specs` in a process group of its own.
    private static func start(_ specs: [String: String], _ arguments: [String]) throws -> (CrescentProcess, Sandbox) {
        let sandbox = try Sandbox()
        for (name, source) in specs { _ = try sandbox.write("spec/" + name, source) }
        let process = CrescentProcess(["test"] + arguments, directory: sandbox.path, processGroup: true)
        try process.start()
        return (process, sandbox)
    }

    /// The pids of `pid`'s descendants whose program is `name`, from /proc.
    private static func descendants(of pid: Int32, named name: String) -> [Int32] {
        var parents: [Int32: Int32] = [:], names: [Int32: String] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let id = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
            names[id] = String(stat[stat.index(after: open)..<close])
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { parents[id] = parent }
        }
        return names.keys.filter { id in
            guard names[id] == name else { return false }
            var at = parents[id]
            for _ in 0..<64 {
                guard let current = at, current > 1 else { return false }
                if current == pid { return true }
                at = parents[current]
            }
            return false
        }
    }

    @Test func ctrlCStopsTheRunReportingWhatRan() async throws {
        let (process, sandbox) = try Self.start([
            "a_spec.lua": """
                describe("a", function()
                  it("first", function() assert.equals(1, 1) end)
                  it("loops", function()
                    local f = io.open("looping", "w"); f:close()
                    while true do end
                  end)
                  it("third", function() end)
                end)
                """,
            "b_spec.lua": "it(\"b\", function() end)\n",
        ], ["--timeout", "120", "--junit", "report.xml"])
        #expect(await waitUntil { FileManager.default.fileExists(atPath: sandbox.path + "/looping") })
        process.send(SIGINT, expecting: .handled, toGroup: true)
        let result = await process.finish(timeLimit: 60)
        #expect(result.status == 130 && !result.killedBySignal, "\(result)")
        #expect(result.elapsed < 30, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.last == "1 passed, 0 failed", "\(result)")
        #expect(lines.contains("interrupted (SIGINT) during a loops: it is not counted, and the tests after it did not run"),
                "\(result)")
        #expect(!result.stdout.contains("third") && !result.stdout.contains("ok      b"), "\(result)")
        #expect(result.stderr.contains("Ctrl-C again quits at once"), "\(result)")
        let junit = (try? String(contentsOfFile: sandbox.path + "/report.xml", encoding: .utf8)) ?? ""
        #expect(junit.contains("tests=\"1\"") && junit.contains("name=\"a first\"") && !junit.contains("loops"), "\(junit)")
    }

    /// system() ignores SIGINT in its caller while the program runs, so only the program sees a
    /// Ctrl-C: its wait status (ended by SIGINT) stops the run, as bash and Python take it.
    @Test func aCtrlCOnlyATestsProgramSawStopsTheRun() async throws {
        let (process, sandbox) = try Self.start([
            "p_spec.lua": """
                it("first", function() end)
                it("runs a program", function() os.execute("sleep 60") end)
                it("after", function() end)
                """,
        ], ["--timeout", "120", "--junit", "report.xml"])
        #expect(await waitUntil { !Self.descendants(of: process.pid, named: "sleep").isEmpty })
        process.send(SIGINT, expecting: .handled, toGroup: true)
        let result = await process.finish(timeLimit: 60)
        #expect(result.status == 130 && !result.killedBySignal, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 0 failed", "\(result)")
        #expect(result.stdout.contains("interrupted (SIGINT) during runs a program"), "\(result)")
        #expect(!result.stdout.contains("ok      after"), "\(result)")
        #expect(FileManager.default.fileExists(atPath: sandbox.path + "/report.xml"))
    }

    /// A test whose host does not close (a finalizer that loops, where no hook runs, kept until
    /// the file's Lua state closes): the first Ctrl-C stops the run, a second one quits at once
    /// without waiting for the report.
    @Test func aSecondCtrlCQuitsAtOnce() async throws {
        let (process, sandbox) = try Self.start([
            "g_spec.lua": """
                it("first", function() end)
                it("never closes", function()
                  _G.keep = setmetatable({}, { __gc = function() while true do end end })
                  local f = io.open("looping", "w"); f:close()
                  while true do end
                end)
                """,
        ], ["--timeout", "120"])
        #expect(await waitUntil { FileManager.default.fileExists(atPath: sandbox.path + "/looping") })
        process.send(SIGINT, expecting: .handled, toGroup: true)
        #expect(await process.waitForOutput("Ctrl-C again quits at once", onStderr: true, within: 30))
        process.send(SIGINT, expecting: .handled, toGroup: true)
        let result = await process.finish(timeLimit: 60)
        #expect(result.status == 130 && !result.killedBySignal, "\(result)")
        #expect(result.stderr.contains("interrupted again: stopped at once"), "\(result)")
        #expect(!result.stdout.contains("passed"), "\(result)")
    }
}
