import Foundation
import Testing

/// What the newcomer probes of issue 39 left open: errors that named a host file or no line
/// before the script's (P6), and the REPL's `.help` cut at 80 columns on a narrower terminal.
@Suite struct HardeningNewcomerFourthTests {
    /// P6: `fake.location { track = "nope.gpx" }` in a spec said `[crescent fakes]:284:` first;
    /// the spec's own line comes first now, as for the other fakes.
    @Test func aFakeLocationWithAMissingTrackNamesTheSpecsLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/track_spec.lua", """
            describe("track", function()
              it("fakes", function()
                fake.location { track = "nope.gpx" }
              end)
            end)
            """)
        let result = try await crescent(["test", "spec/track_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        let lines = (result.stdoutLines + result.stderrLines).map { $0.trimmingCharacters(in: .whitespaces) }
        let error = lines.first { $0.contains("cannot open nope.gpx") } ?? ""
        #expect(error.hasPrefix("spec/track_spec.lua:3: fake.location: track nope.gpx: cannot open nope.gpx"), "\(result)")
        #expect(!(result.stdout + result.stderr).contains("[crescent fakes]:"), "\(result)")
    }

    /// P6: `app.push("Tick")` typed at the REPL showed only `(4 host frames …)`: `return
    /// app.push(...)` was a tail call, so the typed line's frame was gone. The line comes first.
    @Test func anErrorFromACallTypedAtTheReplNamesTheTypedLine() async throws {
        let sandbox = try Sandbox()
        let repl = try await openRepl(sandbox)
        repl.type("app.push(\"Tick\")\r")
        await repl.waitFor(line: "expected a controller class or instance")
        let line = repl.screen.transcript.first { $0.contains("expected a controller class or instance") } ?? ""
        #expect(line.hasPrefix("error: stdin:1: app.push: expected a controller class or instance, got string"), "\(repl.screen.transcript)")
        #expect(repl.screen.transcript.contains { $0.contains("stdin:1: in main chunk") }, "\(repl.screen.transcript)")
        // An expression still gives all its values, and a call its results.
        repl.type("1, 'two', nil, 4\r")
        // The test's screen draws no tab (the REPL separates values with tabs, as lua5.4 does).
        await repl.waitFor("the four values") { $0.contains("1\"two\"nil4") }
        repl.type("select('#', (function() return 1, 2, 3 end)())\r")
        await repl.waitFor("the count of a call's results") { $0.last(where: { $0 != ">" && !$0.hasPrefix("> ") }) == "3" }
        repl.type("x = 5 -- a comment\r=x\r")
        await repl.waitFor("a comment at the end of a line") { $0.last(where: { $0 != ">" && !$0.hasPrefix("> ") }) == "5" }
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
    }

    /// The REPL's `.help` on a 60-column terminal: wrapped between words at the terminal's width
    /// (it was cut at 80 columns, so the terminal broke lines mid-word), each summary under its
    /// column.
    @Test func theReplsHelpWrapsAtTheTerminalsWidth() async throws {
        let sandbox = try Sandbox()
        let repl = try await openRepl(sandbox, columns: 60)
        repl.type(".help\r")
        await repl.waitFor(line: "Ctrl-L clears the screen.")
        let transcript = repl.screen.transcript
        guard let first = transcript.firstIndex(where: { $0.hasPrefix("Type Lua:") }),
              let last = transcript.firstIndex(where: { $0.hasSuffix("Ctrl-L clears the screen.") }) else {
            Issue.record("no .help: \(transcript)")
            return
        }
        let help = Array(transcript[first...last])
        #expect(help.allSatisfy { $0.count < 60 }, "every line fits, so the terminal breaks none: \(help)")
        let prose = help.joined(separator: " ")
        #expect(prose.contains("Locals last for one chunk; globals stay."), "no word is broken: \(help)")
        #expect(prose.contains("Ctrl-C clears the line or interrupts the running chunk"), "\(help)")
        let services = help.firstIndex { $0.hasPrefix("  .services [NAME]") } ?? 0
        #expect(help[services + 1].hasPrefix(String(repeating: " ", count: 20)) && !help[services + 1].hasPrefix(String(repeating: " ", count: 21)),
                "a summary goes on under its column: \(help)")
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
    }

    /// A REPL on a terminal `columns` wide in `sandbox`, its prompt up.
    private func openRepl(_ sandbox: Sandbox, columns: Int = 80) async throws -> InteractiveTerminal {
        let terminal = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--no-plugins"], directory: sandbox.path,
                                               environment: ["CRESCENT_HISTORY": sandbox.path + "/history"], columns: columns)
        await terminal.waitFor("the first prompt") { $0.last == ">" }
        return terminal
    }
}
