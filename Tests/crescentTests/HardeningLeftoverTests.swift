import Foundation
import Testing

/// What the last attack left of issues 32 and 36 in the test runner: a finalizer that fails as a
/// spec file's host closes, and a `.busted` file's pattern named as the command line's.
@Suite struct HardeningLeftoverTests {
    /// A `__gc` that loops when the host closes was stopped at the close's own 2 s limit and the
    /// run passed; one that raised an error passed unseen too. A spec file runs in one Lua state
    /// (as under busted), so its finalizers run when Lua collects or when the file's state closes,
    /// and a failure then fails the file (one entry, "(closing a host of the file)"), naming the
    /// function, and the run exits 1; the tests' own results stand.
    @Test func aFinalizerThatFailsAsTheHostClosesFailsItsTest() async throws {
        let (result, _) = try await TestCommandTests.run(["close_spec.lua": """
            it("passes first", function() end)
            it("loops at close", function() local keep = setmetatable({}, { __gc = function() while true do end end }) end)
            it("errors at close", function()
              local keep = setmetatable({}, { __gc = function() error("boom in gc") end })
            end)
            it("fails and errors at close", function()
              local keep = setmetatable({}, { __gc = function() error("again") end })
              assert.equals(1, 2)
            end)
            it("passes after", function() end)
            """], timeLimit: 60)
        #expect(!result.timedOut, "\(result)")
        #expect(result.status == 1 && result.stdoutLines.last == "4 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    (closing a host of the file)  (spec/close_spec.lua)"), "\(result)")
        #expect(result.stdout.contains("a finalizer failed when the spec file's host closed (and 2 more): "), "\(result)")
        #expect(result.stdout.contains("again (in the __gc function defined at spec/close_spec.lua:7)"), "\(result)")
        #expect(result.stdout.contains("FAIL    fails and errors at close"), "\(result)")
        #expect(result.stdout.contains("expected the values to be equal"), "\(result)")
        #expect(result.stdout.contains("ok      passes first") && result.stdout.contains("ok      passes after"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// A `.busted` file's `filter` or tag that is not a Lua pattern was refused as `--filter [`,
    /// an option the user never gave (or, for a tag, failed every file as it was read). The
    /// message names the file and the key; a bad `--tags` on the command line names `--tags`.
    @Test func aBadPatternInABustedFileIsNamedThere() async throws {
        let spec = ["some_spec.lua": #"describe("store", function() it("adds #fast", function() end) end)"#]
        let sandbox = try Sandbox()
        try sandbox.write(".busted", #"return { default = { filter = "[" } }"#)
        let (filter, _) = try await TestCommandTests.run(spec, sandbox: sandbox)
        #expect(filter.status == 2, "\(filter)")
        #expect(filter.stderr.contains(#".busted: default.filter "[" is not a valid Lua pattern (malformed pattern (missing ']'))"#),
                "\(filter)")
        #expect(filter.stderr.contains(#"as in filter = "%[""#) && !filter.stderr.contains("--filter ["), "\(filter)")

        try sandbox.write(".busted", #"return { default = { ["exclude-tags"] = "slow,(" } }"#)
        let (tag, _) = try await TestCommandTests.run(spec, sandbox: sandbox)
        #expect(tag.status == 2 && tag.stderr.contains(#".busted: default.exclude-tags "(" is not a valid tag"#), "\(tag)")

        try sandbox.write(".busted", #"return { default = { tags = "fast" } }"#)
        let (given, _) = try await TestCommandTests.run(spec, ["--tags", "["], sandbox: sandbox)
        #expect(given.status == 2 && given.stderr.contains("--tags [: not a valid tag"), "\(given)")
        let (fine, _) = try await TestCommandTests.run(spec, sandbox: sandbox)
        #expect(fine.status == 0 && fine.stdoutLines.last == "1 passed, 0 failed", "\(fine)")
    }
}
