import CrescentKit
import LuaBridge
import Model
import Testing

/// DESIGN.md "Ownership" and "The event loop": what keeps a run alive, and everything released
/// when the script's scope ends.
@Suite struct OwnershipTests {
    @Test func subscriptionsAloneDoNotKeepTheRunAlive() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            observe(services.thermostat, "temperature", function(new) print("initial", new) end)
            on("never posted", function() print("never") end)
            services.thermostat:on("didAlarm", function() print("never") end)
            services.thermostat:addObserver({ didAlarm = function() end })
            print("main done", #subscriptions())
            """)
        #expect(test.exitStatus == nil, "the initial delivery is still pending")
        test.settle()
        #expect(test.lines == ["main done\t4", "initial\t20.0"])
        #expect(test.exitStatus == 0)
    }

    @Test func aPendingCompletionKeepsTheRunAliveUntilItRan() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("services.thermostat:set(5, function(r) print('completed', r) end)")
        #expect(test.exitStatus == nil)
        test.settle()
        #expect(test.lines == ["completed\t5.0"])
        #expect(test.exitStatus == 0)
    }

    @Test func anInFlightRequestKeepsTheRunAliveOnARealLoop() async throws {
        let run = await RealLoopRun.run("""
            services.thermostat:slow(0.3, function(result) print("completed", result) end)
            print("main done")
            """)
        #expect(run.status == 0)
        #expect(run.lines == ["main done", "completed\tdone"])
        #expect(run.seconds >= 0.3)
    }

    @Test func aStartedServiceKeepsTheRunAliveUntilStopped() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            t:start()
            collectgarbage("collect")     -- a started service is kept by its owner, not by the GC
            timer.after(5, function() t:stop() print("stopped") end)
            """)
        #expect(thermostat.starts == ["start 1"])
        test.advance(seconds: 4)
        #expect(test.exitStatus == nil, "the timer is done waiting only at 5 s")
        test.advance(seconds: 1)
        #expect(test.lines == ["stopped"])
        #expect(thermostat.starts == ["start 1", "stop"])
        #expect(test.exitStatus == 0)
    }

    @Test func aStartedServiceAloneKeepsTheRunAlive() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            timer.after(1, function() t:start() end)
            """)
        test.advance(seconds: 1)
        test.settle()
        test.advance(seconds: 1000)
        #expect(test.exitStatus == nil, "no timer, no request, no task: only the started service")
        #expect(thermostat.starts == ["start 1"])
    }

    @Test func exitStopsStartedServicesAndReleasesEverything() throws {
        // What an empty script leaves pinned once it has exited: the baseline.
        let empty = try TestHost(thermostat: Thermostat())
        empty.run("")
        #expect(empty.exitStatus == 0)
        let baseline = empty.host.vm.liveReferences

        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            t:start()
            observe(t, "temperature", function() end)
            on("x", function() end)
            t:addObserver({ didAlarm = function() end })
            t.readings:observe("count", function() end)
            timer.every(1, function() end)
            t:set(1, function() end)
            t:echo({ 1, 2, 3 }, function() end)
            post("x", { payload = true })
            timer.after(2, function() app.exit(0) end)
            """)
        test.advance(seconds: 2)
        #expect(test.exitStatus == 0)
        #expect(thermostat.starts == ["start 1", "stop"])
        #expect(test.host.vm.liveReferences == baseline, "nothing the script made is still pinned at exit")
    }

    @Test func tasksAreReleasedAtExitToo() throws {
        let empty = try TestHost(thermostat: Thermostat())
        empty.run("")
        let baseline = empty.host.vm.liveReferences

        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            task(function() sleep(100) end)          -- still waiting at exit
            task(function() t:set(1) end)            -- finished long before exit
            timer.after(2, function() app.exit(0) end)
            """)
        test.advance(seconds: 2)
        #expect(test.exitStatus == 0)
        do {
            #expect(test.host.vm.liveReferences == baseline)
        }
    }

    @Test func cancellingEverythingReturnsToTheStartingReferences() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            keep = timer.after(100, function() end)
            t = services.thermostat
            readings = t.readings      -- first use of the collection: its userdata is pinned once
            t:set(1, function() end):cancel()   -- the error model's schema cached once (not a leak)
            """)
        test.settle()
        let before = test.host.vm.liveReferences
        test.run("""
            subs = {
              observe(t, "temperature", function() end),
              t:observe("label", function() end, { initial = false }),
              on("x", function() end),
              t:on("didAlarm", function() end),
              readings:on("didChange", function() end),
            }
            d = { didAlarm = function() end }
            t:addObserver(d)
            requests = { t:set(1, function() end), t:echo("x", function() end) }
            print(#subscriptions())
            """)
        #expect(test.host.vm.liveReferences > before)
        test.run("""
            for _, s in ipairs(subs) do s:cancel() end
            t:removeObserver(d)
            for _, r in ipairs(requests) do r:cancel() end
            subs, requests, d = nil, nil, nil
            print(#subscriptions())
            """)
        test.settle()
        #expect(test.lines == ["6", "0"])
        #expect(test.host.vm.liveReferences == before)
        test.run("keep:cancel()")
        #expect(test.exitStatus == 0)
    }

    @Test func subscriptionsListsOwnerTargetSiteAndCounts() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local a = observe(t, "temperature", function() end)
            local b = on("x", function() error("fails") end)
            t:addObserver({ didAlarm = function() end })
            local c = t.readings:on("didChange", function() end)
            post("x") post("x")
            timer.after(1, function()
              for _, s in ipairs(subscriptions()) do
                print(s.owner, s.target, s.site, s.deliveries, s.errors, s.sub.active)
              end
              print(rawequal(subscriptions()[1].sub, a), rawequal(subscriptions()[2].sub, b))
              print(a.owner, a.target, a.site, a.deliveries, a.errors)
              a:cancel() b:cancel() c:cancel()
              t:removeObserver({})
              print(#subscriptions())
            end)
            timer.after(2, function() app.exit() end)
            """)
        test.settle()
        test.advance(seconds: 2)
        #expect(test.lines == [
            "script\tthermostat.temperature\ttest.lua:2\t1\t0\ttrue",
            "script\ton x\ttest.lua:3\t2\t2\ttrue",
            "script\tdelegate of thermostat\ttest.lua:4\t0\t0\ttrue",
            "script\ton readings.didChange\ttest.lua:5\t0\t0\ttrue",
            "true\ttrue",
            "script\tthermostat.temperature\ttest.lua:2\t1\t0",
            "1",
        ])
    }

    @Test func exitDropsInFlightRequestsWithoutCallingTheirCompletions() async throws {
        let run = await RealLoopRun.run("""
            services.thermostat:slow(60, function() print("never") end)
            task(function() print("never either", services.thermostat:slow(60)) end)
            timer.after(0.05, function() app.exit(0) end)
            """, timeout: 50)
        #expect(run.status == 0)
        #expect(run.lines.isEmpty)
        #expect(run.seconds < 40, "the Swift work (60 s) is cancelled, not waited for (took \(run.seconds) s)")
    }
}
