extension GeocoderRows {
    // MARK: geocode-batch

    /// The script's first part, reading the points into tables: plain Lua, which `lua5.4` runs
    /// too, to show the floor the script's own Lua sets.
    static let readingScript = """
        local points = {}
        for line in io.lines(arg[1]) do
          local lat, lon = line:match("^([^,]+),(.+)$")
          points[#points + 1] = { lat = tonumber(lat), lon = tonumber(lon) }
        end

        """

    /// The script's last part: printing `name|country` for each answer in `results`.
    static let printingScript = """
        local out = {}
        for i = 1, #results do
          local p = results[i][1]
          out[i] = p.name .. "|" .. p.country
        end
        io.write(table.concat(out, "\\n"), "\\n")

        """

    /// What a user runs: a Lua script that reads `lat,lon` lines, calls `reverse` once with all
    /// of them and prints `name|country` per point.
    static let batchScript = readingScript + """
        task(function()
          local results, err = services.geocoder:reverse(points)
          if err then error(tostring(err)) end

        """ + printingScript + "end)\n"

    /// The whole job with the search and the bridge taken out: plain Lua making each point's
    /// answer as a one-placemark array of the same fields (11 of the 12 set, as for a place that
    /// is not a section; names from a pool, so no string
    /// is made), then printing as the script does. `lua5.4` runs it, to show what a host that made
    /// its answers at the Lua VM's own table-constructor speed, and searched for free, would reach.
    static let tablesScript = readingScript + """
        local names = {}
        for i = 1, 5000 do names[i] = "Place " .. i end
        local results = {}
        for i = 1, #points do
          local q = points[i]
          local name = names[i % 5000 + 1]
          results[i] = { { name = name, locality = name, admin1 = "Region", admin2 = "District", countryCode = "FR",
                           country = "France", timeZone = "Europe/Paris", lat = q.lat, lon = q.lon, population = 1000,
                           distance = 1234.5 } }
        end

        """ + printingScript

    /// The same job with reverse_geocoder (which names countries by code only).
    static let batchPython = #"""
        import sys
        try:
            import reverse_geocoder as rg
        except ImportError:
            sys.exit(3)
        points = []
        for line in open(sys.argv[1]):
            lat, lon = line.split(",")
            points.append((float(lat), float(lon)))
        out = [place["name"] + "|" + place["cc"] for place in rg.search(points, mode=1, verbose=False)]
        sys.stdout.write("\n".join(out) + "\n")
        """#

    static let batchRounds = 5

    /// Points per second of the work per point: the whole `crescent` process on 100,000 points
    /// minus the same process on one point (so start-up and the data load cancel out), against
    /// the same difference for `lua5.4` running the script with plain tables for answers and no
    /// search (the floor); python3 with reverse_geocoder (`mode=1`) is in the note. Best of 5
    /// runs of each process, run alternately.
    static func batch() throws(BenchFailure) -> BenchRow {
        let row = "geocode-batch"
        let crescent = try StartupBench.crescentPath()
        let folder = try BenchFolder(row: row)
        let (_, text) = randomPoints(count: pointCount)
        try folder.write("points.csv", text, row: row)
        try folder.write("one.csv", "48.856600,2.352200\n", row: row)
        try folder.write("batch.lua", batchScript, row: row)
        try folder.write("batch.py", batchPython, row: row)
        try folder.write("reading.lua", readingScript, row: row)
        try folder.write("tables.lua", tablesScript, row: row)
        let lua = folder.path + "/batch.lua", python = folder.path + "/batch.py", reading = folder.path + "/reading.lua"
        let tables = folder.path + "/tables.lua"
        let plainLua = StartupBench.plainLua
        let points = folder.path + "/points.csv", one = folder.path + "/one.csv"

        var ours = Best(), oursOne = Best(), theirs = Best(), theirsOne = Best(), floor = Best(), floorOne = Best()
        var plainTables = Best(), plainTablesOne = Best()
        for _ in 0..<batchRounds {
            floor.add(try TimedRun.run([plainLua, reading, points], stdoutName: "reading.txt", in: folder, row: row))
            floorOne.add(try TimedRun.run([plainLua, reading, one], stdoutName: "reading.txt", in: folder, row: row))
            plainTables.add(try TimedRun.run([plainLua, tables, points], stdoutName: "tables.txt", in: folder, row: row))
            try checkOutput(folder, "tables.txt", lines: pointCount, row: row)
            plainTablesOne.add(try TimedRun.run([plainLua, tables, one], stdoutName: "tables.txt", in: folder, row: row))
            ours.add(try TimedRun.run([crescent, lua, points], stdoutName: "ours.txt", in: folder, row: row))
            try checkOutput(folder, "ours.txt", lines: pointCount, row: row)
            theirs.add(try runBatchPython(python, points, folder: folder, row: row))
            try checkOutput(folder, "theirs.txt", lines: pointCount, row: row)
            oursOne.add(try TimedRun.run([crescent, lua, one], stdoutName: "ours.txt", in: folder, row: row))
            try checkOutput(folder, "ours.txt", first: ("Paris", "|France"), row: row)
            theirsOne.add(try runBatchPython(python, one, folder: folder, row: row))
            try checkOutput(folder, "theirs.txt", first: ("Paris", "|FR"), row: row)
        }
        guard ours.wall > oursOne.wall, theirs.wall > theirsOne.wall else {
            throw BenchFailure(row: row, reason: "a one-point run took longer than its \(pointCount)-point run "
                + "(ours \(ours.wall) s vs \(oursOne.wall) s, python3 \(theirs.wall) s vs \(theirsOne.wall) s): "
                + "the machine is too busy to subtract the start-up; run it again on a quiet machine")
        }
        let total = Double(pointCount - 1)
        let rate = { (all: Double, single: Double) in total / max(all - single, 1e-6) }
        let peerRate = rate(theirs.wall, theirsOne.wall)
        let cpuRatio = rate(ours.cpu, oursOne.cpu) / rate(plainTables.cpu, plainTablesOne.cpu)
        let peerRatio = rate(ours.wall, oursOne.wall) / peerRate
        let floorRatio = rate(floor.wall, floorOne.wall) / peerRate
        let seconds = { (value: Double) in NumberFormat.fixed(value, digits: 3) + " s" }
        return BenchRow(
            name: row, value: rate(ours.wall, oursOne.wall), baseline: rate(plainTables.wall, plainTablesOne.wall),
            unit: "points/s", goal: .ratioAtLeast(floorGoal),
            note: "a Lua script through crescent reading \(pointCount) 'lat,lon' lines, one reverse call with all of them, "
                + "printing name|country per point, minus the same process on one point (best of \(batchRounds) each, wall: "
                + "\(seconds(ours.wall)) − \(seconds(oursOne.wall))); baseline, the floor: the whole job in plain \(plainLua) with "
                + "no search, each answer a one-placemark array of the same 11 fields made by Lua's table constructor "
                + "(\(seconds(plainTables.wall)) − \(seconds(plainTablesOne.wall))); the goal is a per-point cost within 10% of it; "
                + "by CPU time (user+sys, our search's second thread included) the ratio is " + NumberFormat.fixed(cpuRatio, digits: 2)
                + "; against python3 reverse_geocoder.search(points, mode=1) doing the same (\(seconds(theirs.wall)) − "
                + "\(seconds(theirsOne.wall))) the ratio is " + NumberFormat.fixed(peerRatio, digits: 2) + "; the script's reading "
                + "loop alone in \(plainLua) takes \(seconds(floor.wall)) − \(seconds(floorOne.wall)) ("
                + NumberFormat.fixed(floorRatio, digits: 2) + " of the peer's rate)"
        )
    }

    /// The goal: points per second at least 1/1.1 of the plain-table floor's, a per-point cost
    /// within 10% of what `lua5.4` spends reading, making the same tables and printing.
    static let floorGoal = 0.91

    /// The fastest wall and CPU times seen.
    private struct Best {
        var wall = Double.infinity
        var cpu = Double.infinity

        mutating func add(_ run: TimedRun) {
            wall = min(wall, run.wallSeconds)
            cpu = min(cpu, run.cpuSeconds)
        }
    }

    private static func runBatchPython(_ script: String, _ points: String, folder: BenchFolder, row: String) throws(BenchFailure) -> TimedRun {
        do {
            return try TimedRun.run(["python3", script, points], stdoutName: "theirs.txt", in: folder, row: row)
        } catch {
            guard error.reason.contains("status 3") else { throw error }
            throw BenchFailure(row: row, reason: "the baseline needs PyPI's reverse_geocoder 1.5.1 for python3: "
                + "'make bench' installs it, or run 'python3 -m pip install reverse_geocoder==1.5.1'")
        }
    }

    /// Fails unless `name` holds `lines` 'name|country' lines, or starts with a line with the
    /// prefix and suffix `first` (a Paris of France: each data set names its own district).
    private static func checkOutput(_ folder: BenchFolder, _ name: String, lines: Int? = nil, first: (String, String)? = nil,
                                    row: String) throws(BenchFailure) {
        let text = try folder.read(name, row: row)
        let got = text.split(separator: "\n")
        if let lines, got.count != lines || got.contains(where: { !$0.contains("|") }) {
            throw BenchFailure(row: row, reason: "\(name) holds \(got.count) lines, expected \(lines) 'name|country' lines")
        }
        if let (prefix, suffix) = first, !(got.first.map { $0.hasPrefix(prefix) && $0.hasSuffix(suffix) } ?? false) {
            throw BenchFailure(row: row, reason: "\(name) starts with '\(got.first ?? "")', expected '\(prefix)…\(suffix)'")
        }
    }
}
