import Model
@testable import Services
import Testing

/// Location input as receivers and gpsd really write it: GLL fixes, simulator and no-fix modes,
/// impossible measurements, and files with nothing usable.
@Suite struct LocationInputTests {
    @Test func gllSentencesMakeFixes() {
        var parser = NMEAParser(today: NMEAWriter.baseTime)
        var fixes = parser.feed(NMEAWriter.sentence("GPGLL,4851.3960,N,00221.1320,E,120000.00,A,A"))
        fixes += parser.feed(NMEAWriter.sentence("GNGLL,4851.4000,N,00221.1400,E,120001.00,A,D"))
        fixes += parser.finish()
        #expect(fixes.count == 2)
        #expect(fixes.first.map { abs($0.latitude - 48.8566) < 0.001 && abs($0.longitude - 2.3522) < 0.001 } == true)
        #expect(fixes.first?.time == NMEAWriter.baseTime)
        #expect(parser.rejected == 0)
    }

    @Test func voidSimulatedAndNoFixSentencesGiveNoPosition() {
        var parser = NMEAParser(today: 0)
        var fixes = parser.feed(NMEAWriter.sentence("GPGGA,120000.00,4851.3960,N,00221.1320,E,8,08,0.9,35,M,47.0,M,,"))
        fixes += parser.feed(NMEAWriter.sentence("GPRMC,120001.00,A,4851.3960,N,00221.1320,E,10.0,90.0,150624,,,S"))
        fixes += parser.feed(NMEAWriter.sentence("GPRMC,120002.00,A,4851.3960,N,00221.1320,E,10.0,90.0,150624,,,N"))
        fixes += parser.feed(NMEAWriter.sentence("GPGLL,4851.3960,N,00221.1320,E,120003.00,V,N"))
        fixes += parser.feed(NMEAWriter.sentence("GPGLL,4851.3960,N,00221.1320,E,120004.00,A,S"))
        fixes += parser.finish()
        #expect(fixes.isEmpty, "\(fixes)")
        #expect(parser.rejected == 0)
    }

    @Test func impossibleMeasurementsFromGpsdAreDroppedNotPassedOn() throws {
        let report: Value = [
            "class": "TPV", "mode": 3, "lat": 48.85, "lon": 2.35, "time": "2024-06-15T12:00:00Z",
            "speed": -3.0, "track": 400.0, "eph": -1.0, "altMSL": 1e30,
        ]
        let fix = try #require(GpsdProvider.fix(from: report)?.validated())
        #expect(fix.speed == nil && fix.course == nil && fix.accuracy == nil && fix.altitude == nil, "\(fix)")
        let fine: Value = ["class": "TPV", "mode": 3, "lat": 48.85, "lon": 2.35, "time": "2024-06-15T12:00:00Z",
                           "speed": 1.5, "track": 90.0, "eph": 4.0, "altMSL": 35.0]
        let kept = try #require(GpsdProvider.fix(from: fine)?.validated())
        #expect(kept.speed == 1.5 && kept.course == 90 && kept.accuracy == 4 && kept.altitude == 35)
    }

    @Test(arguments: ["", "garbage\nmore garbage\n$GPRMC,bad*00\n"])
    func anEmptyOrGarbageNMEAFileFails(contents: String) async throws {
        let folder = try ScratchFolder()
        let path = try folder.write("log.nmea", contents)
        let events = Events()
        await NMEAProvider(path: path, speedup: 1).run(clock: ManualClock()) { events.append($0) }
        let failure = events.all.compactMap { event -> ServiceError? in if case .failed(let error) = event { error } else { nil } }.first
        #expect(failure?.code == .invalidData, "\(events.all)")
        #expect(failure?.message.hasPrefix("\(path): no fix in the file") == true, "\(String(describing: failure))")
    }

    @Test func absurdFeedYearsAreNotDatesAndDoNotOverflow() {
        #expect(FeedDate.parse("Sat, 15 Jun 99999999999999999 12:00:00 GMT") == nil)
        #expect(CivilTime.seconds(year: Int.max, month: 99, day: -5, secondsOfDay: 0).isFinite)
        #expect(CivilTime.date(ofEpochSeconds: .infinity).year > 1_000_000)
        #expect(CivilTime.date(ofEpochSeconds: -.infinity).year < -1_000_000)
        #expect(CivilTime.date(ofEpochSeconds: .nan) == (1970, 1, 1))
    }
}
