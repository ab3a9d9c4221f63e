import Foundation
import Testing

/// What the attack on the process and files services broke, end to end through the binary: a
/// program that does not read its input ended the host by SIGPIPE, a one-character file name
/// trapped in Foundation, programs spawned in a task outlived it and kept the run alive, and a
/// watch of a deleted folder stayed active forever.
@Suite struct HardeningAutomationTests {
    @Test func aProgramThatNeverReadsItsInputFailsOnlyItsWrite() async throws {
        let sandbox = try Sandbox()
        let result = try await crescent(["-e", """
            task(function()
              local outcome, err = services.process:run({ "true" }, { stdin = string.rep("z", 1 << 20) })
              print("ran", outcome and outcome.status, err and err.code)
              local again = services.process:run({ "true" }, { stdin = "z" })
              print("again", again and again.status)
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.contains { $0.hasPrefix("ran\t") }, "\(result)")
        #expect(result.stdoutLines.contains("again\t0"), "\(result)")
    }

    @Test func aOneCharacterFileNameIsWrittenAndAFolderOrTrailingSlashIsAnError() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.makeFolder("d")
        let result = try await crescent(["-e", """
            task(function()
              print(services.files:write("x", "a"))
              print(services.files:read("x"))
              local _, folder = services.files:write("d", "a")
              print("folder", folder and folder.code)
              local _, slash = services.files:write("y/", "a")
              print("slash", slash and slash.code)
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.count >= 4 && result.stdoutLines[1].hasPrefix("a\t"), "\(result)")
        #expect(result.stdoutLines.contains { $0.hasPrefix("folder\t") && !$0.hasSuffix("nil") }, "\(result)")
        #expect(result.stdoutLines.contains { $0.hasPrefix("slash\t") && !$0.hasSuffix("nil") }, "\(result)")
    }

    @Test func programsSpawnedInATaskEndWithItUnlessAskedToOutliveIt() async throws {
        let sandbox = try Sandbox()
        let result = try await crescent(["-e", """
            local process = services.process
            task(function() print("returned", process:spawn({ "sleep", "3010" }).pid) return 1 end)
            task(function() print("raised", process:spawn({ "sleep", "3011" }).pid) error("task fails") end)
            local waiting = task(function() print("cancelled", process:spawn({ "sleep", "3012" }).pid) sleep(100) end)
            timer.after(0.3, function() waiting:cancel() end)
            task(function()
              local kept = process:spawn({ "sh", "-c", "sleep 0.5; echo still here" }, { outliveTask = true })
              kept:on("didOutput", function(out) print("kept", out.line) end)
              kept:on("didExit", function(r) print("kept exited", r.status, r.signal) end)
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 1, "the raised task fails the run, which ends on its own: \(result)")
        #expect(!result.timedOut)
        #expect(result.stdoutLines.contains("kept\tstill here"), "\(result)")
        #expect(result.stdoutLines.contains("kept exited\t0\tnil"), "\(result)")
        for label in ["returned", "raised", "cancelled"] {
            let line = result.stdoutLines.first { $0.hasPrefix(label + "\t") }
            let pid = try #require(line.flatMap { Int32($0.dropFirst(label.count + 1)) }, "\(result)")
            #expect(!ProcessPluginTests.isAlive(pid), "the sleep of the task that \(label) is gone")
        }
    }

    @Test func aProgramAControllerSpawnsOutlivesTheMethodThatSpawnedIt() async throws {
        let sandbox = try Sandbox()
        let result = try await crescent(["--ui", "plain", "-e", """
            local Runner = controller("Runner")
            function Runner:loadView() return view.text { id = "status", text = "running" } end
            function Runner:viewDidLoad()
              local child = services.process:spawn({ "sh", "-c", "sleep 0.5; echo done" })
              child:on("didOutput", function(out) print("out", out.line) end)
              child:on("didExit", function(r) print("exited", r.status, r.signal) app.exit(0) end)
            end
            app.push(Runner)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.contains("out\tdone"), "\(result)")
        #expect(result.stdoutLines.contains("exited\t0\tnil"), "\(result)")
    }

    @Test func deletingAWatchedFolderEndsTheWatchAndLetsTheRunEnd() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.makeFolder("w6")
        let result = try await crescent(["-e", """
            local w = services.files:watch("w6")
            w:on("didChange", function(c) print("change", c.changes[#c.changes].kind, w.active) end)
            timer.after(0.3, function() os.execute("rm -rf w6") end)
            timer.after(1.5, function() print("active", w.active) end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(!result.timedOut)
        #expect(result.stdoutLines.contains { $0.hasPrefix("change\tdeleted") }, "\(result)")
        #expect(result.stdoutLines.contains("active\tfalse"), "\(result)")
    }
}

