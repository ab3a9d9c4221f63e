import Foundation
import Testing

/// `crescent test`'s reports and limits against what an attack tried: names that carry newlines
/// (TAP, LCOV), the memory limit's message, millions of timer firings in one clock.advance, and
/// a backtracking --filter.
@Suite struct HardeningTestReportTests {
    /// A name is one field of a line-based record: its newline must not start another.
    @Test func aNewlineInANameCannotForgeTAPOrLCOVRecords() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("lib/a\nSF:INJECTED\nb.lua", "local x = 1\nreturn x\n")
        let (tap, _) = try await TestCommandTests.run(["n_spec.lua": """
            it("fails\\nok 99 - injected pass", function() assert(false) end)
            it("loads", function() assert.equals(1, dofile("lib/a\\nSF:INJECTED\\nb.lua")) end)
            """], ["-o", "TAP", "--coverage"], sandbox: sandbox)
        #expect(tap.status == 1, "\(tap)")
        #expect(tap.stdout.contains("not ok 1 - fails\\010ok 99 - injected pass") && !tap.stdout.contains("\nok 99"), "\(tap)")
        let lcov = try String(contentsOfFile: sandbox.path + "/coverage/lcov.info", encoding: .utf8)
        #expect(lcov.contains("SF:lib/a\\010SF:INJECTED\\010b.lua\n") && !lcov.contains("\nSF:INJECTED"), "\(lcov)")
        let (plain, _) = try await TestCommandTests.run([:], [], sandbox: sandbox)
        #expect(plain.stdout.contains("FAIL    fails\\010ok 99 - injected pass  (spec/n_spec.lua:1)"), "\(plain)")
    }

    @Test func aTestPastTheMemoryLimitNamesIt() async throws {
        let (result, _) = try await TestCommandTests.run(["m_spec.lua": """
            it("table bomb", function() local t = {} for i = 1, 1e9 do t[i] = { i } end end)
            it("passes", function() end)
            """], ["--memory-limit", "50", "--timeout", "60"])  // the memory limit, not the 10 s one under load
        #expect(result.status == 1 && result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("not enough memory: the memory limit of 50 MiB was reached"), "\(result)")
    }

    /// Each firing of a short timer runs too little Lua for the interrupt hook: clock.advance
    /// itself stops at the test's limit.
    @Test func clockAdvanceOverMillionsOfFiringsStopsAtTheLimit() async throws {
        let (result, _) = try await TestCommandTests.run(["w_spec.lua": """
            it("every", function()
              timer.every(1, function() end)
              clock.advance(100000000)
            end)
            it("after ok", function() end)
            """], ["--timeout", "2"], timeLimit: 40)
        #expect(!result.timedOut && result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    every") && result.stdout.contains("time limit of 2 s"), "\(result)")
        #expect(result.elapsed < 20, "\(result)")
    }

    @Test func aBacktrackingFilterIsStoppedAndNamed() async throws {
        let (result, _) = try await TestCommandTests.run(["f_spec.lua": "it(string.rep(\"a\", 5000), function() end)\n"],
                                                         ["--timeout", "2", "--filter", ".-.-.-.-.-.-.-.-.-.-.-.-b"], timeLimit: 40)
        #expect(!result.timedOut && result.status == 1, "\(result)")
        #expect(result.stdout.contains("--filter .-.-.-.-.-.-.-.-.-.-.-.-b is matched against each test's name"), "\(result)")
    }

    /// What a test prints is kept to its first and last half MiB: a test printing 64 MiB fails
    /// with both ends of its output and the run stays small.
    @Test func aTestsPrintedOutputIsKeptToItsEnds() async throws {
        let (result, _) = try await TestCommandTests.run(["p_spec.lua": """
            it("prints a lot then fails", function()
              print("FIRST LINE")
              local chunk = string.rep("p", 1023)
              for _ = 1, 64 * 1024 do print(chunk) end
              print("LAST LINE")
              assert(false)
            end)
            """], [], timeLimit: 60)
        #expect(result.status == 1 && result.stdoutLines.last == "0 passed, 1 failed", "\(result.stdoutLines.last ?? "")")
        #expect(result.stdout.contains("FIRST LINE") && result.stdout.contains("LAST LINE"))
        #expect(result.stdout.contains("bytes of output left out"))
        #expect(result.stdout.utf8.count < 4 << 20, "\(result.stdout.utf8.count) bytes")
    }

    /// A file of old-Mac line breaks (\r alone) has as many lines as Lua counts in it.
    @Test func coverageCountsCROnlyLinesAsLuaDoes() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("lib/cr.lua", "local a = 1\rlocal b = 2\r\rif a == 2 then\r  b = 3\rend\rreturn a + b\r")
        let (result, _) = try await TestCommandTests.run(["c_spec.lua": """
            it("runs", function() assert.equals(3, dofile("lib/cr.lua")) end)
            """], ["--coverage"], sandbox: sandbox)
        #expect(result.status == 0, "\(result)")
        let lcov = try String(contentsOfFile: sandbox.path + "/coverage/lcov.info", encoding: .utf8)
        #expect(lcov.contains("DA:5,0") && lcov.contains("DA:7,1"), "\(lcov)")
    }

    /// A test's name cannot turn its failure into a TAP to-do or skip: a `#` that would start a
    /// directive is written `\#`, while tags (`#fast`) stay as busted writes them (busted2 N11).
    @Test func aNameCannotBecomeATAPDirective() async throws {
        let (result, _) = try await TestCommandTests.run(["t_spec.lua": """
            it("fails # TODO later", function() assert(false) end)
            it("fails #skip it", function() assert(false) end)
            it("tagged #fast", function() end)
            """], ["-o", "TAP"])
        let lines = result.stdoutLines.filter { $0.hasPrefix("ok ") || $0.hasPrefix("not ok ") || $0.hasPrefix("1..") }
        #expect(lines == ["not ok 1 - fails \\# TODO later", "not ok 2 - fails \\#skip it", "ok 3 - tagged #fast", "1..3"],
                "\(result)")
        #expect(result.status == 1, "\(result)")
    }
}

