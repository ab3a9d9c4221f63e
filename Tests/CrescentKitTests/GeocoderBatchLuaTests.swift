import CrescentKit
import Testing

/// A batch `reverse` answers placemarks made in one call from one buffer (packed models), which
/// read their fields from it until a script needs a whole table: each must read as the placemark
/// of a single call does, whatever a script does to it first.
@Suite struct GeocoderBatchLuaTests {
    /// Each placemark of the batch meets a different operation first (before any field read made
    /// its table), and each answers as the same point's single-call placemark does: fields,
    /// `pairs`, `next`, `rawget`, `json.encode`, `inspect`, `tostring`, `==` (a model equals only itself), a misspelled field,
    /// and the read-only refusals of an assignment, `rawset` and `debug.setmetatable`.
    @Test func aBatchPlacemarkReadsAsAPlainReadOnlyTableWhateverComesFirst() async {
        let run = await GeoScriptRun.run("""
            local results
            local function keys(iterate, p)
              local names = {}
              for k, v in iterate(p) do
                assert(rawequal(v, p[k]), k)
                names[#names + 1] = k
              end
              table.sort(names)
              return table.concat(names, ",")
            end
            local function fields(p)
              return table.concat({ p.name, p.locality, tostring(p.subLocality), tostring(p.admin1), tostring(p.admin2),
                                    p.countryCode, p.country, tostring(p.timeZone), p.lat, p.lon, tostring(p.population),
                                    string.format("%.3f", p.distance) }, "|")
            end
            local first = {
              fields = fields,
              pairs = function(p) return keys(pairs, p) end,
              next = function(p) return keys(function(t) return next, t, nil end, p) end,
              rawget = function(p) return tostring(rawget(p, "name")) .. "|" .. tostring(rawget(p, "nothing")) end,
              json = function(p) local d = json.decode(json.encode(p)); return d.name .. "|" .. d.country .. "|" .. d.lat end,
              inspect = function(p) return (inspect(p):gsub("distance = [%d.e+-]+", "distance")) end,
              tostring = function(p) return (tostring(p):gsub("0x%x+", "")) end,
              equal = function(p) return tostring(p == p) .. tostring(p == {}) .. tostring(p == results[1][1]) end,
              misspelled = function(p) return select(2, pcall(function() return p.contry end)) end,
              assign = function(p) return select(2, pcall(function() p.name = "x" end)) end,
              rawset = function(p) return select(2, pcall(rawset, p, "name", "HACKED")) .. "|" .. p.name end,
              setmetatable = function(p) return select(2, pcall(debug.setmetatable, p, nil)) .. "|" .. p.name end,
              dunder = function(p) return tostring(p.__index) .. tostring(p.__newindex) end,
            }
            local order = { "fields", "pairs", "next", "rawget", "json", "inspect", "tostring", "equal", "misspelled",
                            "assign", "rawset", "setmetatable", "dunder" }
            task(function()
              -- Paris (a section: all 12 fields), Sèvres, Tokyo, Sydney, the sea off Portugal.
              local spots = { { lat = 48.8566, lon = 2.3522 }, { lat = 48.8239, lon = 2.2117 }, { lat = 35.6762, lon = 139.6503 },
                              { lat = -33.8688, lon = 151.2093 }, { lat = 38.5, lon = -12.5 } }
              local points = {}
              for i = 1, #order * #spots do points[i] = spots[(i - 1) % #spots + 1] end
              results = assert(services.geocoder:reverse(points))
              local differ = 0
              for i, point in ipairs(points) do
                local op = order[(i - 1) // #spots + 1]
                local single = assert(services.geocoder:reverse(point))[1]
                local got, want = first[op](results[i][1], single), first[op](single, single)
                if got ~= want then
                  differ = differ + 1
                  print("differs", op, got, want)
                end
                -- Whatever came first, the fields read the same afterwards.
                if fields(results[i][1]) ~= fields(single) then print("fields differ after", op) end
              end
              print(#results, differ)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["65\t0"], "\(run.lines)")
    }
}
