import Foundation
import Testing

/// A long GPX track is replayed as it is read: the first fix comes once the first point is
/// read, and memory does not grow with the track.
@Suite struct GPXStreamingTests {
    /// A track of `points` points one second apart, each with an elevation and a time (about
    /// 110 bytes a point).
    static func track(points: Int) -> [UInt8] {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>

            """
        text.reserveCapacity(points * 112)
        for index in 0..<points {
            // From 2024-06-15T09:00:00Z on.
            let seconds = 9 * 3600 + index
            let day = 15 + seconds / 86_400, hour = seconds / 3600 % 24, minute = seconds / 60 % 60, second = seconds % 60
            func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let lat = 48.0 + Double(index % 100_000) / 1_000_000, lon = 2.0 + Double(index / 100_000) / 10
            text += "<trkpt lat=\"\(lat)\" lon=\"\(lon)\"><ele>35.0</ele><time>2024-06-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))Z</time></trkpt>\n"
        }
        return Array((text + "</trkseg></trk></gpx>\n").utf8)
    }

    /// Prints, at the first delivery, how many bytes the process has read so far, and once
    /// `total` fixes have arrived, its peak resident memory (kB); exits with 1 on `didFail`.
    static let script = """
        local total = tonumber(arg[1])
        local function field(file, key)
          for line in io.lines(file) do
            local value = line:match("^" .. key .. ":%s*(%d+)")
            if value then return tonumber(value) end
          end
        end
        local count = 0
        services.location:on("didUpdateLocations", function(locations)
          if count == 0 then print("read at the first fix", field("/proc/self/io", "rchar")) end
          count = count + #locations
          if count >= total then
            print("fixes", count, "peak kB", field("/proc/self/status", "VmHWM"))
            app.exit(0)
          end
        end)
        services.location:on("didFail", function(err) print("failed", err.message) app.exit(1) end)
        services.location:start()
        """

    /// The last number on the line of `output` that starts with `label`.
    static func number(after label: String, in output: String) -> Int? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(label) }) else { return nil }
        return line.split(separator: "\t").last.flatMap { Int($0) }
    }

    @Test func aLongTrackStreamsInBoundedMemory() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("replay.lua", Self.script)
        let large = Self.track(points: 200_000)
        let small = Self.track(points: 2_000)
        try sandbox.write("large.gpx", bytes: large)
        try sandbox.write("small.gpx", bytes: small)

        // At the recorded pace the second fix is a second away: the first comes with only the
        // start of the file read.
        let paced = try await crescent(["--location", "gpx:large.gpx", "replay.lua", "1"], in: sandbox, timeLimit: 60)
        #expect(paced.status == 0, "\(paced)")
        let readFirst = try #require(Self.number(after: "read at the first fix", in: paced.stdout), "\(paced)")
        #expect(readFirst < large.count / 10, "read \(readFirst) bytes of \(large.count) before the first fix")

        // Fast enough that the whole track is replayed: memory stays what a short track takes.
        let whole = try await crescent(["--location", "gpx:large.gpx@1000000x", "replay.lua", "200000"], in: sandbox, timeLimit: 240)
        let short = try await crescent(["--location", "gpx:small.gpx@1000000x", "replay.lua", "2000"], in: sandbox, timeLimit: 60)
        #expect(whole.status == 0 && short.status == 0, "\(whole)\n\(short)")
        let peak = try #require(Self.number(after: "fixes\t200000\t", in: whole.stdout), "\(whole)")
        let shortPeak = try #require(Self.number(after: "fixes\t2000\t", in: short.stdout), "\(short)")
        // Reading the file whole would take its 22 MB and more for its points and fixes.
        #expect(peak - shortPeak < large.count / 1024 / 2, "peak \(peak) kB for 200,000 points, \(shortPeak) kB for 2,000; the file is \(large.count / 1024) kB")
    }

    /// A point with a 3 MiB attribute (past the 1 MiB a tag may take) fails the replay there,
    /// after the point before it, at once and in bounded memory, naming the file and the limit
    /// (attack D7: a 400 MiB attribute held the loop for minutes and grew memory).
    @Test func aHugeAttributeFailsAfterThePointsBeforeIt() async throws {
        let sandbox = try Sandbox()
        let filler = String(repeating: "A", count: 3 << 20)
        try sandbox.write("huge.gpx", """
            <gpx><trk><trkseg><trkpt lat="48.85" lon="2.35"><time>2024-06-15T09:00:00Z</time></trkpt>
            <trkpt lat="48.86" lon="2.35" x="\(filler)"><time>2024-06-15T09:00:01Z</time></trkpt>
            <trkpt lat="48.87" lon="2.35"><time>2024-06-15T09:00:02Z</time></trkpt></trkseg></trk></gpx>
            """)
        try sandbox.write("replay.lua", """
            services.location:on("didUpdateLocations", function(locations)
              for _, fix in ipairs(locations) do print("fix", fix.lat) end
            end)
            services.location:on("didFail", function(err) print("failed", err.code, err.message) app.exit(0) end)
            services.location:start()
            timer.after(20, function() print("no failure") app.exit(1) end)
            """)
        let result = try await crescent(["--location", "gpx:huge.gpx@1000x", "--data-dir", ":memory:", "replay.lua"], in: sandbox, timeLimit: 40)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.first == "fix\t48.85", "\(result)")
        let failure = try #require(lines.first { $0.hasPrefix("failed\t") }, "\(result)")
        #expect(failure.hasPrefix("failed\tinvalid_data\t"), "\(result)")
        #expect(failure.contains("huge.gpx: XML too large to read at line 2"), "names the file: \(result)")
        #expect(failure.contains("within 1048576 bytes"), "names the limit: \(result)")
        #expect(!lines.contains("fix\t48.87"), "nothing after the bad point: \(result)")
        #expect(result.elapsed < 15, "\(result)")
    }
}

