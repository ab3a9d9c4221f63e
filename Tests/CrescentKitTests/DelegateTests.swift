import CrescentKit
import Model
import Testing

/// DESIGN.md "Services", delegates: `svc:addObserver(obj)` delivers each event as
/// `obj:<eventName>(payload)` when obj has such a method, and skips it otherwise.
@Suite struct DelegateTests {
    @Test func eventsAreDeliveredAsMethodCallsOnTheObserver() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            local Watcher = {}
            Watcher.__index = Watcher
            function Watcher:didAlarm(payload, extra) print("didAlarm", self.name, payload.level, extra) end
            local w = setmetatable({ name = "w" }, Watcher)
            local plain = { didReset = function(self, payload) print("didReset", self == plain_ref, payload) end }
            plain_ref = plain
            t:addObserver(w)
            t:addObserver(plain)
            t:alarm(2)
            keep = timer.after(10, function() end)
            """)
        thermostat.changes.emit("didReset")
        test.settle()
        #expect(test.lines == ["didAlarm\tw\t2\tnil", "didReset\ttrue\tnil"],
                "each observer gets only the events it has a method for")
        test.run("keep:cancel()")
        #expect(test.exitStatus == 0)
    }

    @Test func removeObserverStopsDeliveries() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local d = { didAlarm = function(self, p) print("alarm", p.level) end }
            t:addObserver(d)
            t:alarm(1)
            timer.after(1, function()
              t:removeObserver(d)
              t:removeObserver(d)                    -- again: a no-op
              t:removeObserver({})                   -- never added: a no-op
              t:alarm(2)
              print("removed", #subscriptions())
            end)
            timer.after(2, function()
              t:addObserver(d)                       -- can come back
              t:alarm(3)
            end)
            """)
        test.settle()
        test.advance(seconds: 1)
        test.settle()
        test.advance(seconds: 1)
        test.settle()
        #expect(test.lines == ["alarm\t1", "removed\t0", "alarm\t3"])
    }

    @Test func addingTheSameObserverTwiceDeliversOnce() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local d = { didAlarm = function(self, p) print("alarm", p.level) end }
            t:addObserver(d)
            t:addObserver(d)
            local subs = subscriptions()
            print(#subs, subs[1].target, subs[1].site, subs[1].owner)
            t:alarm(5)
            """)
        test.settle()
        #expect(test.lines == ["1\tdelegate of thermostat\ttest.lua:3\tscript", "alarm\t5"])
    }

    @Test func theMethodIsLookedUpAtEachEvent() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local d = {}
            t:addObserver(d)
            t:alarm(1)                                  -- skipped: no method yet
            timer.after(1, function()
              function d:didAlarm(p) print("now", p.level) end
              t:alarm(2)
            end)
            timer.after(2, function() t:removeObserver(d) end)
            """)
        test.settle()
        test.advance(seconds: 2)
        #expect(test.lines == ["now\t2"])
        #expect(test.exitStatus == 0)
    }

    @Test func aRaisingDelegateMethodIsReportedAndOthersStillRun() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            t:addObserver({ didAlarm = function() error("delegate broke") end })
            t:addObserver({ didAlarm = function(self, p) print("second", p.level) end })
            t:alarm(9)
            """)
        test.settle()
        #expect(test.lines == ["second\t9"])
        #expect(test.stderr.contains("crescent: error in delegate of thermostat handler (subscribed at test.lua:2): test.lua:2: delegate broke"))
        #expect(test.exitStatus == 1)
    }

    @Test func badObserversAreRejected() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            print(select(2, pcall(t.addObserver, t, 42)))
            print(select(2, pcall(t.addObserver, t)))
            print(select(2, pcall(t.addObserver, 42, {})))
            print(#subscriptions())
            """)
        #expect(test.lines == [
            "thermostat:addObserver(observer): argument #1 must be an object with event methods (a table), got number",
            "thermostat:addObserver(observer): argument #1 must be an object with event methods (a table), got no value",
            "thermostat:addObserver(observer): call it with ':' on the object (got number as self)",
            "0",
        ])
    }
}
