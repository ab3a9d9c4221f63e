import Foundation
import Model
@testable import Services
import Testing

/// GPX 1.1 track points, with and without elevation and time, and the replay.
@Suite struct GPXParserTests {
    static let track = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a walk -->
        <gpx version="1.1" creator="test &amp; co" xmlns="http://www.topografix.com/GPX/1/1">
          <metadata><name><![CDATA[Paris <walk>]]></name></metadata>
          <trk><name>walk</name><trkseg>
            <trkpt lat="48.8566" lon="2.3522"><ele>35.5</ele><time>2024-06-15T12:00:00Z</time><hdop>1.2</hdop></trkpt>
            <trkpt lat='48.8570' lon='2.3530'><time>2024-06-15T12:00:10Z</time></trkpt>
            <trkpt lat="48.8575" lon="2.3540"><ele>37</ele></trkpt>
            <trkpt lat="48.8580" lon="2.3550"/>
          </trkseg></trk>
          <trk><trkseg>
            <trkpt lat="48.8590" lon="2.3560"><ele> 40 </ele><time>2024-06-15T14:00:30+02:00</time></trkpt>
          </trkseg></trk>
        </gpx>
        """

    @Test func trackPointsKeepWhatTheyHave() throws {
        let points = try GPXParser.parse(Array(Self.track.utf8))
        #expect(points.count == 5)
        #expect(points[0] == GPXParser.Point(latitude: 48.8566, longitude: 2.3522, elevation: 35.5, time: NMEAWriter.baseTime, hdop: 1.2))
        #expect(points[1].elevation == nil && points[1].time == NMEAWriter.baseTime + 10)
        #expect(points[2].elevation == 37 && points[2].time == nil)
        #expect(points[3].elevation == nil && points[3].time == nil, "a self-closing point")
        #expect(points[4].elevation == 40 && points[4].time == NMEAWriter.baseTime + 30, "offsets are applied")
    }

    @Test func fixesDeriveSpeedAndCourseFromTimedPoints() throws {
        let fixes = GPXParser.fixes(try GPXParser.parse(Array(Self.track.utf8)))
        #expect(fixes[0].speed == nil && fixes[0].accuracy.map { abs($0 - 6) < 1e-9 } == true)
        let expected = GeoPoint(latitude: 48.8566, longitude: 2.3522).distance(to: GeoPoint(latitude: 48.8570, longitude: 2.3530)) / 10
        #expect(abs((fixes[1].speed ?? 0) - expected) < 1e-9)
        #expect((fixes[1].course ?? -1) > 0 && (fixes[1].course ?? 360) < 90, "north-east")
        #expect(fixes[2].speed == nil, "no time, no speed")
        #expect(fixes.allSatisfy { $0.provider == "gpx" })
    }

    @Test func badFilesAreInvalidData() {
        let cases: [(String, String)] = [
            ("<gpx><trk><trkseg><trkpt lon=\"2\"></trkpt></trkseg></trk></gpx>", "GPX track point #1 has no valid lat attribute"),
            ("<gpx><trkpt lat=\"1\" lon=\"200\"/></gpx>", "GPX track point #1 has no valid lon attribute"),
            // A NUL inside a number is no number (it ended the number: 48.0).
            ("<gpx><trkpt lat=\"48\u{0}.9\" lon=\"2.3\"/></gpx>", "GPX track point #1 has no valid lat attribute"),
            ("<gpx><trkpt lat=\"48.9\" lon=\"2\u{0}.3\"/></gpx>", "GPX track point #1 has no valid lon attribute"),
            ("<kml></kml>", "not a GPX file (the root element is <kml>, not <gpx>)"),
            ("<!-- only a comment -->", "malformed XML at line 1, column 24: the document has no root element"),
            ("<gpx><trkpt lat=\"1\" lon=\"2\"", "malformed XML at line 1, column 6: the start tag <trkpt> is not closed"),
            ("<gpx>\n  <!-- never closed", "malformed XML at line 2, column 3: a comment (<!--) is not closed with '-->'"),
        ]
        for (text, message) in cases {
            #expect(throws: ServiceError(.invalidData, message)) { try GPXParser.parse(Array(text.utf8)) }
        }
    }

    @Test func theReplayKeepsTheRecordedPaceAndStampsUntimedPoints() async throws {
        let folder = try ScratchFolder()
        let path = try folder.write("walk.gpx", Self.track)
        let events = Events()
        let clock = ManualClock()
        // 10 s between the first two points at 100x: 0.1 s; untimed points one second each.
        let replay = Task { await GPXProvider(path: path, speedup: 100).run(clock: clock) { events.append($0) } }
        #expect(await clock.waitForJob())
        clock.advance(by: .zero)
        #expect(events.fixes.count == 1)
        clock.advance(by: .milliseconds(99))
        #expect(events.fixes.count == 1, "not before its time")
        clock.advance(by: .milliseconds(1))
        #expect(events.fixes.count == 2)
        clock.advance(by: .milliseconds(10))
        #expect(events.fixes.count == 3, "an untimed point one recorded second later")
        #expect(await clock.advanceJobs { events.ended })
        await replay.value
        let fixes = events.fixes
        #expect(fixes.count == 5)
        #expect(fixes[0].time == NMEAWriter.baseTime && fixes[1].time == NMEAWriter.baseTime + 10)
        #expect(fixes[2].time == clock.wallTime - 0.3 + 0.11, "untimed points carry the clock's time when replayed")
        #expect(abs(fixes[3].time - (clock.wallTime - 0.3 + 0.12)) < 1e-6)
        #expect(clock.uptime == .milliseconds(300), "the last point 20 recorded seconds after the second")
    }

    @Test func aBadFileIsReportedAndEndsTheReplay() async throws {
        let folder = try ScratchFolder()
        let path = try folder.write("bad.gpx", "<gpx><trkpt lat=\"x\" lon=\"1\"/></gpx>")
        let events = Events()
        await GPXProvider(path: path, speedup: 1).run(clock: ManualClock()) { events.append($0) }
        #expect(events.failures.map(\.code) == [.invalidData])
        #expect(events.failures.first?.message.hasSuffix("bad.gpx: GPX track point #1 has no valid lat attribute") == true)
        #expect(events.ended)
    }
    @Test func anEmptyFileOrOneWithoutTrackPointsFailsNamingTheFile() async throws {
        let folder = try ScratchFolder()
        let cases: [(String, String, String)] = [
            ("empty.gpx", "", "malformed XML at line 1, column 1: the document has no root element"),
            ("bare.gpx", "<gpx/>", "no track points in the file"),
            ("segment.gpx", "<gpx><trk><trkseg></trkseg></trk></gpx>", "no track points in the file"),
            ("route.gpx", "<gpx><rte><rtept lat=\"1\" lon=\"2\"/></rte><wpt lat=\"1\" lon=\"2\"/></gpx>", "no track points in the file"),
        ]
        for (name, text, message) in cases {
            let path = try folder.write(name, text)
            let events = Events()
            await GPXProvider(path: path, speedup: 1).run(clock: ManualClock()) { events.append($0) }
            #expect(events.failures.map(\.code) == [.invalidData], "\(name)")
            #expect(events.failures.first?.message.contains("\(name): \(message)") == true, "\(name): \(events.failures)")
            #expect(events.fixes.isEmpty && events.ended, "\(name)")
        }
        let null = Events()
        await GPXProvider(path: "/dev/null", speedup: 1).run(clock: ManualClock()) { null.append($0) }
        #expect(null.failures.first?.message.hasPrefix("/dev/null: ") == true && null.ended)
    }

    /// A track whose second point carries `attribute` (an extra attribute of `size` bytes) or a
    /// `<time>` of `size` bytes, between two good points.
    static func trackWithHugeSecondPoint(size: Int, inTime: Bool) -> String {
        let filler = String(repeating: "A", count: size)
        let second = inTime
            ? "<trkpt lat=\"48.86\" lon=\"2.35\"><time>\(filler)</time></trkpt>"
            : "<trkpt lat=\"48.86\" lon=\"2.35\" x=\"\(filler)\"></trkpt>"
        return "<gpx><trk><trkseg><trkpt lat=\"48.85\" lon=\"2.35\"></trkpt>\(second)"
            + "<trkpt lat=\"48.87\" lon=\"2.35\"></trkpt></trkseg></trk></gpx>"
    }

    /// A tag or a field longer than the limit fails at that point, after the points before it,
    /// instead of being held whole (a 400 MiB attribute froze the loop and grew memory).
    @Test(arguments: [false, true])
    func aTagOrFieldPastTheSizeLimitFailsAfterThePointsBeforeIt(inTime: Bool) throws {
        let folder = try ScratchFolder()
        let path = try folder.write("huge.gpx", Self.trackWithHugeSecondPoint(size: 300_000, inTime: inTime))
        var parser = try GPXParser(path: path, sizeLimit: 100_000)
        #expect(try parser.next()?.latitude == 48.85)
        do {
            let point = try parser.next()
            Issue.record("read \(String(describing: point)) past the limit")
        } catch {
            #expect(error.code == .invalidData)
            let expected = inTime
                ? "GPX track point #2 has a field whose text is longer than 100000 bytes, the most one may take"
                : "XML too large to read at line 1, column 57: the value of attribute x of <trkpt> is not closed within 100000 bytes, the most one tag, comment or declaration may take"
            #expect(error.message == expected)
        }
        // Under the limit the same file reads whole.
        var roomy = try GPXParser(path: path, sizeLimit: 400_000)
        var latitudes: [Double] = []
        while let point = try roomy.next() { latitudes.append(point.latitude) }
        #expect(latitudes == [48.85, 48.86, 48.87])
    }
}
