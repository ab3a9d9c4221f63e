import CrescentKit
import LuaBridge
import Model
import Testing

/// DESIGN.md "Observation and notifications": `on`, `post`, service events, `{ once = true }`,
/// and events never dropped.
@Suite struct NotificationTests {
    @Test func postDeliversAnyLuaValueOnALaterTurn() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local payload = { n = 1, nested = { "a" } }
            local function fn() return "called" end
            local sub
            sub = on("greeting", function(p, info)
              print("got", rawequal(p, payload), p.nested[1], info.name, info.event, info.object, rawequal(info.sub, sub))
            end)
            on("fn", function(p, info) print("fn", p == fn, p()) end)
            on("nothing", function(p, info) print("nothing", p, info.name, select("#", p, info)) end)
            post("greeting", payload)
            post("fn", fn)
            post("nothing")
            print("posted")
            """)
        #expect(test.lines == ["posted"], "post never delivers inside the call")
        test.settle()
        #expect(test.lines == [
            "posted",
            "got\ttrue\ta\tgreeting\tgreeting\tnil\ttrue",
            "fn\ttrue\tcalled",
            "nothing\tnil\tnothing\t2",
        ])
        #expect(test.exitStatus == 0)
    }

    @Test func onceHandlersRunOnlyOnce() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local sub = on("tick", function(p) print("once", p) end, { once = true })
            on("tick", function(p) print("always", p) end)
            post("tick", 1)
            post("tick", 2)
            timer.after(1, function() post("tick", 3) print("active", sub.active) end)
            timer.after(2, function() app.exit() end)
            """)
        test.settle()
        test.advance(seconds: 2)
        #expect(test.lines == ["once\t1", "always\t1", "always\t2", "active\tfalse", "always\t3"])
    }

    @Test func serviceEventsReachOnAndTheServiceShorthand() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            on("thermostat.didAlarm", function(p, info)
              print("on", p.level, info.name, info.event, info.object == t)
            end)
            local sub = t:on("didAlarm", function(p, info) print("svc:on", p.level, info.name, info.event) end)
            print(sub.target)
            t:alarm(3)
            t:alarm(4)
            """)
        test.settle()
        #expect(test.lines == [
            "on thermostat.didAlarm",
            "on\t3\tthermostat.didAlarm\tdidAlarm\ttrue",
            "svc:on\t3\tthermostat.didAlarm\tdidAlarm",
            "on\t4\tthermostat.didAlarm\tdidAlarm\ttrue",
            "svc:on\t4\tthermostat.didAlarm\tdidAlarm",
        ])
    }

    @Test func eventsFromSwiftArriveOnALaterTurn() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            services.thermostat:on("didReset", function(p, info) print("reset", p, info.event) app.exit() end)
            keep = timer.after(10, function() end)
            """)
        thermostat.changes.emit("didReset")
        #expect(test.lines.isEmpty)
        test.settle()
        #expect(test.lines == ["reset\tnil\tdidReset"])
    }

    @Test func anUnknownServiceEventIsAnError() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            print(select(2, pcall(function() t:on("didExplode", print) end)))
            print(select(2, pcall(on, 42, print)))
            print(select(2, pcall(on, "x", "not a function")))
            print(select(2, pcall(on, "x", print, { once = 1 })))
            print(select(2, pcall(on, "x", print, { coalesce = false })))
            print(select(2, pcall(post)))
            print(#subscriptions())
            """)
        #expect(test.lines == [
            "test.lua:2: thermostat:on(event, handler[, options]): argument #1: 'didExplode' is not an event of thermostat (events: didAlarm, didReset)",
            "bad argument #1 to 'on' (string expected, got number)",
            "bad argument #2 to 'on' (function expected, got string)",
            "bad argument #3 to 'on' (option 'once' must be a boolean, got number)",
            "bad argument #3 to 'on' (unknown option 'coalesce' (options: once, latest))",
            "bad argument #1 to 'post' (string expected, got no value)",
            "0",
        ])
    }

    @Test func eventsAreNeverDroppedOrReordered() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local seen, levels = {}, {}
            on("n", function(p) seen[#seen + 1] = p end)
            t:on("didAlarm", function(p) levels[#levels + 1] = p.level end)
            for i = 1, 1000 do post("n", i) end
            for i = 1, 1000 do t:alarm(i) end
            timer.after(1, function()
              local inOrder = true
              for i = 1, 1000 do if seen[i] ~= i or levels[i] ~= i then inOrder = false end end
              print(#seen, #levels, inOrder)
              app.exit()
            end)
            """)
        test.settle()
        test.advance(seconds: 1)
        #expect(test.lines == ["1000\t1000\ttrue"])
    }

    @Test func postingFromAHandlerDeliversInALaterRound() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local log = {}
            on("a", function(p)
              log[#log + 1] = "a" .. p
              if p < 3 then post("a", p + 1) end
              log[#log + 1] = "a" .. p .. " returned"
            end)
            on("a", function(p) log[#log + 1] = "second a" .. p end)
            post("a", 1)
            timer.after(1, function() print(table.concat(log, ", ")) end)
            """)
        test.settle()
        test.advance(seconds: 1)
        #expect(test.lines == ["a1, a1 returned, second a1, a2, a2 returned, second a2, a3, a3 returned, second a3"])
        #expect(test.exitStatus == 0)
    }

    @Test func postedPayloadsAreReleasedAfterDelivery() throws {
        let test = try TestHost(thermostat: Thermostat())
        let before = test.host.vm.liveReferences
        test.run("""
            keep = timer.after(10, function() end)
            local sub = on("x", function() end)
            for i = 1, 100 do post("x", { i }) end
            for i = 1, 100 do post("nobody listens", { i }) end
            sub:cancel()
            """)
        test.settle()
        #expect(test.host.vm.liveReferences == before + 2, "only the timer's callback and handle stay pinned")
        test.run("keep:cancel()")
        #expect(test.exitStatus == 0)
    }

    @Test func aRaisingEventHandlerIsReportedWithItsSite() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            on("x", function() error("boom") end)
            on("x", function(p) print("next", p) end)
            post("x", 7)
            """)
        test.settle()
        #expect(test.lines == ["next\t7"])
        #expect(test.stderr.contains("crescent: error in on x handler (subscribed at test.lua:1): test.lua:1: boom"))
        #expect(test.stderr.contains("stack traceback:"))
        #expect(test.exitStatus == 1)
    }

    @Test func anEventGoesToTheSubscribersOfTheMomentItWasPosted() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            post("y", 1)
            on("y", function(p) print("C (subscribed after the post)", p) end)
            on("x", function(p) print("A", p) end)
            post("x", 1)
            on("x", function(p) print("B (subscribed after the post)", p) end)
            """)
        test.settle()
        #expect(test.lines.first == "A\t1")
        #expect(!test.lines.contains { $0.hasPrefix("C") })
        do {
            #expect(test.lines == ["A\t1"])
        }
    }
}
