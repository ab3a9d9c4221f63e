import Foundation
import Testing

/// luassert's corners and busted's ways of reporting that a parity attack (busted2) found crescent
/// test differing on: call counts in `called_with`, what `assert.error` returns, wrong arguments
/// to a matcher as failures, the `array` modifier, `finally` outside a test's body, errors in
/// JUnit, a file that fails to load, and a report or message that could harm what reads it.
@Suite struct HardeningBustedCornersTests {
    /// Each outcome is busted 2.1.1's for the same file (`lua5.4 /usr/bin/busted -o json`).
    @Test func luassertCornersGiveBustedsOutcomes() async throws {
        let (result, _) = try await TestCommandTests.run(["c_spec.lua": """
            describe("spies", function()
              it("extra nil", function() local s = spy.new(function() end); s(1, nil); assert.spy(s).was.called_with(1) end)
              it("same count", function() local s = spy.new(function() end); s(1, nil); assert.spy(s).was.called_with(1, nil) end)
              it("returned extra nil", function() local s = spy.new(function() return 1, nil end); s(); assert.spy(s).returned_with(1) end)
            end)
            describe("returns", function()
              it("has_error", function()
                local err, expected = assert.has_error(function() error("boom", 0) end, "boom")
                assert.equals("boom", err); assert.equals("boom", expected)
              end)
              it("table error", function() local e = assert.has_error(function() error({ code = 7 }) end); assert.equals(7, e.code) end)
              it("captures", function()
                local a, b = assert.error_matches(function() error("k=v", 0) end, "(%w)=(%w)")
                assert.equals("k", a); assert.equals("v", b)
              end)
            end)
            describe("bad arguments fail", function()
              it("none_of", function() local s = spy.new(function() end); s(1); assert.spy(s).was.called_with(match.none_of("x")) end)
              it("near", function() local s = spy.new(function() end); s(1); assert.spy(s).was.called_with(match.near("a", 0)) end)
              it("matches", function() assert.matches({}, "x") end)
              it("has_error", function() assert.has_error("x") end)
              it("stub", function() stub(5) end)
            end)
            describe("arrays", function()
              it("holes", function() assert.equals(2, assert.array({ 1, nil, 3 }).has.holes()) end)
              it("no holes", function() assert.array({ 1, 2, 3 }).has.no.holes() end)
              it("hole found", function() assert.array({ 1, nil, 3 }).has.no.holes() end)
            end)
            describe("finally", function()
              before_each(function() finally(function() end) end)
              it("x", function() end)
            end)
            describe("more", function()
              it("no_error_matches returns", function()
                assert.same({ "error", "string" }, { assert.no_error_matches(function() error("error", 0) end, "string") })
                assert.same({ nil, "string" }, { assert.no_error_matches(function() end, "string") })
              end)
              it("error_matches needs a pattern", function() assert.error_matches(error) end)
              it("all_of needs a matcher", function() match.all_of() end)
              it("error tostring", function()
                assert.same({ "err", "err" }, { assert.has_error(function() error(setmetatable({}, { __tostring = function() return "err" end })) end, "err") })
              end)
            end)
            """], ["-o", "json"])
        let report = try #require(try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        func names(_ kind: String) -> [String] {
            ((report[kind] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
        }
        #expect(names("successes") == ["spies same count", "returns has_error", "returns table error", "returns captures",
                                        "arrays holes", "arrays no holes", "more no_error_matches returns",
                                        "more error tostring"], "\(result)")
        #expect(names("failures") == ["spies extra nil", "spies returned extra nil", "bad arguments fail none_of",
                                       "bad arguments fail near", "bad arguments fail matches", "bad arguments fail has_error",
                                       "bad arguments fail stub", "arrays hole found", "more error_matches needs a pattern",
                                       "more all_of needs a matcher"], "\(result)")
        #expect(names("errors") == ["finally before_each"], "\(result)")
        #expect(result.stdout.contains("finally: call it in the test's own body, not in a hook"), "\(result)")
        #expect(result.stdout.contains("expected the array to have no holes, but one is at position 2"), "\(result)")
    }

    /// A count assertion without its count passed (luassert raises comparing nil with a number):
    /// here it fails naming the count it needs.
    @Test func aCountAssertionNeedsItsCount() async throws {
        let (result, _) = try await TestCommandTests.run(["n_spec.lua": """
            it("at least", function() local s = spy.new(function() end); s(); assert.spy(s).was.called.at_least() end)
            it("half", function() local s = spy.new(function() end); s(); assert.spy(s).was.called_at_most(1.5) end)
            it("called", function() local s = spy.new(function() end); s(); assert.spy(s).was.called() end)
            """])
        #expect(result.stdoutLines.last == "1 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("bad argument #1 to 'called_at_least' (a count expected, got nil)"), "\(result)")
        #expect(result.stdout.contains("bad argument #1 to 'called_at_most' (a whole count expected, got 1.5)"), "\(result)")
    }

    /// JUnit readers count errors apart from failures, as busted writes them; a file that does not
    /// load is an error (busted: "suite FILE"), not a failure.
    @Test func errorsAreErrorsInJUnitAndALoadFailureIsOne() async throws {
        let (result, sandbox) = try await TestCommandTests.run([
            "a_spec.lua": """
                it("fails", function() assert.equals(1, 2) end)
                it("errs", function() local t = nil; return t.x end)
                """,
            "b_spec.lua": "it(\"broken\", function() end\n end end",
        ], ["--junit", "junit.xml", "-o", "json"])
        #expect(result.status == 1, "\(result)")
        let xml = try String(contentsOfFile: sandbox.path + "/junit.xml", encoding: .utf8)
        #expect(xml.contains("<testsuites name=\"crescent test\" tests=\"3\" failures=\"1\" errors=\"2\""), "\(xml)")
        #expect(xml.contains("<testsuite name=\"spec/a_spec.lua\" tests=\"2\" failures=\"1\" errors=\"1\""), "\(xml)")
        #expect(xml.contains("<error message=\"spec/a_spec.lua:2: attempt to index a nil value (local &apos;t&apos;)\""), "\(xml)")
        let report = try #require(try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        let errors = ((report["errors"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
        #expect(errors == ["errs", "(loading the file)"], "\(result)")
    }

    /// `--junit .busted` when there is no `.busted` yet wrote the XML there, and every later run
    /// stopped on it; `coverage = "yes"` in `.busted` was ignored without a word.
    @Test func aReportCannotBecomeTheSettingsFileAndASettingOfTheWrongKindIsSaid() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/a_spec.lua", "it(\"a\", function() end)")
        for target in [".busted", "crescent.toml", "sub/.busted"] {
            let result = try await crescent(["test", "--junit", target], in: sandbox)
            #expect(result.status == 1 && result.stderr.contains("is the name of the settings file later runs read"), "\(target): \(result)")
            #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/" + target), "\(target)")
        }
        try sandbox.write(".busted", "return { default = { coverage = \"yes\" } }")
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains(".busted: default.coverage must be true or false, got the string \"yes\""), "\(result)")
    }

    /// A failure's message holds data (a file's name, what a script raised): its control
    /// characters are escaped in the plain and TAP reports, so it cannot clear the terminal.
    @Test func aMessageCannotDriveTheTerminal() async throws {
        let specs = ["e_spec.lua": "it(\"e\", function() error(\"\\27[2J\\27]0;owned\\7 gone\\tstill\", 0) end)"]
        for format in ["plain", "TAP"] {
            let (result, _) = try await TestCommandTests.run(specs, format == "plain" ? [] : ["-o", format])
            #expect(result.status == 1, "\(result)")
            #expect(!result.stdout.contains("\u{1B}") && !result.stdout.contains("\u{07}"), "\(format): \(result)")
            #expect(result.stdout.contains("\\027[2J\\027]0;owned\\007 gone\tstill"), "\(format): \(result)")
        }
    }

    /// A spec file or a test whose name is not UTF-8 (Linux and busted allow any bytes): the file
    /// was reopened through a lossy U+FFFD name and never ran, and the whole test name became "?".
    @Test func namesThatAreNotUTF8AreKept() async throws {
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(atPath: sandbox.path + "/spec", withIntermediateDirectories: true)
        let name = Array((sandbox.path + "/spec/c").utf8) + [0xFF] + Array("_spec.lua".utf8)
        let source = Array("it(\"bad \\255\\254 here\", function() end)\n".utf8)
        let descriptor = (name.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
            open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        }
        #expect(descriptor >= 0)
        #expect(source.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) } == source.count)
        close(descriptor)
        let result = try await crescent(["test", "-o", "TAP"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["ok 1 - bad \\xFF\\xFE here", "1..1"], "\(result)")
        let plain = try await crescent(["test"], in: sandbox)
        #expect(plain.stdout.contains("ok      bad \\xFF\\xFE here  (spec/c\\xFF_spec.lua:1)"), "\(plain)")
    }

    /// busted's expose: a file with an expose block at its top level is not insulated from the
    /// files after it (its helpers, modules and even its file-level globals reach them), and an
    /// expose inside an insulate keeps what that insulate set. Each test having a host of its
    /// own, crescent had no later file see anything. Expected lines: busted 2.1.1's TAP.
    @Test func exposeReachesTheFilesAfterIt() async throws {
        let (result, _) = try await TestCommandTests.run([
            "a_spec.lua": """
                _G.leak = "file level"
                expose("exported", function()
                  _G.helper = function() return 42 end
                  package.loaded["shared.mod"] = { answer = 42 }
                  it("a sees its helper", function() assert.equals(42, helper()) end)
                end)
                insulate("outer", function()
                  _G.inner = 1
                  expose("inside", function() _G.through = 2 end)
                  it("sees inner", function() assert.equals(1, inner) end)
                end)
                it("after the insulate", function() assert.is_nil(inner); assert.equals(2, through) end)
                """,
            "b_spec.lua": """
                it("b sees the exposed helper", function() assert.equals(42, helper()) end)
                it("b sees the exposed module", function() assert.equals(42, require("shared.mod").answer) end)
                it("b does not see file-level globals", function() assert.is_nil(leak) end)
                it("b sees what an expose inside an insulate set", function() assert.equals(2, through) end)
                """,
        ], ["-o", "TAP"])
        let lines = result.stdoutLines.filter { $0.hasPrefix("ok ") || $0.hasPrefix("not ok ") || $0.hasPrefix("1..") }
        #expect(lines == ["ok 1 - exported a sees its helper", "ok 2 - outer sees inner", "not ok 3 - after the insulate",
                          "ok 4 - b sees the exposed helper", "ok 5 - b sees the exposed module",
                          "not ok 6 - b does not see file-level globals", "not ok 7 - b sees what an expose inside an insulate set",
                          "1..7"], "\(result)")
    }
}
