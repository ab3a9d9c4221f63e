import CrescentKit
import LuaBridge
import Testing

@Suite struct TimerTests {
    @Test func timersFireInDeadlineThenCreationOrder() throws {
        let test = try TestHost()
        test.run("""
            timer.after(0.3, function() print("c") end)
            timer.after(0.1, function() print("a1") end)
            timer.after(0.1, function() print("a2") end)
            timer.after(0.2, function() print("b") end)
            """)
        #expect(test.lines.isEmpty)
        test.advance(seconds: 0.1)
        #expect(test.lines == ["a1", "a2"])
        #expect(test.exitStatus == nil)
        test.advance(seconds: 0.25)
        #expect(test.lines == ["a1", "a2", "b", "c"])
        #expect(test.exitStatus == 0, "nothing left to do: the run ends")
    }

    @Test func everyRepeatsUntilCancelledWithTheScriptsOwnHandle() throws {
        let test = try TestHost()
        test.run("""
            local handle
            handle = timer.every(1, function(t)
              print(t.firings, t == handle, t.active)
              if t.firings == 3 then t:cancel() print("cancelled", t.active) end
            end)
            """)
        for _ in 0..<5 { test.advance(seconds: 1) }
        #expect(test.lines == ["1\ttrue\ttrue", "2\ttrue\ttrue", "3\ttrue\ttrue", "cancelled\tfalse"])
        #expect(test.exitStatus == 0)
    }

    @Test func cancelledTimersReleaseTheirReferences() throws {
        let test = try TestHost()
        test.run("keepalive = timer.every(100, function() end)")
        let before = test.host.vm.liveReferences
        test.run("""
            for i = 1, 1000 do timer.after(10, function() end):cancel() end
            keep = timer.after(10, function() end)
            """)
        #expect(test.host.vm.liveReferences == before + 2, "one live timer pins its callback and handle")
        test.run("keep:cancel()")
        #expect(test.host.vm.liveReferences == before)
    }

    @Test func badArgumentsNameTheFunction() throws {
        let test = try TestHost()
        test.run("""
            print(select(2, pcall(timer.after, "soon", print)))
            print(select(2, pcall(timer.after, 1, 42)))
            print(select(2, pcall(timer.every, 0, print)))
            print(select(2, pcall(timer.after, -1, print)))
            """)
        #expect(test.lines == [
            "bad argument #1 to 'timer.after' (number expected, got string)",
            "bad argument #2 to 'timer.after' (function expected, got number)",
            "bad argument #1 to 'timer.every' (an interval of 0 s would never let the loop rest; use a positive number)",
            "bad argument #1 to 'timer.after' (seconds must be a finite number >= 0, got -1.0)",
        ])
    }

    @Test func aFailingCallbackIsReportedAndTheRunGoesOn() throws {
        let test = try TestHost()
        test.run("""
            timer.after(1, function() error("first fails") end)
            timer.after(2, function() print("second runs") end)
            """)
        test.advance(seconds: 3)
        #expect(test.stderr.contains("crescent: error in timer callback: test.lua:1: first fails"))
        #expect(test.stderr.contains("stack traceback:"))
        #expect(test.lines == ["second runs"])
        #expect(test.exitStatus == 1)
    }

    @Test func failFastStopsAtTheFirstHandlerError() throws {
        let test = try TestHost(failFast: true)
        test.run("""
            timer.after(1, function() error("first fails") end)
            timer.after(2, function() print("second runs") end)
            """)
        test.advance(seconds: 3)
        #expect(test.lines.isEmpty)
        #expect(test.exitStatus == 1)
    }

    @Test func appExitStopsAtOnce() throws {
        let test = try TestHost()
        test.run("""
            timer.after(1, function() print("before") app.exit(3) print("after") end)
            timer.after(2, function() print("later timer") end)
            """)
        test.advance(seconds: 5)
        #expect(test.lines == ["before"])
        #expect(test.exitStatus == 3)
        #expect(test.stderr.isEmpty)
    }
}
