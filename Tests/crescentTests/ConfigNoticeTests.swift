import Testing

/// Config mistakes that can be told without starting a service are reported at start, naming
/// `file:line`; a setting a service refuses fails only that service.
@Suite struct ConfigNoticeTests {
    static let config = """
        [locaton]
        provider = "fixed:1,2"

        [store]
        synchronus = "full"

        [http]
        timeout = "soon"
        """

    @Test func misspeltSectionsAndKeysWarnAndABadSettingFailsOnlyItsService() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("crescent.toml", Self.config)
        let result = try await crescent(["-e", "print(1 + 1, services.geocoder ~= nil)"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "2\ttrue\n", "\(result)")
        let lines = result.stderrLines
        // Newcomer finding 23: the closest name is suggested, as everywhere else.
        #expect(lines.contains { $0.hasPrefix("crescent: warning: crescent.toml:1: unknown section [locaton] (sections: ")
                    && $0.hasSuffix("; did you mean 'location'?)") }, "\(result)")
        #expect(lines.contains("crescent: warning: crescent.toml:5: unknown key 'synchronus' in [store] "
                               + "(keys: path, url, synchronous, poll_interval, write_on_loop, keep_changes; did you mean 'synchronous'?)"),
                "\(result)")
        #expect(lines.contains { $0.hasPrefix("crescent: error: crescent.toml:8: [http] timeout") && $0.hasSuffix("(services.http fails when used)") },
                "\(result)")

        let used = try await crescent(["-e", "services.http:get('http://127.0.0.1:1/', print)"], in: sandbox)
        #expect(used.status == 1, "\(used)")
        #expect(used.stderr.contains("services.http cannot start: invalid_argument: [http] timeout"), "\(used)")
    }

    /// A bad `provider` under [location] is a setting like any other: its line is named. The
    /// same mistake on the command line is named as `--location` says it, without a line.
    @Test func aBadLocationProviderNamesItsLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("crescent.toml", "# where we are\n[location]\nprovider = \"fixd:1,2\"\n")
        let result = try await crescent(["-e", "print(1)"], in: sandbox)
        #expect(result.stderrLines.contains {
            $0.hasPrefix("crescent: error: crescent.toml:3: [location] provider: unknown location provider 'fixd' (use gpsd, nmea:FILE, gpx:FILE or fixed:LAT,LON); did you mean 'fixed:1,2'?")
        }, "\(result)")
        // On the command line it is a usage error (the run does not start), whether or not the
        // script touches location.
        let flag = try await crescent(["--location", "fixd:1,2", "-e", "print(1)"], in: sandbox)
        #expect(flag.status == 2, "\(flag)")
        #expect(flag.stdout.isEmpty, "\(flag)")
        #expect(flag.stderr.contains("--location fixd:1,2: unknown location provider 'fixd' (use gpsd, nmea:FILE, gpx:FILE or fixed:LAT,LON); did you mean 'fixed:1,2'?")
                && !flag.stderr.contains("crescent.toml:3"), "\(flag)")
        let bare = try await crescent(["--location", "48.85,2.35", "-e", "print(1)"], in: sandbox)
        #expect(bare.status == 2 && bare.stderr.contains("did you mean 'fixed:48.85,2.35'?"), "\(bare)")
    }
}
