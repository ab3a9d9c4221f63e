import CrescentKit
import Foundation
import Model
import Services
import Testing

/// `services.process` from scripts on a real loop: awaited runs, spawned processes whose events
/// keep the run alive until they exit, ownership (the script's end kills what it spawned, checked
/// in /proc), a loop that keeps turning while programs run, and bad input raised at the call.
@Suite struct ProcessLuaTests {
    @Test func anAwaitedRunGivesStatusSignalAndOutput() async {
        let run = await RealLoopRun.run("""
            task(function()
              local r = services.process:run({ "sh", "-c", "echo hi; echo oops >&2; exit 4" })
              print(r.status, r.signal, r.stdout, r.stderr, r.truncated, r.timedOut)
              local k = services.process:run({ "sh", "-c", "kill -KILL $$" })
              print(k.status, k.signal)
              local _, err = services.process:run({ "no-such-program-crescent" })
              print(err.code, err.message)
            end)
            """, options: HostOptions(), plugins: [StandardPlugin()])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["4\tnil\thi", "\toops", "\tfalse\tfalse", "nil\tSIGKILL",
                              "not_found\tprogram 'no-such-program-crescent' was not found in PATH"])
    }

    @Test func theLoopTurnsWhileAProgramRuns() async {
        let run = await RealLoopRun.run("""
            local ticks = 0
            local t = timer.every(0.02, function() ticks = ticks + 1 end)
            services.process:run({ "sleep", "0.5" }, function(r)
              t:cancel()
              print(r.status, ticks >= 10)
            end)
            """, options: HostOptions(), plugins: [StandardPlugin()])
        #expect(run.lines == ["0\ttrue"], "\(run.stderr)")
    }

    @Test func aSpawnedProcessStreamsLinesAndKeepsTheRunAliveUntilItExits() async {
        let run = await RealLoopRun.run("""
            local p = services.process:spawn({ "cat" })
            p:on("didOutput", function(out) print(out.stream, out.line) end)
            p:on("didExit", function(e) print("exit", e.status, e.signal, p.running) end)
            print(p.running, math.type(p.pid))
            p:write("alpha\\nbeta\\n")
            timer.after(0.1, function() p:write("gamma") p:closeInput() end)
            """, options: HostOptions(), plugins: [StandardPlugin()])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["true\tinteger", "stdout\talpha", "stdout\tbeta", "stdout\tgamma", "exit\t0\tnil\tfalse"])
    }

    @Test func manyLinesReachAHandlerOneByOneInOrderAndAHandlerCanStopHearingThem() async {
        // The lines of one read come to the loop as one report: each is still its own event, a
        // subscription cancelled by its handler hears no more of them, and didExit comes last.
        let run = await RealLoopRun.run("""
            local count, inOrder, stopped = 0, true, 0
            local p = services.process:spawn({ "sh", "-c", "seq 1 50000; echo done >&2" })
            p:on("didOutput", function(out)
              if out.stream == "stdout" then
                count = count + 1
                if tonumber(out.line) ~= count then inOrder = false end
              else
                print(out.stream, out.line, count)
              end
            end)
            local sub
            sub = p:on("didOutput", function(out)
              stopped = stopped + 1
              if stopped == 3 then sub:cancel() end
            end)
            p:on("didExit", function(e) print("exit", e.status, count, inOrder, stopped) end)
            """, options: HostOptions(), plugins: [StandardPlugin()])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.last == "exit\t0\t50000\ttrue\t3")
        #expect(run.lines.count == 2 && run.lines.first?.hasPrefix("stderr\tdone\t") == true, "\(run.lines)")
    }

    @Test func killAndWaitReportTheSignal() async {
        let run = await RealLoopRun.run("""
            task(function()
              local p = services.process:spawn({ "sleep", "30" })
              p:kill()
              local e = p:wait()
              print(e.status, e.signal)
              local q = services.process:spawn({ "sleep", "30" })
              q:kill("INT")
              print(q:wait().signal)
            end)
            """, options: HostOptions(), plugins: [StandardPlugin()])
        #expect(run.lines == ["nil\tSIGTERM", "SIGINT"], "\(run.stderr)")
    }

    @Test func theScriptsEndKillsWhatItSpawnedGroupAndAll() async throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-owned-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        let run = await RealLoopRun.run("""
            local p = services.process:spawn({ "sh", "-c", "sleep 60 & echo $$ > \(pidFile); wait" })
            timer.after(0.3, function() app.exit(0) end)
            """, options: HostOptions(), plugins: [StandardPlugin()])
        #expect(run.status == 0, "\(run.stderr)")
        let leader = try #require(Int32((try? String(contentsOfFile: pidFile, encoding: .utf8))?.dropLast() ?? ""))
        #expect(await eventuallyTrue { !FileManager.default.fileExists(atPath: "/proc/\(leader)") }, "the spawned program is gone and reaped")
    }

    @Test func aCancelledRunKillsItsProgram() async throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-cancel-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        let run = await RealLoopRun.run("""
            local r = services.process:run({ "sh", "-c", "echo $$ > \(pidFile); exec sleep 120" }, function(r, err) print(err.code) end)
            timer.after(0.3, function() r:cancel() end)
            """, options: HostOptions(), plugins: [StandardPlugin()])
        #expect(run.lines == ["cancelled"], "\(run.stderr)")
        // CI's loaded run took 11.6 s to start, cancel and end; the bound only has to tell "cancelled" from "waited 120 s".
        #expect(run.seconds < 60, "the run does not wait for the program (took \(run.seconds) s)")
        let leader = try #require(Int32((try? String(contentsOfFile: pidFile, encoding: .utf8))?.dropLast() ?? ""))
        #expect(await eventuallyTrue { !FileManager.default.fileExists(atPath: "/proc/\(leader)") }, "the program is gone and reaped")
    }

    @Test func badInputIsRaisedOrAnsweredWithItsReason() async {
        let run = await RealLoopRun.run("""
            print(pcall(services.process.spawn, services.process, 42))
            print(select(2, pcall(services.process.spawn, services.process, {})))
            print(select(2, pcall(services.process.spawn, services.process, { "echo", "a\\0b" })))
            task(function()
              local _, err = services.process:run({ "ls" }, { cwd = "/no/such/folder" })
              print(err.code, err.message)
            end)
            """, options: HostOptions(), plugins: [StandardPlugin()])
        #expect(run.lines.count == 4, "\(run.stdout)\n\(run.stderr)")
        #expect(run.lines.first?.hasPrefix("false\tprocess:spawn(argv[, options]): argument #1 must be an array of strings or a string, got number") == true, "\(run.lines)")
        #expect(run.lines.dropFirst().first?.contains("argv is empty") == true)
        #expect(run.lines.dropFirst(2).first?.contains("argv[2] holds a NUL byte") == true)
        #expect(run.lines.last == "not_found\tcwd '/no/such/folder' does not exist")
    }
}

/// Polls `condition` every 10 ms for up to 5 s.
private func eventuallyTrue(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<500 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
