import CrescentKit
import Model
import Testing

/// DESIGN.md "Observation and notifications", collections: `items`, `count`, and `didChange`
/// with a change set that is never dropped.
@Suite struct CollectionTests {
    static let showChange = """
        local function show(cs)
          local function list(t) local s = {} for i, v in ipairs(t) do s[i] = tostring(v) end return "{" .. table.concat(s, ",") .. "}" end
          return "inserted=" .. list(cs.inserted) .. " deleted=" .. list(cs.deleted) .. " updated=" .. list(cs.updated) .. " reload=" .. tostring(cs.reload)
        end

        """

    @Test func recordEmitsAChangeSetAndUpdatesItemsAndCount() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run(Self.showChange + """
            local r = services.thermostat.readings
            print(r.count, #r.items)
            r:on("didChange", function(cs, info) print(info.name, show(cs), r.count, table.concat(r.items, ",")) end)
            local counts = {}
            r:record(18.5, function(n, err) counts[#counts + 1] = tostring(n) .. "/" .. tostring(err) end)
            r:record(19.5, function(n, err) counts[#counts + 1] = tostring(n) .. "/" .. tostring(err) end)
            timer.after(1, function() print("record returned", table.concat(counts, " ")) end)
            """)
        test.settle()
        test.advance(seconds: 1)
        #expect(test.lines == [
            "0\t0",
            "readings.didChange\tinserted={1} deleted={} updated={} reload=false\t1\t18.5",
            "readings.didChange\tinserted={2} deleted={} updated={} reload=false\t2\t18.5,19.5",
            "record returned\t1/nil 2/nil",
        ], "two change sets in one turn: both delivered, none coalesced, each handler reading the list its change set made")
    }

    @Test func dropReplaceAndReloadReportWhatChanged() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run(Self.showChange + """
            local r = services.thermostat.readings
            on("readings.didChange", function(cs) print(show(cs), table.concat(r.items, ",")) end)
            for i = 1, 3 do r:record(i, function() end) end
            keep = timer.after(10, function() end)
            """)
        test.settle()
        test.run("services.thermostat.readings:drop(2)")
        test.settle()
        thermostat.readings.replace(at: 0, with: 7)
        test.settle()
        thermostat.readings.reload([4, 5])
        test.settle()
        test.run("keep:cancel()")
        #expect(test.lines == [
            "inserted={1} deleted={} updated={} reload=false\t1",
            "inserted={2} deleted={} updated={} reload=false\t1,2",
            "inserted={3} deleted={} updated={} reload=false\t1,2,3",
            "inserted={} deleted={2} updated={} reload=false\t1,3",
            "inserted={} deleted={} updated={1} reload=false\t7,3",
            "inserted={} deleted={} updated={} reload=true\t4,5",
        ])
        #expect(test.exitStatus == 0)
    }

    @Test func countAndItemsAreObservable() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local r = services.thermostat.readings
            r:observe("count", function(new, old, change) print("count", new, old, change.initial, change.coalesced) end)
            observe(r, "items", function(new, old) print("items", #new, old and #old) end, { initial = false })
            r:record(1, function() end)
            r:record(2, function() end)
            timer.after(1, function() r:drop(1) end)
            """)
        test.settle()
        test.advance(seconds: 1)
        test.settle()
        #expect(test.lines == [
            "count\t0\tnil\ttrue\t0",
            "items\t2\t0",                      // the collection reports items, then count
            "count\t2\t0\tfalse\t2",
            "items\t1\t2",
            "count\t1\t2\tfalse\t1",
        ])
        #expect(test.exitStatus == 0)
    }

    @Test func collectionPropertiesAreReadOnly() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local r = services.thermostat.readings
            print(select(2, pcall(function() r.count = 3 end)))
            print(select(2, pcall(function() r:on("didExplode", print) end)))
            print(select(2, pcall(observe, r, "size", print)))
            """)
        #expect(test.lines == [
            "test.lua:2: cannot set 'readings.count': its properties are read-only (its service updates them; see help(readings))",
            "test.lua:3: readings:on(event, handler[, options]): argument #1: 'didExplode' is not an event of readings (events: didChange)",
            "bad argument #2 to 'observe' ('size' is not a property of readings (properties: items, count))",
        ])
    }

    /// Reports made on two threads reach observers in the order they were made: one from another
    /// thread still on its way to the loop, then one made on the loop inside a turn (the shortcut
    /// the loop takes for its own reports must not overtake it).
    @Test func reportsFromAnotherThreadAndTheLoopArriveInOrder() async {
        let run = await RealLoopRun.run(Self.showChange + """
            local r = services.thermostat.readings
            local seen = {}
            r:on("didChange", function(cs)
              seen[#seen + 1] = show(cs) .. " " .. tostring(cs.insertedItems[1])
              if #seen == 2 then print(table.concat(seen, "; ")) app.exit(0) end
            end)
            r:recordApart(1, 2, function(n, err) print("count", n, err) end)
            """)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        #expect(run.lines == [
            "count\t2\tnil",
            "inserted={1} deleted={} updated={} reload=false 1; inserted={2} deleted={} updated={} reload=false 2",
        ])
    }

    /// A script that reads a collection and then subscribes hears each later change once and no
    /// earlier one, although changes made on another thread are read before their reports reach
    /// the loop: `length = c.count` then `c:on("didChange", ...)` never counts a record twice.
    @Test func aSubscriptionMadeAfterAReadHearsTheChangesAfterWhatWasRead() async {
        let run = await RealLoopRun.run(Self.showChange + """
            local r = services.thermostat.readings
            local heard = {}
            timer.after(10, function() print("heard only", table.concat(heard, "; ")) app.exit(1) end)
            local function follow(name)
              r:on("didChange", function(cs)
                heard[#heard + 1] = name .. " " .. show(cs)
                if #heard == 5 then print(table.concat(heard, "; ")) app.exit(0) end
              end)
            end
            follow("A")                 -- before both changes: hears both
            r:recordElsewhere(1)        -- made; its report still on its way
            follow("B")                 -- nothing read since: hears it
            print("read", #r.items, r.count)
            follow("C")                 -- read it already: must not hear it
            r:recordElsewhere(2)
            """)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        #expect(run.lines == [
            "read\t1\t1",
            "A inserted={1} deleted={} updated={} reload=false; B inserted={1} deleted={} updated={} reload=false; "
                + "A inserted={2} deleted={} updated={} reload=false; B inserted={2} deleted={} updated={} reload=false; "
                + "C inserted={2} deleted={} updated={} reload=false",
        ])
    }

    /// An observer's initial value may already show a change made on another thread whose
    /// report has not reached the loop: that change is not delivered to it again afterwards.
    @Test func anInitialValueIsNotFollowedByTheChangeItAlreadyShows() async {
        let run = await RealLoopRun.run("""
            local r = services.thermostat.readings
            local heard = {}
            timer.after(10, function() print("heard only", table.concat(heard, "; ")) app.exit(1) end)
            r:recordElsewhere(1)        -- made; its report still on its way
            observe(r, "count", function(new, old, change)
              heard[#heard + 1] = tostring(old) .. "->" .. tostring(new) .. (change.initial and " initial" or "")
              if new == 2 then print(table.concat(heard, "; ")) app.exit(0) end
            end, { coalesce = false })
            r:recordElsewhere(2)
            """)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        #expect(run.lines == ["nil->1 initial; 1->2"])
    }
}
