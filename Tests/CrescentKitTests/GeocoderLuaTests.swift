import CrescentKit
import Testing

/// `services.geocoder` from Lua: completions, await, batches, argument errors at the call site and
/// invalid values through the completion.
@Suite struct GeocoderLuaTests {
    @Test func reverseAnswersReadOnlyPlacemarks() async {
        let run = await GeoScriptRun.run("""
            services.geocoder:reverse({ lat = 48.8534, lon = 2.3488 }, function(placemarks, err)
              local p = placemarks[1]
              print(#placemarks, p.name, p.admin1, p.admin2, p.countryCode, p.country, err)
              print(p.distance < 1000, math.type(p.lat), tostring(p):match("^placemark") ~= nil)
              print(pcall(function() p.name = "x" end))
              task(function()
                local places, err = services.geocoder:reverse({ lat = 51.5072, lon = -0.1276 }, { count = 3 })
                print(#places, places[1].name, places[1].distance <= places[2].distance, err)
              end)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 4, "\(run.lines)")
        #expect(run.lines.first == "1\tParis\tÎle-de-France\tnil\tFR\tFrance\tnil")
        #expect(run.lines.dropFirst().first == "true\tfloat\ttrue")
        #expect(run.lines.dropFirst(2).first == "false\ttest.lua:5: cannot set 'placemark.name': a placemark is read-only (it is a snapshot made by its service)")
        #expect(run.lines.last == "3\tLondon\ttrue\tnil")
    }

    /// A placemark is read-only even to `rawset` and `debug.setmetatable` (a rawset used to land
    /// on the proxy: `p.name` read "HACKED" while json.encode said "Paris"), and the raw functions
    /// see its fields as a plain table's: `rawget` and `next` read them, and neither they nor
    /// `pairs` hand out the table behind the proxy, through which a script could change them.
    @Test func aPlacemarkIsReadOnlyEvenToRawset() async {
        let run = await GeoScriptRun.run("""
            task(function()
              local p = assert(services.geocoder:reverse({ lat = 48.8566, lon = 2.3522 }))[1]
              print(pcall(rawset, p, "name", "HACKED"))
              print(pcall(rawset, p, "extra", 1))
              print(pcall(debug.setmetatable, p, nil))
              print(p.name, rawget(p, "name"), rawget(p, "extra"), p.countryCode, json.decode(json.encode(p)).name)
              local keys, count = {}, 0
              for k, v in next, p do
                assert(type(k) == "string" and rawequal(p[k], v), tostring(k))
                count = count + 1
              end
              local iterate, state = pairs(p)
              for k, v in pairs(p) do keys[#keys + 1] = k end
              table.sort(keys)
              print(count, #keys, rawequal(state, p), table.concat(keys, ","))
              print(#p, inspect(p):match('name = "Paris"') ~= nil, tostring(p):match("^placemark") ~= nil)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            "false\trawset: cannot set 'placemark.name': a placemark is read-only (it is a snapshot made by its service)",
            "false\trawset: cannot set 'placemark.extra': a placemark is read-only (it is a snapshot made by its service)",
            "false\tdebug.setmetatable: the metatable of a data model cannot change (it is a read-only snapshot)",
            "Paris\tParis\tnil\tFR\tParis",
            "11\t11\ttrue\tadmin1,country,countryCode,distance,lat,locality,lon,name,population,subLocality,timeZone",
            "0\ttrue\ttrue",
        ], "\(run.lines)")
    }

    /// Placemarks name places as people do: the city for a point in one of its sections, with the
    /// section as the sub-locality, and the IANA time zone; a town beside a city is a town.
    @Test func placemarksNameTheLocalityTheSectionAndTheTimeZone() async {
        let run = await GeoScriptRun.run("""
            task(function()
              for _, point in ipairs({ { lat = 48.8566, lon = 2.3522 }, { lat = 35.6762, lon = 139.6503 },
                                       { lat = 48.8239, lon = 2.2117 } }) do
                local p = assert(services.geocoder:reverse(point))[1]
                print(p.name, p.locality, p.subLocality, p.countryCode, p.country, p.timeZone)
              end
              local found = assert(services.geocoder:search("Muenchen"))
              print(found[1].name, found[1].locality, found[1].subLocality, found[1].timeZone)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            "Paris\tParis\tParis 04 Hôtel-de-Ville\tFR\tFrance\tEurope/Paris",
            "Tokyo\tTokyo\tEifuku\tJP\tJapan\tAsia/Tokyo",
            "Sèvres\tSèvres\tnil\tFR\tFrance\tEurope/Paris",
            "Munich\tMunich\tnil\tEurope/Berlin",
        ])
    }

    /// One `reverse` answers at most 500,000 placemarks (locations × count): its answer is built
    /// whole before the caller's memory limit sees it, and 5,000 × 1,000 took 4.7 GB (a crash
    /// under an address-space cap). Past the bound it is an invalid_argument saying what to ask.
    @Test func aBatchAskingForTooManyPlacemarksIsRefused() async {
        let run = await GeoScriptRun.run("""
            task(function()
              local points = {}
              for i = 1, 1000 do points[i] = { lat = (i % 170) - 85 + 0.5, lon = (i % 350) - 175 + 0.25 } end
              local places, err = services.geocoder:reverse(points, { count = 1000 })
              print(places, err and err.code, err and err.message)
              local some = assert(services.geocoder:reverse(points, { count = 2 }))
              print(#some, #some[1])
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.first?.hasPrefix("nil\tinvalid_argument\t") == true, "\(run.lines)")
        #expect(run.lines.first?.contains("1000 locations with count 1000 ask for 1000000 placemarks, more than the 500000 one call answers") == true,
                "\(run.lines)")
        #expect(run.lines.last == "1000\t2", "\(run.lines)")
    }

    @Test func aBatchAnswersInOrder() async {
        let run = await GeoScriptRun.run("""
            task(function()
              local results = services.geocoder:reverse({
                { lat = 35.6895, lon = 139.6917 }, { lat = -33.8688, lon = 151.2093 }, { lat = 48.8534, lon = 2.3488 },
              })
              for i, places in ipairs(results) do print(i, places[1].name, places[1].country) end
              local _, err = services.geocoder:reverse({ { lat = 1, lon = 2 }, { lat = 1 } })
              print(err.code, err.message)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["1\tTokyo\tJapan", "2\tSydney\tAustralia", "3\tParis\tFrance",
                              "invalid_argument\tlocation #2: longitude is missing (field 'lon')"])
    }

    /// A batch past the bulk size (its strings made once each) names every point as a single
    /// reverse does, with the same strings, and its placemarks keep the read-only contract on
    /// their shared metatable.
    @Test func aBulkBatchAnswersAsSingleCallsDo() async {
        let run = await GeoScriptRun.run("""
            task(function()
              local points = {}
              for i = 1, 1500 do points[i] = { lat = -60 + (i * 7919 % 1200) / 10, lon = -180 + (i * 104729 % 3600) / 10 } end
              local results = assert(services.geocoder:reverse(points))
              local mismatches, checked = 0, 0
              for i = 1, #points, 7 do
                local single = assert(services.geocoder:reverse(points[i]))[1]
                local p = results[i][1]
                for _, key in ipairs({ "name", "locality", "subLocality", "admin1", "admin2", "countryCode", "country",
                                        "timeZone", "lat", "lon", "population", "distance" }) do
                  if p[key] ~= single[key] then mismatches = mismatches + 1 end
                end
                checked = checked + 1
              end
              local a, b = results[1][1], results[2][1]
              print(#results, checked > 200, mismatches)
              print(debug.getmetatable(a) == debug.getmetatable(b), getmetatable(a), #a)
              print(select(2, pcall(function() a.name = "x" end)))
              print(select(2, pcall(function() b.nothing = 1 end)))
              local keys = {}
              for k in pairs(a) do keys[#keys + 1] = k end
              local positions = 0
              for _ in ipairs(a) do positions = positions + 1 end
              print(#keys >= 6, positions, a == a, a == b, rawequal(a, results[1][1]))
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            "1500\ttrue\t0",
            "true\tplacemark\t0",
            "test.lua:18: cannot set 'placemark.name': a placemark is read-only (it is a snapshot made by its service)",
            "test.lua:19: cannot set 'placemark.nothing': a placemark is read-only (it is a snapshot made by its service)",
            "true\t0\ttrue\tfalse\ttrue",
        ])
    }

    /// A placemark encodes to JSON as the fields a script reads from it (its fields sit behind
    /// the shared metatable, out of reach of `next`), alone and inside a plain table.
    @Test func aPlacemarkEncodesAsItsFields() async {
        let run = await GeoScriptRun.run("""
            task(function()
              local p = assert(services.geocoder:reverse({ lat = 48.8566, lon = 2.3522 }))[1]
              local decoded = json.decode(json.encode(p))
              print(decoded.name == p.name, decoded.countryCode, decoded.lat == p.lat, decoded.distance == p.distance)
              local wrapped = json.decode(json.encode({ place = p, n = 1 }))
              print(wrapped.place.name == p.name, wrapped.n)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["true\tFR\ttrue\ttrue", "true\t1"])
    }

    @Test func wrongTypesRaiseAtTheCallSiteAndBadValuesComeThroughTheCompletion() async {
        let run = await GeoScriptRun.run("""
            local g = services.geocoder
            print(select(2, pcall(g.reverse, g, "Paris", function() end)))
            print(select(2, pcall(g.reverse, g, { lat = 1 }, function() end)))
            print(select(2, pcall(g.search, g, 42, function() end)))
            g:reverse({ lat = 123, lon = 0 }, function(places, err)
              print(places, err.code, tostring(err))
              task(function()
                print(select(2, g:reverse({ lat = 0/0, lon = 0 })).message)
                local places, err = g:search("")
                print(err.code, err.message)
              end)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 6, "\(run.lines)")
        let signature = "geocoder:reverse(location[, options], completion)"
        #expect(run.lines.first?.hasSuffix("\(signature): argument #1 must be a location {lat=, lon=} or an array of locations, got string") == true)
        #expect(run.lines.dropFirst().first?.hasSuffix("\(signature): argument #1 must be a location {lat=, lon=} or an array of locations, got table without lon (it has lat)") == true)
        #expect(run.lines.dropFirst(2).first?.hasSuffix("geocoder:search(query[, options], completion): argument #1 must be a string, got number") == true)
        #expect(run.lines.dropFirst(3).first == "nil\tinvalid_argument\tgeocoder.reverse: invalid_argument: latitude 123 is outside [-90, 90]")
        #expect(run.lines.dropFirst(4).first == "latitude is NaN (field 'lat')")
        #expect(run.lines.last == "invalid_argument\tthe query is empty")
    }

    @Test func searchFindsPlacesByName() async {
        let run = await GeoScriptRun.run("""
            task(function()
              local found = services.geocoder:search("zürich")
              print(found[1].name, found[1].countryCode, found[1].distance)
              found = services.geocoder:search("Paris", { country = "US", limit = 2 })
              print(#found, found[1].countryCode, found[2].countryCode)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["Zürich\tCH\tnil", "2\tUS\tUS"])
    }
}
