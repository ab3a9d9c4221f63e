import Foundation
import Testing

/// `crescent test --coverage`: the lines of the Lua files the tests ran, counted as luacov counts
/// them. Tests/Fixtures/coverage/luacov.report.expected is what luacov 0.15 wrote for the same
/// spec run under busted 2.1.1 on lua5.4 (`busted --coverage spec; luacov`, with `.luacov`
/// including only shapes.lua).
@Suite struct TestCoverageTests {
    static let fixture = CrescentProcess.packageRoot.appendingPathComponent("Tests/Fixtures/coverage")

    /// A copy of the fixture (the run writes its reports beside it).
    static func sandbox() throws -> Sandbox {
        let sandbox = try Sandbox()
        for name in ["shapes.lua", "spec/shapes_spec.lua"] {
            try sandbox.write(name, String(contentsOf: fixture.appendingPathComponent(name), encoding: .utf8))
        }
        return sandbox
    }

    @Test func theReportCountsTheLinesLuacovCounts() async throws {
        let sandbox = try Self.sandbox()
        let result = try await crescent(["test", "--coverage"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.last == "3 passed, 0 failed", "\(result)")
        #expect(result.stdout.contains("shapes.lua 17   4      80.95%") && result.stdout.contains("Total      17   4      80.95%"),
                "\(result)")
        let ours = try String(contentsOfFile: sandbox.path + "/luacov.report.out", encoding: .utf8)
        #expect(!ours.contains("shapes_spec.lua"), "the specs are not measured: \(ours)")
        let luacov = try String(contentsOf: Self.fixture.appendingPathComponent("luacov.report.expected"), encoding: .utf8)
        // A spec file's tests share its one Lua state, as under busted: the counts are luacov's.
        #expect(ours == luacov, "\(ours)")
        #expect(ours.contains(" 1 local shapes = {}"), "\(ours)")
    }

    @Test func theLcovFileIsOneGenhtmlReads() async throws {
        let sandbox = try Self.sandbox()
        let result = try await crescent(["test", "--coverage"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let lcov = try String(contentsOfFile: sandbox.path + "/coverage/lcov.info", encoding: .utf8)
        #expect(lcov.hasPrefix("TN:\nSF:shapes.lua\n") && lcov.contains("DA:32,0\n") && lcov.contains("LF:21\nLH:17\nend_of_record"), "\(lcov)")
        let genhtml = try await crescent(["coverage/lcov.info", "--output-directory", "html"], executable: "/usr/bin/genhtml",
                                         in: sandbox, timeLimit: 60)
        #expect(genhtml.status == 0, "\(genhtml)")
        #expect(genhtml.stdout.contains("lines......: 81.0% (17 of 21 lines)"), "\(genhtml)")
        #expect(FileManager.default.fileExists(atPath: sandbox.path + "/html/index.html"))
    }

    /// A project plugin's Lua runs in a VM of its own: its lines are counted too.
    @Test func theProjectsPluginsAreCounted() async throws {
        let sandbox = try Sandbox()
        try HardeningTestRunnerTests.writeLuaPlugin("greeter", in: sandbox, main: """
            local s = service("greeter", "Greets.")
            s:method("hi", {}, "string", "Says hi.", function()
              return "hi"
            end)
            s:method("bye", {}, "string", "Says bye.", function()
              return "bye"
            end)
            """)
        try sandbox.write("spec/greeter_spec.lua", """
            it("says hi", function() assert.equals("hi", services.greeter:hi()) end)
            """)
        let result = try await crescent(["test", "--coverage"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("plugins/greeter/main.lua 4    1      80.00%"), "\(result)")
        let lcov = try String(contentsOfFile: sandbox.path + "/coverage/lcov.info", encoding: .utf8)
        // hi's body ran, bye's did not; the two `end)` lines are not counted.
        #expect(lcov.hasPrefix("TN:\nSF:plugins/greeter/main.lua\nDA:1,1\n") && lcov.contains("DA:3,1\n")
                && lcov.contains("DA:6,0\nLF:5\nLH:4\nend_of_record"), "\(lcov)")
    }

    /// The report is made in a time linear in the lines and cheap: a file of 400,000 lines adds
    /// well under 3 s (a debug build took 5 s more for 200,000 lines, 17 us a line, before the
    /// scanner's verdicts were kept by line; now 0.7 s).
    @Test func theReportOfALargeFileIsCheap() async throws {
        let sandbox = try Sandbox()
        let lines = 400_000
        try sandbox.write("lib/big.lua", "local n = 0\n" + String(repeating: "n = n + 1\n", count: lines) + "return n\n")
        try sandbox.write("spec/big_spec.lua", "it(\"runs\", function() assert.equals(\(lines), dofile(\"lib/big.lua\")) end)\n")
        // Best of two each, against the same run without coverage.
        var plain = Double.infinity, measured = Double.infinity
        for _ in 0..<2 {
            let without = try await crescent(["test"], in: sandbox, timeLimit: 120)
            #expect(without.status == 0, "\(without)")
            plain = min(plain, without.elapsed)
            let with = try await crescent(["test", "--coverage"], in: sandbox, timeLimit: 120)
            #expect(with.status == 0 && with.stdout.contains("Total       \(lines + 2) 0      100.00%"), "\(with)")
            measured = min(measured, with.elapsed)
        }
        #expect(measured < plain * 2 + 3, "with --coverage \(measured) s, without \(plain) s")
        let lcov = try String(contentsOfFile: sandbox.path + "/coverage/lcov.info", encoding: .utf8)
        #expect(lcov.hasSuffix("DA:\(lines + 2),1\nLF:\(lines + 2)\nLH:\(lines + 2)\nend_of_record\n"), "\(lcov.suffix(200))")
    }

    /// Without --coverage no hook is set and nothing is written.
    @Test func withoutTheFlagNothingIsMeasured() async throws {
        let sandbox = try Self.sandbox()
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/luacov.report.out"))
        #expect(!result.stdout.contains("Coverage"), "\(result)")
    }
}
