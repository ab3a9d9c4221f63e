import Foundation
@testable import Services
import Testing

/// The NMEA parser against gpsd's own regression captures (`test/daemon/*.log` of gpsd's source,
/// with the reports gpsd made of each in `*.log.chk`): the 105 text captures kept in
/// `Tests/data/gpsd-captures` (BSD-2-Clause, see its README), or the folder `NMEA_CAPTURES`
/// names (gpsd's whole `test/daemon`). Positions are compared to the microdegree: the share of
/// gpsd's positions the parser finds, and the share of the parser's that gpsd never reported.
@Suite struct NMEACaptureTests {
    struct Position: Hashable {
        let lat: Int64
        let lon: Int64
        init(_ lat: Double, _ lon: Double) {
            self.lat = Int64((lat * 1e6).rounded())
            self.lon = Int64((lon * 1e6).rounded())
        }
    }

    /// The captures kept with the tests.
    static let keptCaptures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("data/gpsd-captures").path

    @Test func theParserFindsWhatGpsdFinds() throws {
        let folder = ProcessInfo.processInfo.environment["NMEA_CAPTURES"] ?? Self.keptCaptures
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".log") }.sorted()
        try #require(names.count >= 100 || ProcessInfo.processInfo.environment["NMEA_CAPTURES"] != nil, "captures in \(folder): \(names.count)")
        var (expected, found, ours, extra) = (0, 0, 0, 0)
        for name in names {
            guard let log = FileManager.default.contents(atPath: "\(folder)/\(name)"),
                  let check = FileManager.default.contents(atPath: "\(folder)/\(name).chk") else { continue }
            let lines = String(decoding: log, as: UTF8.self).split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") }
            // Text captures only: the binary protocols' reports are not the NMEA parser's to find.
            guard !lines.isEmpty, log.allSatisfy({ $0 < 0x80 }),
                  Double(lines.filter { $0.hasPrefix("$") }.count) >= 0.8 * Double(lines.count) else { continue }
            var gpsd = Set<Position>()
            for line in String(decoding: check, as: UTF8.self).split(whereSeparator: \.isNewline) where line.hasPrefix("{\"class\":\"TPV\"") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let lat = object["lat"] as? Double, let lon = object["lon"] as? Double else { continue }
                gpsd.insert(Position(lat, lon))
            }
            var parser = NMEAParser(today: 0)
            var mine = Set<Position>()
            for line in lines { for fix in parser.feed(String(line)) { mine.insert(Position(fix.latitude, fix.longitude)) } }
            for fix in parser.finish() { mine.insert(Position(fix.latitude, fix.longitude)) }
            let missed = gpsd.subtracting(mine), surplus = mine.subtracting(gpsd)
            if !missed.isEmpty || !surplus.isEmpty {
                print("\(name): gpsd \(gpsd.count), ours \(mine.count), missed \(missed.count), not gpsd's \(surplus.count)")
            }
            expected += gpsd.count
            found += gpsd.count - missed.count
            ours += mine.count
            extra += surplus.count
        }
        let foundShare = Double(found) / Double(max(expected, 1)), extraShare = Double(extra) / Double(max(ours, 1))
        print("found \(found) of \(expected) (\(foundShare * 100)%); \(extra) of our \(ours) not gpsd's (\(extraShare * 100)%)")
        #expect(foundShare >= 0.98)
        #expect(extraShare <= 0.01)
    }
}
