import Foundation
import Testing

/// The location and geocoder scripts, run as users run them.
@Suite struct LocationScriptTests {
    static let scripts = ControllerScriptTests.scripts

    @Test func geocodeWritesCSVForAPipe() async throws {
        let result = try await crescent(["\(Self.scripts)/geocode.lua"],
                                        stdin: "48.8566,2.3522\n51.5072,-0.1276\nnonsense\n35.6762,139.6503\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "lat,lon,name,admin1,country,distance_m",
            "48.8566,2.3522,Paris,Ile-de-France,France,433",
            "51.5072,-0.1276,London,England,United Kingdom,196",
            "35.6762,139.6503,Tokyo,Tokyo,Japan,4022",
        ], "\(result)")
        #expect(result.stderr == "geocode.lua: line 3 is not lat,lon: nonsense\n", "\(result)")
    }

    /// The tracker on the shipped GPX track (what `make run` shows), stopped by --timeout.
    @Test func trackerNamesThePlacesOfTheShippedTrack() async throws {
        let repository = URL(fileURLWithPath: Self.scripts).deletingLastPathComponent().path
        let result = try await crescent(
            ["--timeout", "4", "--ui", "plain", "--location", "gpx:scripts/tracks/paris.gpx@60x", "scripts/tracker.lua"],
            directory: repository)
        #expect(result.status == 1, "stopped by the time limit: \(result)")
        #expect(result.stderr.contains("--timeout"), "\(result)")
        #expect(result.stdout.contains("Where am I?\nplace     Paris, France"), "\(result)")
        #expect(result.stdout.contains("speed     "), "\(result)")
    }
}
