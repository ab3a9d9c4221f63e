import CrescentKit
import Model
import Testing

/// DESIGN.md "Services": the services table, service objects, read-only properties, data models.
@Suite struct ServiceBindingTests {
    @Test func theServicesTableIsReadOnlyAndItsObjectsAreStable() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            print(t, t == services.thermostat, rawequal(t, services["thermostat"]))
            print(select(2, pcall(function() services.thermostat = 1 end)))
            print(select(2, pcall(function() services.other = {} end)))
            print(services.thermostat == t, pcall(function() return services.other end))
            print(getmetatable(services))
            local names = {}
            for name, svc in pairs(services) do names[#names + 1] = name .. "=" .. tostring(svc) end
            print(table.concat(names, ","))
            print(services)
            """)
        #expect(test.lines == [
            "<service thermostat>\ttrue\ttrue",
            "test.lua:3: cannot set 'services.thermostat': the services table is read-only",
            "test.lua:4: cannot set 'services.other': the services table is read-only",
            "true\tfalse\ttest.lua:5: no service 'other' (services: thermostat)",
            "services",
            "thermostat=<service thermostat>",
            "<services: thermostat>",
        ])
    }

    /// Two plugins may not both provide a service of one name; the second is named in the error.
    @Test func aServiceNameGivenByTwoPluginsStopsTheHost() {
        struct OnePlugin: Plugin {
            let name: String
            func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { [Thermostat()] }
        }
        do throws(HostSetupError) {
            let entries = try ServiceFactory.entries(plugins: [OnePlugin(name: "first")], options: HostOptions())
            #expect(entries.map(\.name) == ["thermostat"])
            _ = try ServiceFactory.entries(plugins: [OnePlugin(name: "first"), OnePlugin(name: "second")], options: HostOptions())
            Issue.record("the second thermostat was accepted")
        } catch {
            #expect(error.description == "plugin 'second': a service named 'thermostat' is already registered")
        }
    }

    @Test func propertiesReadTheCurrentValueNilBeforeTheFirstSet() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            print(t.temperature, t.label, math.type(t.temperature))
            print((select(2, pcall(function() return t.nosuch end)):match("^(.-) %(")))
            t:rename("kitchen")
            print(t.label)
            """)
        #expect(test.lines == ["20.0\tnil\tfloat", "test.lua:3: no property or method 'nosuch' on thermostat", "kitchen"])
        #expect(thermostat.label.value == "kitchen")
    }

    @Test func assigningAPropertyRaisesTheReadOnlyErrorOfTheDesign() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local ok, err = pcall(function() t.temperature = 3 end)
            print(ok, err)
            print(t.temperature)
            """)
        #expect(test.lines == [
            "false\ttest.lua:2: cannot set 'thermostat.temperature': service properties are read-only (the service updates them; see help(services.thermostat))",
            "20.0",
        ])
    }

    @Test func aPropertyReadAfterAChangeReturnsTheNewValue() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            keep = timer.after(100, function() end)  -- keeps the run going
            print(t.temperature, t.temperature)    -- the second read comes from the cache
            t:set(30, function() print("completion sees", t.temperature) end)
            print("at once", t.temperature)
            t:rename("a") print(t.label) t:rename("b") print(t.label)
            """)
        test.settle()
        // The model changed from Swift, off any Lua call.
        thermostat.temperature.set(-5)
        test.run("print('from swift', services.thermostat.temperature) keep:cancel()")
        #expect(test.lines == ["20.0\t20.0", "at once\t30.0", "a", "b", "completion sees\t30.0", "from swift\t-5.0"])
        #expect(test.exitStatus == 0)
    }

    /// A service's `__index` is its cache of property values: methods found once are kept there,
    /// a change clears the property's entry, and the metatable stays hidden.
    @Test func cachedLookupsKeepMethodsAndFollowChanges() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            keep = timer.after(100, function() end)
            local first, second = t.set, t.set
            print(type(first), rawequal(first, second), getmetatable(t))
            print(t.temperature, t.temperature)
            t:set(25, function() print("after", t.temperature, rawequal(t.set, first)) end)
            print(rawequal(t.readings, t.readings), pcall(function() return t.nosuch end), (pcall(function() return t.nosuch end)))
            """)
        test.settle()
        thermostat.temperature.set(7)
        test.run("print(services.thermostat.temperature, services.thermostat.temperature) keep:cancel()")
        #expect(test.lines == ["function\ttrue\tthermostat", "20.0\t20.0", "true\tfalse\tfalse", "after\t25.0\ttrue", "7.0\t7.0"])
        #expect(test.exitStatus == 0)
    }

    @Test func theCollectionPropertyIsTheSameObjectEachTime() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local r = t.readings
            print(r, r == t.readings, rawequal(r, t.readings), type(r))
            r:record(1, function() print(rawequal(r, services.thermostat.readings), r.count) end)
            """)
        test.settle()
        #expect(test.lines == ["<readings>\ttrue\ttrue\tuserdata", "true\t1"])
    }

    @Test func propertyValuesAreSnapshotsThatScriptsCannotCorrupt() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local r = services.thermostat.readings
            r:record(5, function()
              local items = r.items
              pcall(function() items[1] = 99 end)
              print(r.items[1], #r.items)
            end)
            """)
        test.settle()
        do {
            #expect(test.lines == ["5\t1"])
        }
    }

    @Test func dataModelsAreReadOnlyTablesThatNameTheirType() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            t:locate({ lat = 48.5, lon = 2.25 }, { name = "home" }, function(place, err)
              print(type(place), err, place.name, place.lat, place.lon)
              print(tostring(place))
              print(select(2, pcall(function() place.name = "elsewhere" end)))
              print(select(2, pcall(function() place.extra = 1 end)))
              print(place.name, place.extra)
              local keys = {}
              for k, v in pairs(place) do keys[#keys + 1] = k .. "=" .. tostring(v) end
              table.sort(keys)
              print(table.concat(keys, " "))
              print(getmetatable(place), pcall(setmetatable, place, nil))
              -- passed back to a service as an argument, it is still the same value
              t:echo(place, function(back)
                print("echo", tostring(back), back.name)
                t:locate(place, function(again) print("locate(placemark)", again.lat, again.lon, again.name) end)
              end)
            end)
            """)
        test.settle()
        #expect(test.lines == [
            "table\tnil\thome\t48.5\t2.25",
            "placemark { lat = 48.5, lon = 2.25, name = \"home\" }",
            "test.lua:5: cannot set 'placemark.name': a placemark is read-only (it is a snapshot made by its service)",
            "test.lua:6: cannot set 'placemark.extra': a placemark is read-only (it is a snapshot made by its service)",
            "home\tnil",
            "lat=48.5 lon=2.25 name=home",
            "placemark\tfalse\tcannot change a protected metatable",
            "echo\tplacemark { lat = 48.5, lon = 2.25, name = \"home\" }\thome",
            "locate(placemark)\t48.5\t2.25\tsomewhere",
        ])
        #expect(test.exitStatus == 0)
    }

    @Test func modelsOfDeclaredSchemasArriveWithTheirFieldsWhicheverSchemaCameBefore() throws {
        let test = try TestHost(plugins: [SurveyorPlugin()])
        test.run("""
            services.surveyor:survey(function(items)
              for i, item in ipairs(items) do
                local keys = {}
                for k, v in pairs(item) do keys[#keys + 1] = k .. "=" .. tostring(v) end
                table.sort(keys)
                local _, err = pcall(function() item.name = 1 end)
                print(i, getmetatable(item), table.concat(keys, " "), err)
              end
              print(items[3].note, items[2].unit, items[2].count, math.type(items[2].count), items[5].note)
            end)
            """)
        test.settle()
        #expect(test.lines == [
            "1\tplace\tlat=48.5 name=home note=by the river\ttest.lua:6: cannot set 'place.name': a place is read-only (it is a snapshot made by its service)",
            "2\treading\tcount=3 degrees=21.5\ttest.lua:6: cannot set 'reading.name': a reading is read-only (it is a snapshot made by its service)",
            "3\tplace\tlat=45.75 name=work\ttest.lua:6: cannot set 'place.name': a place is read-only (it is a snapshot made by its service)",
            "4\tplace\tlat=48.5 name=home note=by the river\ttest.lua:6: cannot set 'place.name': a place is read-only (it is a snapshot made by its service)",
            "5\tplace\tlat=48.5 name=home note=by the river\ttest.lua:6: cannot set 'place.name': a place is read-only (it is a snapshot made by its service)",
            "nil\tnil\t3\tinteger\tby the river",
        ])
    }
}
