import CrescentKit
import Model
import Testing

/// DESIGN.md "Observation and notifications": `observe`, coalescing, handler order and errors.
@Suite struct ObservationTests {
    @Test func theCurrentValueIsDeliveredOnceOnTheNextRound() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local sub
            sub = observe(t, "temperature", function(new, old, change)
              print(new, old, change.initial, change.coalesced, change.key, change.object == t,
                    rawequal(change.sub, sub), change.sub.active)
            end)
            observe(t, "label", function() print("never: initial = false") end, { initial = false })
            print("subscribed", sub.active)
            """)
        #expect(test.lines == ["subscribed\ttrue"], "nothing is delivered inside observe()")
        test.settle()
        #expect(test.lines == ["subscribed\ttrue", "20.0\tnil\ttrue\t0\ttemperature\ttrue\ttrue\ttrue"])
    }

    @Test func changesInOneTurnAreCoalescedLastValueWins() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local sub
            sub = t:observe("temperature", function(new, old, change)
              print("coalesced", new, old, change.initial, change.coalesced, rawequal(change.sub, sub))
            end, { initial = false })
            for _, v in ipairs({ 1, 2, 3, 4 }) do t:set(v, function() end) end
            """)
        test.settle()
        #expect(test.lines == ["coalesced\t4.0\t20.0\tfalse\t4\ttrue"])
    }

    @Test func coalesceFalseDeliversEveryChange() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            observe(t, "temperature", function(new, old, change)
              print(new, old, change.initial, change.coalesced)
            end, { coalesce = false })
            for _, v in ipairs({ 1, 2, 3 }) do t:set(v, function() end) end
            """)
        test.settle()
        #expect(test.lines == ["20.0\tnil\ttrue\t0", "1.0\t20.0\tfalse\t1", "2.0\t1.0\tfalse\t1", "3.0\t2.0\tfalse\t1"])
    }

    @Test func eachTurnGetsItsOwnDelivery() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            observe(t, "temperature", function(new, old, change) print(new, old, change.coalesced) end, { initial = false })
            t:set(1, function() end) t:set(2, function() end)
            timer.after(1, function() t:set(3, function() end) end)
            timer.after(2, function() t:set(4, function() end) t:set(5, function() end) t:set(6, function() end) end)
            timer.after(3, function() app.exit(0) end)
            """)
        test.settle()
        test.advance(seconds: 1)
        test.advance(seconds: 1)
        test.advance(seconds: 1)
        #expect(test.lines == ["2.0\t20.0\t2", "3.0\t2.0\t1", "6.0\t3.0\t3"])
    }

    @Test func handlersRunInSubscriptionOrder() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local order = {}
            for i = 1, 5 do
              observe(t, "temperature", function(new) order[#order + 1] = i .. ":" .. new end, { initial = false })
            end
            t:observe("temperature", function(new) order[#order + 1] = "6:" .. new print(table.concat(order, " ")) end,
                      { initial = false })
            t:set(7, function() end)
            """)
        test.settle()
        #expect(test.lines == ["1:7.0 2:7.0 3:7.0 4:7.0 5:7.0 6:7.0"])
    }

    @Test func aChangeMadeInsideAHandlerIsDeliveredInALaterRound() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local depth = 0
            observe(t, "temperature", function(new)
              depth = depth + 1
              print("A", new, depth)
              if new == 1 then t:rename("one") t:set(2, function() end) print("A set 2 returned") end
              depth = depth - 1
            end, { initial = false, coalesce = false })
            observe(t, "temperature", function(new) print("B", new, depth) end, { initial = false, coalesce = false })
            observe(t, "label", function(new) print("label", new, depth) end, { initial = false })
            t:set(1, function() end)
            """)
        test.settle()
        #expect(test.lines == [
            "A\t1.0\t1", "A set 2 returned", "B\t1.0\t0",
            "label\tone\t0", "A\t2.0\t1", "B\t2.0\t0",
        ])
    }

    @Test func aChangeFromSwiftIsNeverDeliveredInsideTheSetter() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            observe(services.thermostat, "temperature", function(new) print("observed", new) end, { initial = false })
            keep = timer.after(10, function() end)
            """)
        thermostat.temperature.set(33)
        #expect(test.lines.isEmpty)
        test.settle()
        #expect(test.lines == ["observed\t33.0"])
        test.run("keep:cancel()")
        test.settle()
        #expect(test.exitStatus == 0)
    }

    @Test func aRaisingHandlerIsReportedWithItsSiteAndTheOthersKeepRunning() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            observe(t, "temperature", function(new) print("first", new) end, { initial = false })
            local bad = observe(t, "temperature", function(new)
              error("handler broke at " .. new)
            end, { initial = false })
            observe(t, "temperature", function(new) print("third", new) end, { initial = false })
            t:set(5, function() end)
            timer.after(1, function() print("still active", bad.active, bad.errors, bad.deliveries) end)
            """)
        test.settle()
        test.advance(seconds: 1)
        #expect(test.lines == ["first\t5.0", "third\t5.0", "still active\ttrue\t1\t1"])
        let stderr = test.stderr
        #expect(stderr.contains("crescent: error in thermostat.temperature handler (subscribed at test.lua:3): test.lua:4: handler broke at 5.0"))
        #expect(stderr.contains("stack traceback:"))
        #expect(stderr.contains("test.lua:4: in function <test.lua:3>"))
        #expect(test.exitStatus == 1, "a handler error makes the run exit 1 at the end")
    }

    @Test func tenConsecutiveFailuresCancelTheSubscriptionWithAWarning() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local calls = 0
            local sub = observe(t, "temperature", function(new)
              calls = calls + 1
              error("always")
            end, { initial = false, coalesce = false })
            observe(t, "temperature", function(new) end, { initial = false, coalesce = false })
            for i = 1, 15 do t:set(i, function() end) end
            timer.after(1, function() print(calls, sub.active, sub.errors, sub.deliveries, #subscriptions()) end)
            """)
        test.settle()
        test.advance(seconds: 1)
        #expect(test.lines == ["10\tfalse\t10\t10\t1"])
        let reports = test.errorLines.filter { $0.hasPrefix("crescent:") }
        #expect(reports.count == 11)
        #expect(reports.last == "crescent: warning: cancelled the thermostat.temperature handler subscribed at test.lua:3 after 10 consecutive errors")
        #expect(test.exitStatus == 1)
    }

    @Test func aSuccessResetsTheConsecutiveFailureCount() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local sub = observe(t, "temperature", function(new)
              if new % 5 ~= 0 then error("fails") end
            end, { initial = false, coalesce = false })
            for i = 1, 30 do t:set(i, function() end) end
            timer.after(1, function() print(sub.active, sub.errors, sub.deliveries) sub:cancel() end)
            """)
        test.settle()
        test.advance(seconds: 1)
        #expect(test.lines == ["true\t24\t30"])
        #expect(!test.stderr.contains("consecutive errors"))
    }

    @Test func cancelIsIdempotentAndStopsDeliveries() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local sub = observe(t, "temperature", function(new) print("never", new) end)
            print(sub.active, tostring(sub))
            sub:cancel()
            sub:cancel()
            print(sub.active, tostring(sub), #subscriptions())
            t:set(9, function() print("set done") end)
            """)
        test.settle()
        #expect(test.lines == [
            "true\tSubscription(thermostat.temperature, active, test.lua:2)",
            "false\tSubscription(thermostat.temperature, cancelled, test.lua:2)\t0",
            "set done",
        ])
        #expect(test.exitStatus == 0)
    }

    @Test func onceDeliversASingleTime() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local sub = observe(t, "temperature", function(new, old, change) print("once", new, change.initial) end,
                                { initial = false, once = true, coalesce = false })
            t:set(1, function() end) t:set(2, function() end)
            timer.after(1, function() t:set(3, function() end) print(sub.active) end)
            """)
        test.settle()
        test.advance(seconds: 2)
        #expect(test.lines == ["once\t1.0\tfalse", "false"])
    }

    @Test func cancellingFromInsideTheHandlerViaChangeSub() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            observe(t, "temperature", function(new, old, change)
              print("got", new)
              if new == 2 then change.sub:cancel() end
            end, { coalesce = false, initial = false })
            for i = 1, 4 do t:set(i, function() end) end
            """)
        test.settle()
        #expect(test.lines == ["got\t1.0", "got\t2.0"])
    }

    @Test func observingAnUnknownPropertyListsTheProperties() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            print(select(2, pcall(observe, t, "humidity", print)))
            print(select(2, pcall(function() t:observe("humidity", print) end)))
            print(select(2, pcall(observe, {}, "temperature", print)))
            print(select(2, pcall(observe, t, "temperature", "not a function")))
            print(select(2, pcall(observe, t, "temperature", print, { initial = "yes" })))
            print(select(2, pcall(observe, t, "temperature", print, { delay = true })))
            print(#subscriptions())
            """)
        #expect(test.lines == [
            "bad argument #2 to 'observe' ('humidity' is not a property of thermostat (properties: temperature, label, readings))",
            "test.lua:3: thermostat:observe(key, handler[, options]): argument #1: 'humidity' is not a property of thermostat (properties: temperature, label, readings)",
            "bad argument #1 to 'observe' (service or model object expected, got table)",
            "bad argument #3 to 'observe' (function expected, got string)",
            "bad argument #4 to 'observe' (option 'initial' must be a boolean, got string)",
            "bad argument #4 to 'observe' (unknown option 'delay' (options: initial, coalesce, once, latest))",
            "0",
        ])
    }

    @Test func handlersThatKeepChangingWhatTheyObserveAreStoppedAsACycle() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local calls = 0
            observe(t, "temperature", function(new)
              calls = calls + 1
              t:set(new >= 50 and -40 or new + 1, function() end)
            end, { initial = false })
            t:set(0, function() end)
            timer.after(1, function() print("calls", calls) app.exit() end)
            """)
        test.settle(rounds: 20)
        test.advance(seconds: 1)
        #expect(test.stderr.contains("crescent: warning: observer cycle: handlers kept changing thermostat.temperature for 100 turns in a row; dropped those deliveries"))
        #expect(test.lines == ["calls\t100"])
    }

    @Test func aSubscriberAddedAfterAChangeGetsOnlyItsInitialValue() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            observe(t, "temperature", function(new, old, change) print("A", new, old, change.initial) end)
            t:set(5, function() end)
            observe(t, "temperature", function(new, old, change) print("B", new, old, change.initial) end)
            """)
        test.settle()
        #expect(test.lines.prefix(2) == ["A\t20.0\tnil\ttrue", "A\t5.0\t20.0\tfalse"])
        do {
            #expect(test.lines.dropFirst(2) == ["B\t5.0\tnil\ttrue"])
        }
    }

    @Test func failFastStopsAtTheFirstHandlerError() throws {
        let test = try TestHost(thermostat: Thermostat(), failFast: true)
        test.run("""
            local t = services.thermostat
            observe(t, "temperature", function() error("first fails") end, { initial = false })
            timer.after(1, function() print("never") end)
            t:set(1, function() end)
            """)
        test.settle()
        #expect(test.exitStatus == 1)
        #expect(test.stderr.contains("test.lua:2: first fails"))
        test.advance(seconds: 2)
        #expect(test.lines.isEmpty)
    }

    @Test func aSubscriptionWhoseHandleIsDroppedKeepsDelivering() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            observe(t, "temperature", function(new) print("still here", new) end, { initial = false })
            collectgarbage("collect") collectgarbage("collect")
            timer.after(1, function() t:set(3, function() end) end)
            """)
        test.advance(seconds: 1)
        test.settle()
        #expect(test.lines == ["still here\t3.0"], "the script owns its subscriptions, not the garbage collector")
        #expect(test.exitStatus == 0)
    }
}
