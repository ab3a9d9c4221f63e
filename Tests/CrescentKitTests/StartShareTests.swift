import CrescentKit
import Model
import Testing

/// DESIGN.md "Services" and "Ownership": `svc:start()` / `svc:stop()` are counted per owner, a
/// started service keeps the run alive, and its owner (never the GC) keeps it started.
@Suite struct StartShareTests {
    @Test func startAndStopAreCountedPerOwner() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            t:start()
            t:start({ interval = 2 })        -- the same owner again: still one share, new options
            timer.after(1, function()
              t:stop()                         -- one stop ends the owner's share
              t:stop()                         -- nothing left to stop
            end)
            """)
        #expect(thermostat.starts == ["start 1", "start 1"])
        test.advance(seconds: 1)
        #expect(thermostat.starts == ["start 1", "start 1", "stop"])
        #expect(test.exitStatus == 0)
    }

    @Test func stopWithoutStartDoesNothing() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("services.thermostat:stop()")
        #expect(thermostat.starts.isEmpty)
        #expect(test.exitStatus == 0)
    }

    @Test func startInsideATaskIsOwnedByTheScript() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            task(function() t:start() sleep(1) print("task done") end)
            timer.after(3, function() t:stop() end)
            """)
        test.advance(seconds: 2)
        #expect(test.lines == ["task done"])
        #expect(thermostat.starts == ["start 1"], "the task ended; the service stays started")
        #expect(test.exitStatus == nil)
        test.advance(seconds: 1)
        #expect(thermostat.starts == ["start 1", "stop"])
        #expect(test.exitStatus == 0)
    }

    @Test func exitStopsTheService() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            services.thermostat:start()
            timer.after(1, function() app.exit(4) end)
            """)
        test.advance(seconds: 1)
        #expect(test.exitStatus == 4)
        #expect(thermostat.starts == ["start 1", "stop"])
    }

    @Test func aMainChunkErrorStopsTheService() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            services.thermostat:start()
            error("main fails")
            """)
        #expect(test.exitStatus == 1)
        #expect(thermostat.starts == ["start 1", "stop"])
    }

    @Test func badStartArguments() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            print(select(2, pcall(t.start, t, { f = print })))
            print(select(2, pcall(t.start, 42)))
            print(select(2, pcall(function() return t.readings.start end)), "(a collection is not startable)")
            print(select(2, pcall(t.start, t, 42)))
            """)
        #expect(test.lines.prefix(3) == [
            "thermostat:start([options]): argument #1 must be a table of options, got a function at .f",
            "thermostat:start([options]): call it with ':' on the object (got number as self)",
            "test.lua:4: no property or method 'start' on readings (properties: items, count; methods: addObserver, drop, observe, on, record, recordApart, recordElsewhere, removeObserver)\t(a collection is not startable)",
        ])
        do {
            #expect(test.lines.last == "thermostat:start([options]): argument #1 must be a table of options, got number")
        }
        #expect(thermostat.starts.isEmpty)
    }
}
