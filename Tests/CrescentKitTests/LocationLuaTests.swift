import CrescentKit
import Foundation
import HTTPTestServer
import Model
import Services
import Testing

/// Scripts with the real `location` and `geocoder` services, on a real loop (their methods run
/// in Swift tasks, which EmbeddedEventLoop cannot take).
enum GeoScriptRun {
    /// The location and geocoder services, made as the standard plugin makes them.
    struct GeoPlugin: Plugin {
        let name = "geo"
        func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] {
            try LocationService.make(context) + [GeocoderService()]
        }
    }

    /// Runs `source` as `test.lua` with `--location location`. Under a sanitizer (``Sanitizer``)
    /// the time limit is ten times longer, as ``RealLoopRun``'s is: the geocoder's first use loads
    /// its places, which ThreadSanitizer slowed past 30 s on a loaded machine.
    static func run(_ source: String, location: String? = nil,
                    timeout: Double = Sanitizer.active == nil ? 30 : 300) async -> RealLoopRun {
        var options = HostOptions()
        options.timeout = timeout
        options.location = location
        return await RealLoopRun.run(source, options: options, plugins: [GeoPlugin()])
    }
}

/// `services.location` from Lua: properties, events, start/stop shares across owners, current().
@Suite struct LocationLuaTests {
    /// The shipped track, from the package root.
    static let track = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/tracks/paris.gpx").path

    @Test func eventsAndTheLocationPropertyCarryReadOnlyLocations() async {
        let run = await GeoScriptRun.run("""
            local loc = services.location
            print(loc.provider, loc.updating, loc.location)
            loc:on("didUpdateLocations", function(locations)
              local fix = locations[#locations]
              print(#locations, fix.lat, fix.lon, fix.altitude, fix.provider, type(fix.time))
              print(pcall(function() fix.lat = 0 end))
              timer.after(0.1, function()
                print(loc.updating, loc.location.lat)
                -- Each read is a fresh proxy over the one snapshot: equal, not the same table,
                -- and read-only even to a raw write.
                local first, second = loc.location, loc.location
                print(first == second, rawequal(first, second), (pcall(rawset, first, "lat", 0)), loc.location.lat, first.lat)
                loc:stop()
                timer.after(0.1, function() print(loc.updating) end)
              end)
            end, { once = true })
            loc:start()
            """, location: "fixed:48.8566,2.3522,35")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 6, "\(run.lines)")
        #expect(run.lines.first == "fixed\tfalse\tnil")
        #expect(run.lines.dropFirst().first == "1\t48.8566\t2.3522\t35.0\tfixed\tnumber")
        #expect(run.lines.dropFirst(2).first?.hasPrefix("false\t") == true && run.lines.dropFirst(2).first?.contains("location") == true)
        #expect(Array(run.lines.suffix(3)) == ["true\t48.8566", "true\tfalse\tfalse\t48.8566\t48.8566", "false"])
    }

    @Test func startIsCountedPerOwnerAcrossAControllerAndTheScript() async {
        let run = await GeoScriptRun.run("""
            local loc = services.location
            local Tracker = controller("Tracker")
            function Tracker:viewWillAppear() self:start(loc, { distance = 1000 }) end
            app.push(Tracker)
            loc:start({ distance = 5 })
            timer.after(0.3, function()
              print("both", loc.updating)
              app.pop()                                   -- the controller's share ends
              timer.after(0.3, function()
                print("script", loc.updating)
                loc:stop()                                -- the last share ends
                timer.after(0.3, function() print("none", loc.updating) end)
              end)
            end)
            """, location: "fixed:1,2")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.filter { !$0.isEmpty } == ["both\ttrue", "script\ttrue", "none\tfalse"], "\(run.stdout)")
    }

    @Test func currentAnswersOnceAndFailsWhileGpsdIsUnreachable() async throws {
        let fixed = await GeoScriptRun.run("""
            local calls = 0
            services.location:current(function(fix, err)
              calls = calls + 1
              print(fix.lat, fix.lon, err, services.location.updating)
              -- counted a while after the first answer, however long that took on a busy machine
              if calls == 1 then timer.after(1, function() print("calls", calls) end) end
            end)
            """, location: "fixed:10,20")
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(fixed.lines == ["10.0\t20.0\tnil\tfalse", "calls\t1"])

        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let gpsd = await GeoScriptRun.run("""
            on("location.didFail", function(e) print("didFail", e.code, e.service) end, { once = true })
            task(function()
              local fix, err = services.location:current()
              print(fix, err.code, err.message)
            end)
            """, location: "gpsd:127.0.0.1:\(port)")
        #expect(gpsd.status == 0, "\(gpsd.stderr)")
        #expect(gpsd.lines.contains("didFail\tunavailable\tlocation"), "\(gpsd.lines)")
        #expect(gpsd.lines.contains { $0.hasPrefix("nil\tunavailable\tcannot reach gpsd at 127.0.0.1:\(port)") }, "\(gpsd.lines)")
    }

    @Test func theShippedTrackReplaysInRecordedOrder() async {
        let run = await GeoScriptRun.run("""
            local loc = services.location
            local count, times = 0, {}
            loc:on("didUpdateLocations", function(locations)
              for _, fix in ipairs(locations) do
                count = count + 1
                times[#times + 1] = fix.time
              end
            end)
            loc:start()
            task(function()
              while not loc.location or loc.location.lon > 2.1205 do sleep(0.05) end
              loc:stop()
              for i = 2, #times do assert(times[i] > times[i - 1], "times in order") end
              print("fixes", count >= 100)
            end)
            """, location: "gpx:\(Self.track)@2000x")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.last == "fixes\ttrue", "\(run.lines)")
    }

    @Test func theShippedTrackPassesTheTownsItIsNamedAfter() async throws {
        let run = await GeoScriptRun.run("""
            local names = {}
            task(function()
              local fixes = {}
              services.location:on("didUpdateLocations", function(locations)
                for _, fix in ipairs(locations) do fixes[#fixes + 1] = fix end
              end)
              services.location:start()
              while #fixes < 474 do sleep(0.05) end
              services.location:stop()
              local places = services.geocoder:reverse(fixes)
              for _, found in ipairs(places) do
                local name = found[1].name
                if names[#names] ~= name then names[#names + 1] = name end
              end
              print(table.concat(names, ","))
            end)
            """, location: "gpx:\(Self.track)@5000x")
        #expect(run.status == 0, "\(run.stderr)")
        let names = try #require(run.lines.last).split(separator: ",").map(String.init)
        let towns = ["Paris", "Issy-les-Moulineaux", "Boulogne-Billancourt", "Sèvres", "Versailles"]
        var position = names.startIndex
        for town in towns {
            guard let found = names[position...].firstIndex(of: town) else {
                Issue.record("\(town) missing from \(names)")
                return
            }
            position = found
        }
        #expect(names.first?.hasPrefix("Paris") == true && names.last == "Versailles", "\(names)")
    }

    /// A plugin that makes its services at once refuses as a whole (the standard ones are lazy).
    @Test func aBadSettingStopsTheHostBeforeTheScript() throws {
        var options = HostOptions()
        options.location = "gpx:/nonexistent/track.gpx"
        #expect(throws: HostSetupError.self) {
            try ServiceFactory.entries(plugins: [GeoScriptRun.GeoPlugin()], options: options)
        }
        do throws(HostSetupError) {
            _ = try ServiceFactory.entries(plugins: [GeoScriptRun.GeoPlugin()], options: options)
        } catch {
            #expect(error.description == "plugin 'geo': location gpx:/nonexistent/track.gpx: cannot read the file: No such file or directory")
        }
    }
}
