import CrescentKit
import Model
import Synchronization
import Testing

/// DESIGN.md "Services", completion contract: exactly once, always asynchronously, `result` nil
/// when `err` is set, `Request:cancel()` → `cancelled`, and the error values.
@Suite struct CompletionTests {
    @Test func aCompletionRunsOnceAndNeverBeforeTheMethodReturns() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local returned, calls = false, 0
            local request = t:set(25, function(result, err)
              calls = calls + 1
              print("completion", result, err, returned, calls)
            end)
            returned = true
            print(request, request.done, request.method)
            timer.after(1, function() print("later", calls, request.done, request) end)
            """)
        #expect(test.lines == ["Request(thermostat.set, pending)\tfalse\tthermostat.set"],
                "a synchronous implementation still completes on a later turn")
        test.settle()
        test.advance(seconds: 1)
        #expect(test.lines.dropFirst() == ["completion\t25.0\tnil\ttrue\t1", "later\t1\ttrue\tRequest(thermostat.set, done)"])
        #expect(test.exitStatus == 0)
    }

    /// A method that answers through a reply keeps the contract whether it answers at once or
    /// later; cancelling marks the reply, and answers after the first count for nothing.
    @Test func aReplyAnsweredAtOnceOrLaterCompletesOnceOnALaterTurn() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            t:hold(true, function(result, err) print("at once", result, err) end)
            t:hold(false, function(result, err) print("later", result, err) end)
            local cancelled = t:hold(false, function(result, err) print("cancelled", result, err.code) end)
            cancelled:cancel()
            task(function() print("awaited", t:hold(true)) end)
            print("returned")
            """)
        #expect(test.lines == ["returned"])
        let held = thermostat.heldReplies.withLock { $0 }
        #expect(held.count == 2)
        #expect(held.map(\.isCancelled) == [false, true])
        test.settle()
        #expect(test.lines == ["returned", "at once\tnow\tnil", "cancelled\tnil\tcancelled", "awaited\tnow\tnil"])
        held[0](.success("first"))
        held[0](.success("second"))
        held[1](.success("too late"))
        test.settle()
        #expect(test.lines.dropFirst(4) == ["later\tfirst\tnil"])
        #expect(test.exitStatus == 0)
    }

    @Test func errorsComeBackThroughTheCompletionWithResultNil() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            t:set(300, function(...)
              local result, err = ...
              print(result, select("#", ...))
              print(err.code, err.message, err.service, err.method)
              print(tostring(err))
              print(getmetatable(err))
            end)
            t:fail("not_found", function(result, err) print(result, tostring(err), err.code) end)
            t:fail("no such code", function(result, err) print(result, err.code) end)
            """)
        test.settle()
        #expect(test.lines == [
            "nil\t2",
            "invalid_argument\ttemperature 300.0 is outside [-50, 100]\tthermostat\tset",
            "thermostat.set: invalid_argument: temperature 300.0 is outside [-50, 100]",
            "error",
            "nil\tthermostat.fail: not_found: asked to fail\tnot_found",
            "nil\tinternal",
        ])
    }

    @Test func completionsRunInCallOrder() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local seen = {}
            for i = 1, 5 do t:echo(i, function(n) seen[#seen + 1] = n end) end
            t:fail("io", function() seen[#seen + 1] = "fail" end)
            t:echo("last", function(s) seen[#seen + 1] = s print(table.concat(seen, " ")) end)
            """)
        test.settle()
        #expect(test.lines == ["1 2 3 4 5 fail last"])
    }

    @Test func cancelBeforeTheCompletionRanDeliversCancelledOnce() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local calls = 0
            -- the immediate result (set worked) was already computed when cancel is called
            local request = t:set(10, function(result, err)
              calls = calls + 1
              print("completion", result, err.code, err.message, err.service, err.method, calls)
              print(tostring(err))
            end)
            request:cancel()
            request:cancel()
            print("cancelled", request.done, calls)
            timer.after(1, function() print("calls", calls, request.done) end)
            """)
        test.settle()
        test.advance(seconds: 1)
        #expect(test.lines == [
            "cancelled\tfalse\t0",
            "completion\tnil\tcancelled\tthe request was cancelled\tthermostat\tset\t1",
            "thermostat.set: cancelled: the request was cancelled",
            "calls\t1\ttrue",
        ])
        #expect(test.exitStatus == 0)
    }

    @Test func cancelAlsoWinsOverAFailureAlreadyComputed() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local r = services.thermostat:fail("io", function(result, err) print(result, err.code) end)
            r:cancel()
            """)
        test.settle()
        #expect(test.lines == ["nil\tcancelled"])
    }

    @Test func cancelAfterTheCompletionRanIsANoOp() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local request, calls = nil, 0
            request = t:set(12, function(result, err)
              calls = calls + 1
              print("completion", result, err)
              request:cancel()   -- from inside its own completion
            end)
            timer.after(1, function()
              request:cancel()
              request:cancel()
              print("calls", calls, request.done)
            end)
            """)
        test.settle()
        test.advance(seconds: 2)
        #expect(test.lines == ["completion\t12.0\tnil", "calls\t1\ttrue"])
        #expect(test.exitStatus == 0)
    }

    @Test func aCompletionThatRaisesIsReportedAndTheRunFails() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            services.thermostat:set(1, function() error("completion broke") end)
            services.thermostat:set(2, function(r) print("next one runs", r) end)
            """)
        test.settle()
        #expect(test.stderr.contains("crescent: error in the completion of thermostat.set: test.lua:1: completion broke"))
        #expect(test.stderr.contains("stack traceback:"))
        #expect(test.lines == ["next one runs\t2.0"])
        #expect(test.exitStatus == 1)
    }

    @Test func asyncCompletionsAndCancelOnARealLoop() async throws {
        let run = await RealLoopRun.run("""
            local t = services.thermostat
            local returned = false
            t:slow(0.05, function(result, err)
              print("slow", result, err, returned)
              local calls, long = 0, nil
              long = t:slow(100, function(result, err)
                calls = calls + 1
                print("long", result, err.code, err.service, err.method, calls)
                timer.after(0.05, function() long:cancel() print("calls", calls, long.done) end)
              end)
              timer.after(0.05, function() long:cancel() long:cancel() end)
            end)
            returned = true
            """, timeout: 80)
        #expect(run.status == 0)
        #expect(run.lines == ["slow\tdone\tnil\ttrue", "long\tnil\tcancelled\tthermostat\tslow\t1", "calls\t1\ttrue"])
        #expect(run.seconds < 60, "cancelling stops the Swift task: the run does not wait 100 s (took \(run.seconds) s; a loaded machine with the parallel tests took 16)")
    }
}
