import Model
import Services

extension GeocoderRows {
    // MARK: geocode-agreement

    /// reverse_geocoder's answer (name and position) for each point, in order.
    static let agreementPython = #"""
        import sys
        try:
            import reverse_geocoder as rg
        except ImportError:
            sys.exit(3)
        points = [tuple(float(x) for x in line.split(",")) for line in open(sys.argv[1]) if line.strip()]
        with open(sys.argv[2], "w") as out:
            for place in rg.search(points, mode=1, verbose=False):
                out.write(place["lat"] + "," + place["lon"] + "," + place["name"].replace("\n", " ") + "\n")
        """#

    /// How often the shipped data answers a place farther than reverse_geocoder 1.5.1's, on
    /// 100,000 random points uniform over the sphere: a point counts when our nearest place is
    /// more than a metre farther (great circle) than reverse_geocoder's answer and neither its name
    /// nor its locality is reverse_geocoder's (names folded to ASCII, lower case). Goal: at most 1%.
    static func agreement() throws(BenchFailure) -> BenchRow {
        let row = "geocode-agreement"
        let database = try load(row: row)
        let folder = try BenchFolder(row: row)
        let (points, text) = randomPoints(count: pointCount)
        try folder.write("points.csv", text, row: row)
        try folder.write("baseline.py", agreementPython, row: row)
        let status = try folder.runBaseline(["points.csv", "answers.txt"], row: row)
        if status == 3 {
            throw BenchFailure(row: row, reason: "the baseline needs PyPI's reverse_geocoder 1.5.1 for python3: "
                + "'make bench' installs it, or run 'python3 -m pip install reverse_geocoder==1.5.1'")
        }
        guard status == 0 else { throw BenchFailure(row: row, reason: "the python3 baseline failed with status \(status)") }
        let answers = try folder.read("answers.txt", row: row).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        guard answers.count == points.count else {
            throw BenchFailure(row: row, reason: "python3 answered \(answers.count) points of \(points.count)")
        }
        let data = database.data
        let rows = database.index.nearestRows(points)
        var farther: [Double] = []
        var sameName = 0
        for (position, point) in points.enumerated() {
            let parts = answers[position].split(separator: ",", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { throw BenchFailure(row: row, reason: "python3 wrote '\(answers[position])'") }
            let theirs = GeoPoint(latitude: Double(e5(parts[0])) / 100_000, longitude: Double(e5(parts[1])) / 100_000)
            let theirName = TextFolding.fold(String(parts[2]))
            let ours = rows[position]
            let names = [TextFolding.fold(data.name(ours)), TextFolding.fold(data.name(data.localityRow(ours)))]
            if names.contains(theirName) {
                sameName += 1
                continue
            }
            let extra = point.distance(to: data.point(ours)) - point.distance(to: theirs)
            if extra > 1 { farther.append(extra) }
        }
        let percent = 100 * Double(farther.count) / Double(points.count)
        let median = farther.isEmpty ? 0 : Statistics.median(farther) / 1000
        return BenchRow(
            name: row, value: percent, baseline: 1, unit: "%", goal: .valueAtMost(1),
            note: "\(points.count) random points uniform over the sphere; the shipped data (\(data.count) places) against "
                + "reverse_geocoder 1.5.1's search(points, mode=1) on its 2016 data: \(farther.count) points answered with a place "
                + "farther than its answer and of another name (median \(NumberFormat.fixed(median, digits: 1)) km farther); "
                + "\(sameName) answers name the same place or its city (names folded to ASCII); baseline: the 1% allowed"
        )
    }
}
