import CrescentKit
import LuaBridge
import Testing

/// A change table keeps `initial`, `coalesced` and `sub` itself and reads `object` and `key` from
/// its property's shared prototype; every way of looking at it still shows all five fields.
@Suite struct ChangeTableTests {
    @Test func allFiveFieldsReadIterateAndPrint() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local sub
            sub = observe(t, "temperature", function(new, old, change)
              local names = {}
              for k in pairs(change) do names[#names + 1] = k end
              table.sort(names)
              print(table.concat(names, ","), change.object == t, change.key, change.sub == sub)
              print(tostring(change):match("^change {") ~= nil, inspect(change):find('key = "temperature"', 1, true) ~= nil)
            end)
            """)
        test.settle()
        #expect(test.lines == ["coalesced,initial,key,object,sub\ttrue\ttemperature\ttrue", "true\ttrue"])
    }

    @Test func thePrototypeIsReleasedWithTheLastObserver() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("keepalive = timer.every(100, function() end); local _ = services.thermostat")
        let before = test.host.vm.liveReferences
        test.run("""
            local a = observe(services.thermostat, "temperature", function() end)
            local b = observe(services.thermostat, "temperature", function() end)
            a:cancel() b:cancel()
            """)
        test.settle()
        #expect(test.host.vm.liveReferences == before)
    }
}
