import Foundation
import HTTPTestServer
import Model
@testable import Services
import Testing

/// The location service: provider settings, start/stop shares, the distance filter and current().
@Suite struct LocationServiceTests {
    @Test func providerSettings() throws {
        let folder = try ScratchFolder()
        let gpx = try folder.write("t.gpx", GPXParserTests.track)
        func source(_ setting: String?) throws(ServiceError) -> String {
            let provider = try LocationProviderSpec.provider(setting)
            return "\(provider.name) \(provider.source)"
        }
        #expect(try source(nil) == "gpsd 127.0.0.1:2947")
        #expect(try source("gpsd") == "gpsd 127.0.0.1:2947")
        #expect(try source("gpsd:example.org") == "gpsd example.org:2947")
        #expect(try source("gpsd:10.0.0.2:3000") == "gpsd 10.0.0.2:3000")
        #expect(try source("gpsd:[::1]:3001") == "gpsd [::1]:3001")
        #expect(try source("gpx:\(gpx)@60x") == "gpx \(gpx)")
        #expect((try LocationProviderSpec.provider("gpx:\(gpx)@60x") as? GPXProvider)?.speedup == 60)
        #expect((try LocationProviderSpec.provider("nmea:\(gpx)") as? NMEAProvider)?.speedup == 1)
        #expect(try source("fixed:48.8566,2.3522,35") == "fixed 48.8566,2.3522,35.0")
        let errors: [(String, String)] = [
            ("loran:1", "unknown location provider 'loran' (use gpsd, nmea:FILE, gpx:FILE or fixed:LAT,LON)"),
            ("fixd:1,2", "unknown location provider 'fixd' (use gpsd, nmea:FILE, gpx:FILE or fixed:LAT,LON); did you mean 'fixed:1,2'?"),
            ("48.85,2.35", "unknown location provider '48.85,2.35' (use gpsd, nmea:FILE, gpx:FILE or fixed:LAT,LON); did you mean 'fixed:48.85,2.35'?"),
            ("gps", "unknown location provider 'gps' (use gpsd, nmea:FILE, gpx:FILE or fixed:LAT,LON); did you mean 'gpsd'?"),
            ("gpsd:host:99999", "location gpsd:host:99999: the port must be a number in [1, 65535], got '99999'"),
            ("gpx:/nonexistent.gpx", "location gpx:/nonexistent.gpx: cannot read the file: No such file or directory"),
            ("gpx:\(gpx)@0x", "location gpx:\(gpx)@0x: the speed-up after '@' must be a number in [0.001, 1000000] followed by x (gpx:FILE@10x), got '0x'"),
            ("fixed:48.8", "location fixed:48.8: expected fixed:LAT,LON[,ALT] in degrees (and metres)"),
            ("fixed:91,0", "location fixed: latitude 91 is outside [-90, 90]"),
        ]
        for (setting, message) in errors {
            #expect(throws: ServiceError(.invalidArgument, message)) { try LocationProviderSpec.provider(setting) }
        }
    }

    @Test func theCommandLineWinsOverTheConfigFile() throws {
        func provider(_ context: PluginContext) throws(ServiceError) -> String {
            try (LocationService.make(context).first as? LocationService)?.providerName.value ?? ""
        }
        #expect(try provider(PluginContext()) == "gpsd")
        let config = PluginContext(sections: ["location": ["provider": "fixed:1,2"]])
        #expect(try provider(config) == "fixed")
        let both = PluginContext(sections: ["location": ["provider": "fixed:1,2"]], settings: ["location": "gpsd:localhost"])
        #expect(try provider(both) == "gpsd")
        #expect(throws: ServiceError(.invalidArgument, "unknown location provider 'x' (use gpsd, nmea:FILE, gpx:FILE or fixed:LAT,LON)")) {
            try LocationService.make(PluginContext(settings: ["location": "x:1"]))
        }
    }

    @Test func startingRunsTheProviderUntilTheLastShareEnds() async throws {
        let clock = ManualClock()
        let service = try LocationService(setting: "fixed:48.8566,2.3522,35", clock: clock)
        let events = ModelEvents(service)
        #expect(service.location.value == .null && service.updating.value == false)
        service.startUpdates(shares: [.null])
        #expect(service.updating.value)
        #expect(await clock.advanceJobs { events.fixes.count >= 1 })
        #expect(clock.uptime == .zero, "the first fix at once")
        let fix = try #require(events.fixes.first)
        #expect(fix["lat"].doubleValue == 48.8566 && fix["lon"].doubleValue == 2.3522)
        #expect(fix["altitude"].doubleValue == 35 && fix["provider"] == "fixed")
        #expect(service.location.value == fix)
        service.startUpdates(shares: [.null, ["distance": 5]])   // a second owner
        service.startUpdates(shares: [["distance": 5]])          // the first one left
        #expect(service.updating.value)
        service.stopUpdates()
        #expect(!service.updating.value)
        let count = events.fixes.count
        clock.advance(by: .seconds(10))
        #expect(events.fixes.count == count, "no fixes after the last share ended")
        #expect(clock.pendingCount == 0, "the provider's ticker is gone")
        #expect(events.values("updating") == [true, false])
    }

    @Test func theSmallestDistanceFilterWins() async throws {
        let folder = try ScratchFolder()
        let path = try folder.write("route.nmea", NMEAWriter.routeLog(perTown: 3))
        let clock = ManualClock()
        let service = try LocationService(setting: "nmea:\(path)@100x", clock: clock)
        let events = ModelEvents(service)
        // Fixes at one town are 0 m apart, towns tens of kilometres: both filters keep one per town.
        service.startUpdates(shares: [["distance": 50_000], ["distance": 1_000]])
        let caen = NMEAWriter.route[4].longitude
        #expect(await clock.advanceJobs { abs((events.fixes.last?["lon"].doubleValue ?? 0) - caen) < 1e-6 })
        #expect(await clock.advanceJobs { clock.pendingCount == 0 }, "the replay runs to its end")
        let longitudes = events.fixes.compactMap { $0["lon"].doubleValue }
        #expect(longitudes.count == 5)
        #expect(zip(longitudes, NMEAWriter.route).allSatisfy { abs($0 - $1.longitude) < 1e-6 })
        service.stopUpdates()

        let unfiltered = ModelEvents(service)
        service.startUpdates(shares: [["distance": 50_000], .null])   // a share without a filter
        #expect(await clock.advanceJobs { unfiltered.fixes.count >= 15 })
        service.stopUpdates()
    }

    @Test func theFirstFixAfterARestartIsDeliveredWhateverTheFilter() async throws {
        let clock = ManualClock()
        let service = try LocationService(setting: "fixed:10,20", clock: clock)
        let events = ModelEvents(service)
        for round in 1...2 {
            service.startUpdates(shares: [["distance": 100]])
            #expect(await clock.advanceJobs { events.fixes.count >= round }, "round \(round)")
            clock.advance(by: .seconds(3))
            service.stopUpdates()
        }
        clock.advance(by: .seconds(3))
        #expect(events.fixes.count == 2, "one per run: a receiver at rest does not move 100 m")
    }

    @Test func currentAnswersOnceWithoutStartingAndStopsTheProvider() async throws {
        let service = try LocationService(setting: "fixed:10,20")
        let started = ContinuousClock.now
        async let first = service.current()
        async let second = service.current()
        let (a, b) = try await (first, second)
        #expect(a.latitude == 10 && b.longitude == 20)
        #expect(!service.updating.value)
        // Fresh for 5 s (of real time: this service runs on the system clock): answered at once,
        // the same fix. On a machine loaded enough that 5 s went by, a new fix is right.
        let again = try await service.current()
        if ContinuousClock.now - started < .seconds(4) { #expect(again == a) }
    }

    @Test func currentFailsWhileGpsdIsUnreachable() async throws {
        let refusing = try RefusingPort()
        let port = refusing.port
        defer { withExtendedLifetime(refusing) {} }
        let service = try LocationService(setting: "gpsd:127.0.0.1:\(port)")
        let events = ModelEvents(service)
        let error = await serviceError { () async throws(ServiceError) in try await service.current().value }
        #expect(error?.code == .unavailable)
        #expect(error?.message.hasPrefix("cannot reach gpsd at 127.0.0.1:\(port)") == true, "\(String(describing: error))")
        // Without a receiver, the way on: another provider, named as it is written.
        #expect(error?.message.contains("--location fixed:LAT,LON") == true && error?.message.contains("gpx:FILE") == true,
                "\(String(describing: error))")
        #expect(events.failures == ["unavailable"])
        #expect(events.payloads("didFail").first?["service"] == "location")
    }

    @Test func currentIsCancellable() async throws {
        let folder = try ScratchFolder()
        let path = try folder.write("late.nmea", "")
        let service = try LocationService(setting: "nmea:\(path)")
        service.startUpdates(shares: [.null])
        // An empty file fails at once (as an empty GPX does): current() says so instead of waiting forever.
        let ended = await serviceError { () async throws(ServiceError) in try await service.current().value }
        #expect(ended?.code == .invalidData && ended?.message.contains("no fix in the file") == true, "\(String(describing: ended))")
        service.stopUpdates()

        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let gpsd = try LocationService(setting: "gpsd:127.0.0.1:\(refusing.port)")
        let waiting = Task { () async -> ServiceError? in
            await serviceError { () async throws(ServiceError) in try await gpsd.current().value }
        }
        waiting.cancel()
        let error = await waiting.value
        #expect(error?.code == .cancelled || error?.code == .unavailable)
    }
}
