import Foundation
import Testing

/// The location and geocoder scripts, run as users run them.
@Suite struct LocationScriptTests {
    static let scripts = ControllerScriptTests.scripts

    @Test func geocodeWritesCSVForAPipe() async throws {
        let result = try await crescent(["\(Self.scripts)/geocode.lua"],
                                        stdin: "48.8566,2.3522\n51.5072,-0.1276\nnonsense\n35.6895,139.6917\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "lat,lon,locality,subLocality,admin1,country,timeZone,distance_m",
            "48.8566,2.3522,Paris,Paris 04 Hôtel-de-Ville,Île-de-France,France,Europe/Paris,404",
            "51.5072,-0.1276,London,,England,United Kingdom,Europe/London,196",
            "35.6895,139.6917,Tokyo,,Tokyo,Japan,Asia/Tokyo,1",
        ], "\(result)")
        #expect(result.stderr == "geocode.lua: line 3 is not lat,lon in degrees (lat in [-90, 90], lon in [-180, 180]): nonsense\n", "\(result)")
    }

    /// One bad line (out of range, or refused by the geocoder) is reported and skipped: the rest
    /// of the batch is still answered.
    @Test func geocodeGoesOnAfterABadLine() async throws {
        let result = try await crescent(["\(Self.scripts)/geocode.lua"],
                                        stdin: "48.8566,2.3522\n123,0\n1e999,0\n35.6895,139.6917\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.count == 3, "\(result)")
        #expect(result.stdoutLines.last?.hasPrefix("35.6895,139.6917,Tokyo") == true, "\(result)")
        #expect(result.stderr.contains("line 2 is not lat,lon") && result.stderr.contains("line 3 is not lat,lon"), "\(result)")
    }

    /// Requests made while the geocoder's data loads (a fresh process) are answered in the order
    /// they were made, so the newest answer is the one a view is left showing.
    @Test func callsMadeWhileTheGeocoderLoadsAreAnsweredInOrder() async throws {
        let result = try await crescent(["-e", """
            local answered = {}
            for i = 1, 30 do
              services.geocoder:reverse({ lat = 48.0 + i / 10, lon = 2.35 }, function(placemarks, err)
                answered[#answered + 1] = err and ("error " .. tostring(err)) or tostring(i)
              end)
            end
            services.geocoder:search("Paris", function(places) answered[#answered + 1] = "search" end)
            timer.every(0.05, function(t)
              if #answered == 31 then print(table.concat(answered, " ")); t:cancel() end
            end)
            """])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == (1...30).map(String.init).joined(separator: " ") + " search\n", "\(result)")
    }

    /// The tracker on the shipped GPX track (what `make run` shows), stopped by --timeout.
    @Test func trackerNamesThePlacesOfTheShippedTrack() async throws {
        let repository = URL(fileURLWithPath: Self.scripts).deletingLastPathComponent().path
        let result = try await crescent(
            // 15 s: the first answer waits for the geocoder's data, which a loaded machine loads
            // slowly (in make test's parallel phase two runs in three found no place within 8 s).
            ["--keep-running", "--timeout", "15", "--ui", "plain", "--location", "gpx:scripts/tracks/paris.gpx@60x", "scripts/tracker.lua"],
            directory: repository)
        #expect(result.status == 1, "stopped by the time limit: \(result)")
        #expect(result.stderr.contains("--timeout"), "\(result)")
        // The track runs from Paris into Vanves; the tracker names the latest fix only, so on a
        // loaded machine the geocoder's first answer (after its data loads) may already be Vanves'
        // (seen once in make test's parallel phase).
        #expect(["Paris", "Vanves"].contains { result.stdout.contains("Where am I?\nplace     \($0), France") }, "\(result)")
        #expect(result.stdout.contains("speed     "), "\(result)")

        // What `make run` shows on screen: each render's position is a later point of the track
        // than the one before (an older answer never overwrites a newer one).
        let track = try String(contentsOfFile: "\(repository)/scripts/tracks/paris.gpx", encoding: .utf8)
        var order: [String: Int] = [:]
        for (index, match) in track.matches(of: /<trkpt lat="([0-9.\-]+)" lon="([0-9.\-]+)"/).enumerated() {
            guard let lat = Double(match.1), let lon = Double(match.2) else { continue }
            let shown = String(format: "%.5f, %.5f", lat, lon)
            if order[shown] == nil { order[shown] = index }
        }
        let shown = result.stdoutLines.filter { $0.hasPrefix("position  ") }.map { String($0.dropFirst("position  ".count)) }
        let indexes = shown.compactMap { order[$0] }
        #expect(shown.count >= 2 && indexes.count == shown.count, "every position shown is a track point: \(shown)")
        #expect(zip(indexes, indexes.dropFirst()).allSatisfy { $0 < $1 }, "positions in track order: \(indexes)")
    }
}
