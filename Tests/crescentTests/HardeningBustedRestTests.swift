import Foundation
import Testing

/// What the busted parity attacks (new21 D7, D8, E3-E5) left: an insulate holding an expose, values
/// that are not UTF-8 in assertion messages, a `--filter` whose bytes are not UTF-8, an earlier
/// file's expose code that runs out of time, and test names in the JUnit file.
@Suite struct HardeningBustedRestTests {
    /// `--filter=` (or `--tags=`) with nothing after the `=` took the next word as the pattern:
    /// `crescent test --filter= spec` filtered by "spec" and ran the default folders. A usage
    /// error now names the option.
    @Test func anOptionGivenWithAnEmptyValueIsAUsageError() async throws {
        for option in ["--filter", "--tags"] {
            let (result, _) = try await TestCommandTests.run(["a_spec.lua": "it('works', function() end)"], [option + "=", "spec"])
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("\(option)= gives no value: write \(option)=VALUE, or leave the option out"), "\(result)")
        }
    }

    /// busted keeps what was set up to the end of an expose block inside an insulate block (its
    /// context's pop_state saves the globals again there) and undoes what is set after it, here by
    /// a describe block after the expose. crescent undid nothing in an insulate holding an expose.
    /// Expected lines: busted 2.1.1's TAP for the same file.
    @Test func anInsulateUndoesWhatIsSetAfterItsExpose() async throws {
        let (result, _) = try await TestCommandTests.run(["a_spec.lua": """
            insulate("ins", function()
              _G.BEFORE = 0
              expose("exp", function() _G.EXPOSED = 1 end)
              describe("later", function() _G.LATER = 2; it("sees", function() assert.equals(2, LATER) end) end)
              it("inside", function() assert.equals(1, EXPOSED) end)
            end)
            it("after: exposed kept", function() assert.equals(1, EXPOSED) end)
            it("after: before kept", function() assert.equals(0, BEFORE) end)
            it("after: later undone", function() assert.is_nil(LATER) end)
            """], ["-o", "TAP"])
        let lines = result.stdoutLines.filter { $0.hasPrefix("ok ") || $0.hasPrefix("not ok ") || $0.hasPrefix("1..") }
        #expect(lines == ["ok 1 - ins later sees", "ok 2 - ins inside", "ok 3 - after: exposed kept", "ok 4 - after: before kept",
                          "ok 5 - after: later undone", "1..5"], "\(result)")
    }

    /// Two values that differ only in bytes that are not UTF-8 read differently in the failure
    /// (both were "a\u{FFFD}"), in the lines, TAP and JUnit alike.
    @Test func valuesThatAreNotUTF8StayDistinctInMessages() async throws {
        let (result, sandbox) = try await TestCommandTests.run(["m_spec.lua": """
            it("equals", function() assert.equals("a\\255", "a\\254") end)
            it("same", function() assert.same({ k = "\\255" }, { k = "\\254" }) end)
            """], ["--junit", "report.xml"])
        #expect(result.stdoutLines.last == "0 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("\"a\\xFF\"") && result.stdout.contains("\"a\\xFE\""), "\(result)")
        #expect(result.stdout.contains("\\xFF") && result.stdout.contains("\\xFE"), "\(result)")
        #expect(!result.stdout.contains("\u{FFFD}"), "\(result)")
        let junit = (try? String(contentsOfFile: sandbox.path + "/report.xml", encoding: .utf8)) ?? ""
        #expect(junit.contains("a\\xFF") && !junit.contains("\u{FFFD}"), "\(junit)")
    }

    /// The command line was decoded before the runner saw it: a `--filter` or `--tags` byte that
    /// is not UTF-8 became U+FFFD and matched no test. Run through sh, whose printf gives the byte.
    @Test func aFilterOrTagWhoseBytesAreNotUTF8MatchesTheName() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("spec/f_spec.lua", """
            it("caf\\233 latin-1", function() end)
            it("other", function() end)
            it("tagged #caf\\233", function() end)
            """)
        let script = try sandbox.write("run.sh", """
            #!/bin/sh
            word=$(printf 'caf\\351')
            if [ "$1" = tags ]; then exec "$CRESCENT" test --tags "$word"; fi
            exec "$CRESCENT" test --filter "$word"
            """, executable: true)
        let environment = ["CRESCENT": CrescentProcess.binaryPath]
        let filtered = try await crescent([], executable: script, in: sandbox, environment: environment)
        #expect(filtered.status == 0, "\(filtered)")
        #expect(filtered.stdoutLines.last == "2 passed, 0 failed", "\(filtered)")
        #expect(filtered.stdout.contains("ok      caf\\xE9 latin-1"), "\(filtered)")
        let tagged = try await crescent(["tags"], executable: script, in: sandbox, environment: environment)
        #expect(tagged.status == 0, "\(tagged)")
        #expect(tagged.stdoutLines == ["ok      tagged #caf\\xE9  (spec/f_spec.lua:3)", "1 passed, 0 failed"], "\(tagged)")
    }

    /// An earlier file's expose block that loops stopped each test of the files after it at the
    /// time limit, with nothing saying the time went in that earlier file.
    @Test func anExposeThatLoopsIsNamedInTheLaterFilesFailure() async throws {
        let (result, _) = try await TestCommandTests.run([
            "a_spec.lua": "expose(\"loops\", function() while true do end end)\nit(\"a\", function() end)\n",
            "b_spec.lua": "it(\"b\", function() end)\n",
        ], ["--timeout", "1"], timeLimit: 90)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("the time went in the code and expose blocks of spec/a_spec.lua, run before this file"),
                "\(result)")
    }

    /// A block whose body ran out of memory failed with a bare "not enough memory" (its pcall
    /// keeps only Lua's text): the limit and how to raise it are named, as a run names them.
    @Test func aBlockOutOfMemoryNamesTheLimit() async throws {
        let (result, _) = try await TestCommandTests.run(["a_spec.lua": """
            expose("bomb", function()
              BIG = {}
              while true do BIG[#BIG + 1] = string.rep("x", 1000000) .. #BIG end
            end)
            it("a", function() end)
            """], ["--memory-limit", "64"], timeLimit: 90)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("FAIL    bomb  (spec/a_spec.lua:1)"), "\(result)")
        #expect(result.stdout.contains("not enough memory: the memory limit of 64 MiB was reached (raise it with crescent test "
                                       + "--memory-limit MIB)"), "\(result)")
    }

    /// A name's tab, CR or LF in a JUnit attribute was raw, and a reader turns it into a space.
    @Test func aNamesLineBreakSurvivesTheJUnitFile() async throws {
        let (result, sandbox) = try await TestCommandTests.run(["n_spec.lua": """
            it("two\\nlines", function() end)
            """], ["--junit", "report.xml"])
        #expect(result.status == 0, "\(result)")
        let junit = (try? String(contentsOfFile: sandbox.path + "/report.xml", encoding: .utf8)) ?? ""
        #expect(junit.contains("name=\"two&#10;lines\""), "\(junit)")
    }
}
