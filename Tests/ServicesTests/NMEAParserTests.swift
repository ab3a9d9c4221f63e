import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// NMEA 0183: checksums, truncated and corrupted lines, epochs, dates and the file replay.
@Suite struct NMEAParserTests {
    @Test func rmcAndGgaOfOneTimeMakeOneFix() throws {
        var parser = NMEAParser(today: 0)
        let lines = NMEAWriter.epoch(second: 0, latitude: 48.8566, longitude: 2.3522, altitude: 35)
        #expect(parser.feed(lines[0]).isEmpty, "waits for the GGA of the same time")
        let fix = try #require(parser.feed(lines[1]).first)
        #expect(abs(fix.latitude - 48.8566) < 1e-6 && abs(fix.longitude - 2.3522) < 1e-6)
        #expect(fix.altitude == 35)
        #expect(fix.time == NMEAWriter.baseTime)
        #expect(abs((fix.speed ?? 0) - 10 * 1852 / 3600) < 1e-9)
        #expect(fix.course == 90)
        #expect(abs((fix.accuracy ?? 0) - 4.5) < 1e-9)
        #expect(fix.provider == "nmea")
        #expect(parser.accepted == 2 && parser.rejected == 0)
    }

    /// As gpsd decides (its hemi.log capture: quality 1 with 00 satellites after losing lock):
    /// a GGA with fewer than 3 satellites in use carries no position.
    @Test func aGgaWithFewerThanThreeSatellitesHasNoPosition() {
        for (satellites, fixes) in [("00", 0), ("", 0), ("02", 0), ("03", 1), ("12", 1)] {
            var parser = NMEAParser(today: 0)
            let line = NMEAWriter.sentence("GPGGA,194050.00,4221.8237733,N,07101.9411707,W,1,\(satellites),3.3,10.8,M,-33.3,M,,")
            let found = parser.feed(line) + parser.finish()
            #expect(found.count == fixes, "satellites '\(satellites)'")
        }
    }

    @Test func badChecksumsAndTruncatedLinesAreCountedAndSkipped() {
        var parser = NMEAParser(today: 0)
        let good = NMEAWriter.epoch(second: 0, latitude: -33.8688, longitude: 151.2093)
        let corrupted = good[0].replacingOccurrences(of: "3352.1", with: "3353.1")   // checksum no longer matches
        let badDigits = String(good[1].dropLast(2)) + "ZZ"
        let truncated = String(good[0].prefix(30))
        let noChecksum = String(good[1].prefix { $0 != "*" })
        let fewFields = NMEAWriter.sentence("GPRMC,120001.00,A,3352.1280,S")
        var fixes: [LocationFix] = []
        for line in [corrupted, badDigits, truncated, noChecksum, fewFields, "garbage", "", good[0], good[1]] {
            fixes += parser.feed(line)
        }
        fixes += parser.finish()
        #expect(parser.rejected == 6, "the empty line is not counted")
        #expect(fixes.count == 1)
        #expect(fixes.first.map { $0.latitude < 0 && $0.longitude > 0 } == true, "southern and eastern hemispheres")
    }

    /// A sentence with a good checksum and nothing but its type (found by the nmea fuzz target,
    /// which trapped reading the time field past the end) is refused like any short sentence.
    @Test func sentencesCutToTheirTypeAreRefused() {
        var parser = NMEAParser(today: 0)
        var fixes: [LocationFix] = []
        for type in ["GPRMC", "GPGGA", "GPGLL", "GNRMC,"] {
            fixes += parser.feed(NMEAWriter.sentence(type))
        }
        fixes += parser.finish()
        #expect(fixes.isEmpty)
        #expect(parser.rejected == 4 && parser.accepted == 0)
    }

    @Test func sentencesWithoutAFixGiveNoPosition() {
        var parser = NMEAParser(today: 0)
        var fixes = parser.feed(NMEAWriter.sentence("GPRMC,120000.00,V,,,,,,,150624,,,N"))
        fixes += parser.feed(NMEAWriter.sentence("GPGGA,120000.00,,,,,0,00,99.9,,M,,M,,"))
        fixes += parser.finish()
        #expect(fixes.isEmpty)
        #expect(parser.rejected == 0)
    }

    @Test func otherTalkersAndTypesWork() {
        var parser = NMEAParser(today: 0)
        let gsv = NMEAWriter.sentence("GPGSV,3,1,11,03,03,111,00,04,15,270,00,06,01,010,00,13,06,292,00")
        let rmc = NMEAWriter.sentence("GNRMC,120000.00,A,4851.3960,N,00221.1320,E,0.0,,150624,,,A")
        #expect(parser.feed(gsv).isEmpty)
        #expect(parser.feed(rmc).isEmpty)
        #expect(parser.finish().count == 1)
        #expect(parser.rejected == 0)
    }

    @Test func ggaOnlyLogsTakeTodayAndRollOverMidnight() {
        let today = NMEAWriter.baseTime + 3600
        var parser = NMEAParser(today: today)
        var fixes = parser.feed(NMEAWriter.sentence("GPGGA,235959.00,4851.3960,N,00221.1320,E,1,08,1.0,35.0,M,47.0,M,,"))
        fixes += parser.feed(NMEAWriter.sentence("GPGGA,000000.00,4851.3960,N,00221.1320,E,1,08,1.0,35.0,M,47.0,M,,"))
        fixes += parser.finish()
        let midnight = NMEAWriter.baseTime - 12 * 3600   // 2024-06-15T00:00:00Z
        #expect(fixes.map(\.time) == [midnight + 86_399, midnight + 86_400])
    }

    @Test func aFileReplaysEveryFixAtItsRecordedRate() async throws {
        let folder = try ScratchFolder()
        let log = NMEAWriter.routeLog(perTown: 2) + "$GPRMC,broken\r\n"
        let path = try folder.write("route.nmea", log)
        let (fixes, parser) = try NMEAProvider.read(path: path, today: 0)
        #expect(fixes.count == 10 && parser.rejected == 1)

        // 10 fixes one recorded second apart, at 20x: 0.45 s of the clock, one fix per 0.05 s.
        let events = Events()
        let clock = ManualClock()
        let replay = Task { await NMEAProvider(path: path, speedup: 20).run(clock: clock) { events.append($0) } }
        #expect(await clock.waitForJob())
        clock.advance(by: .zero)
        #expect(events.fixes.count == 1, "the first fix at once")
        clock.advance(by: .milliseconds(49))
        #expect(events.fixes.count == 1, "not before its time")
        clock.advance(by: .milliseconds(1))
        #expect(events.fixes.count == 2)
        #expect(await clock.advanceJobs { events.ended })
        await replay.value
        #expect(events.fixes.map(\.time) == fixes.map(\.time))
        #expect(clock.uptime == .milliseconds(450))
    }

    /// A file is read as the replay goes (issue 32): the first fix comes before the rest of the
    /// file is read, so what is written to the file after the replay began still replays.
    @Test func aFileIsReadAsTheReplayGoes() async throws {
        let folder = try ScratchFolder()
        let first = (NMEAWriter.epoch(second: 0, latitude: 48.8566, longitude: 2.3522)
            + NMEAWriter.epoch(second: 1, latitude: 48.9, longitude: 2.4)).joined(separator: "\r\n") + "\r\n"
        // Far more than one read (the replay reads one fix ahead): blank lines, which the parser skips.
        let path = try folder.write("growing.nmea", first + String(repeating: "\r\n", count: 300_000))
        let events = Events()
        let clock = ManualClock()
        let replay = Task { await NMEAProvider(path: path, speedup: 1).run(clock: clock) { events.append($0) } }
        #expect(await clock.waitForJob())
        clock.advance(by: .zero)
        #expect(events.fixes.count == 1, "the first fix at once")
        // The rest of the recording arrives only now.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data((NMEAWriter.epoch(second: 2, latitude: 49.4431, longitude: 1.0993).joined(separator: "\n") + "\n").utf8))
        try handle.close()
        #expect(await clock.advanceJobs { events.ended })
        await replay.value
        #expect(events.fixes.map(\.time) == [NMEAWriter.baseTime, NMEAWriter.baseTime + 1, NMEAWriter.baseTime + 2])
        #expect(events.failures.isEmpty)
    }

    @Test func aDeviceIsReadAsAStreamAndReportedWhenItCloses() async throws {
        let folder = try ScratchFolder()
        let path = folder.path + "/gps0"
        try #require(mkfifo(path, 0o600) == 0)
        let writer = open(path, O_RDWR)   // a writer that never blocks, open before the reader
        try #require(writer >= 0)
        let events = Events()
        let provider = NMEAProvider(path: path, speedup: 1)
        let run = Task { await provider.run(clock: SystemClock.shared) { events.append($0) } }
        defer { run.cancel() }
        var text = NMEAWriter.epoch(second: 0, latitude: 48.8566, longitude: 2.3522).joined(separator: "\r\n") + "\r\n"
        text += "$GPGGA,bad*00\r\n" + NMEAWriter.epoch(second: 1, latitude: 49.4431, longitude: 1.0993).joined(separator: "\n") + "\n"
        _ = text.withCString { write(writer, $0, strlen($0)) }
        let deadline = ContinuousClock.now + .seconds(10)
        while events.fixes.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(events.fixes.map(\.time) == [NMEAWriter.baseTime, NMEAWriter.baseTime + 1])
        #expect(events.failures.isEmpty)
        close(writer)
        while events.failures.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(events.failures.map(\.code) == [.unavailable])
        #expect(events.failures.first?.message == "the NMEA device \(path) closed")
        run.cancel()
        await run.value
    }
}

/// Collects a provider's reports.
final class Events: Sendable {
    private let list = Mutex<[ProviderEvent]>([])

    func append(_ event: ProviderEvent) { list.withLock { $0.append(event) } }

    var all: [ProviderEvent] { list.withLock { $0 } }

    var fixes: [LocationFix] {
        all.flatMap { event -> [LocationFix] in
            if case .fixes(let fixes) = event { return fixes }
            return []
        }
    }

    var failures: [ServiceError] {
        all.compactMap { event in
            if case .failed(let error) = event { return error }
            return nil
        }
    }

    var ended: Bool { all.contains { if case .ended = $0 { true } else { false } } }
}
