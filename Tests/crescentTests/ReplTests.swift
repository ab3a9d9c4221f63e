import Foundation
import Testing

/// The REPL (issue 5) end to end: `crescent` on a pseudo-terminal, typed at like a person, with the
/// screen read back through a small terminal emulator.
@Suite struct ReplTests {
    /// A REPL in a fresh sandbox with its own history file.
    private func open(_ sandbox: Sandbox, arguments: [String] = [], columns: Int = 80) async throws -> InteractiveTerminal {
        let terminal = try InteractiveTerminal(arguments + ["--data-dir", sandbox.path + "/data"], directory: sandbox.path,
                                               environment: ["CRESCENT_HISTORY": sandbox.path + "/history"],
                                               columns: columns)
        await terminal.waitFor(line: ".help for help")
        await terminal.waitFor("the first prompt") { $0.last == ">" }
        return terminal
    }

    /// The last line of the screen: where the prompt is.
    private func promptLine(_ terminal: InteractiveTerminal) -> String {
        terminal.screen.transcript.last ?? ""
    }

    @Test func expressionsPrintTheirValuesAndStatementsRun() async throws {
        let sandbox = try Sandbox()
        let repl = try await open(sandbox)
        repl.type("1 + 2\r")
        await repl.waitFor(line: "3")
        repl.type("t = { name = \"x\", list = { 1, 2 } }\r")
        repl.type("t\r")
        await repl.waitFor(line: "{ list = { 1, 2 }, name = \"x\" }")
        repl.type("=t.name\r")
        await repl.waitFor(line: "\"x\"")
        repl.type("return 1, \"two\", nil\r")
        await repl.waitFor("two values, the trailing nil left out") { lines in
            lines.contains { $0.hasPrefix("1") && $0.hasSuffix("\"two\"") }
        }
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
        // A statement prints nothing: the line after `t = ...` is the next prompt.
        let lines = repl.screen.transcript
        let assignment = try #require(lines.firstIndex(of: "> t = { name = \"x\", list = { 1, 2 } }"))
        #expect(lines[assignment + 1] == "> t")
    }

    /// A record a service answers (a placemark) shows its fields as a table does, folded at the
    /// terminal's width between fields, never inside a number.
    @Test func recordsFoldAtTheTerminalWidthBetweenFields() async throws {
        let sandbox = try Sandbox()
        let repl = try await open(sandbox, columns: 50)
        repl.type("services.geocoder:reverse({ lat = 48.8566, lon = 2.3522 })[1]\r")
        await repl.waitFor(line: "placemark {")
        await repl.waitFor(line: "}")
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
        let lines = repl.screen.transcript
        let start = try #require(lines.firstIndex(of: "placemark {"))
        let body = lines[(start + 1)...].prefix { $0 != "}" }
        #expect(body.contains { $0.hasPrefix("  countryCode = \"FR\"") }, "\(lines)")
        #expect(body.contains { $0.hasPrefix("  lat = 48.") }, "\(lines)")
        #expect(body.allSatisfy { $0.count <= 50 }, "\(lines)")
    }

    @Test func timerOutputPrintsAboveTheLineBeingTyped() async throws {
        let sandbox = try Sandbox()
        let repl = try await open(sandbox)
        repl.type("n = 0; ticker = timer.every(0.05, function() n = n + 1; print(\"tick \" .. n) end)\r")
        await repl.waitFor(line: "tick 3")
        let typed = "print(\"typed while the timer ticks\")"
        for character in typed {
            repl.type(String(character))
            try await Task.sleep(for: .milliseconds(15))
        }
        // Ticks keep arriving while the line sits there half-way through being edited.
        let ticksBefore = repl.screen.transcript.filter { $0.hasPrefix("tick ") }.count
        await repl.waitFor("more ticks while the line waits") { lines in
            lines.filter { $0.hasPrefix("tick ") }.count >= ticksBefore + 5
        }
        let screen = repl.screen.transcript
        #expect(promptLine(repl) == "> " + typed, "the half-typed line is intact below the output")
        let tickLines = screen.filter { $0.hasPrefix("tick") || $0.contains("typed while") }
        #expect(tickLines.allSatisfy { $0.wholeMatch(of: /tick \d+/) != nil || $0 == "> " + typed },
                "output and line never mix: \(tickLines)")
        #expect(screen.contains("tick 1") && screen.contains("tick 3"))
        repl.type("\r")
        await repl.waitFor(line: "typed while the timer ticks")
        repl.type("ticker:cancel()\r.exit\r")
        #expect(await repl.finish() == 0)
        let final = repl.screen.transcript
        #expect(final.contains("> " + typed) && final.contains("typed while the timer ticks"))
    }

    @Test func anUnfinishedChunkContinuesOnTheContinuationPrompt() async throws {
        let sandbox = try Sandbox()
        let repl = try await open(sandbox)
        repl.type("function double(x)\r")
        await repl.waitFor("the continuation prompt") { $0.last == ".." }
        repl.type("return x * 2\r")
        repl.type("end\r")
        repl.type("double(21)\r")
        await repl.waitFor(line: "42")
        repl.type("s = [[one\r")
        await repl.waitFor("a continued long string") { $0.last == ".." }
        repl.type("two]]\r#s\r")
        await repl.waitFor(line: "7")
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
        let lines = repl.screen.transcript
        #expect(lines.contains(".. return x * 2") && lines.contains(".. end"))
        // A real syntax error is reported at once, not continued.
        #expect(!lines.contains { $0.contains("error") })
    }

    @Test func tabCompletesGlobalsFieldsMethodsAndEventsWithoutRunningCode() async throws {
        let sandbox = try Sandbox()
        let repl = try await open(sandbox)
        repl.type("calls = 0; trap = setmetatable({}, { __index = function() calls = calls + 1 end })\r")
        repl.type("proto = setmetatable({}, { __index = { alpha = 1, beta = function() end } })\r")
        repl.type("services.geo\t")
        await repl.waitFor("services.geocoder completed") { $0.last == "> services.geocoder" }
        repl.type(":rev\t")
        await repl.waitFor("a method completed") { $0.last == "> services.geocoder:reverse" }
        repl.type("\u{15}proto.al\t")
        await repl.waitFor("a field through __index completed") { $0.last == "> proto.alpha" }
        repl.type("\u{15}services.location:on(\"didU\t")
        await repl.waitFor("an event name completed") { $0.last == "> services.location:on(\"didUpdateLocations" }
        repl.type("\u{15}trap.x\t\t\u{15}string.fo\t")
        await repl.waitFor("string.format completed") { $0.last == "> string.format" }
        repl.type("\u{15}services.location:st\t")
        await repl.waitFor("the candidates listed") { lines in
            lines.contains { $0.contains("start") && $0.contains("stop") }
        }
        repl.type("\u{15}calls\r")
        await repl.waitFor("the count of __index calls") { lines in
            lines.last == ">" && lines.dropLast().last == "0"
        }
        repl.type(".exit\r")
        #expect(await repl.finish() == 0)
    }

    @Test func controllerCommandsAreSentAndCompletedAfterAColon() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("counter.lua", """
            local Counter = controller("Counter")
            function Counter:loadView() return view.text { id = "count", text = "count 0" } end
            function Counter:viewDidLoad()
              self.n = 0
              self:command("increment", "increment", "add to the count")
            end
            function Counter:increment(by)
              self.n = self.n + (tonumber(by) or 1)
              self.view.count:update { text = "count " .. self.n }
            end
            app.push(Counter)
            """)
        let repl = try await open(sandbox)
        repl.type(".load counter.lua\r")
        await repl.waitFor(line: "count 0")
        repl.type(":inc\t")
        await repl.waitFor("the command completed") { $0.last == "> :increment" }
        repl.type(" 5\r")
        await repl.waitFor(line: "count 5")
        repl.type(":nope\r")
        await repl.waitFor(line: "unknown command 'nope'")
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
    }

    @Test func controlCInterruptsARunningChunkAndTheReplCarriesOn() async throws {
        let sandbox = try Sandbox()
        let repl = try await open(sandbox)
        repl.type("while true do end\r")
        try await Task.sleep(for: .milliseconds(200))
        repl.type("\u{3}")
        await repl.waitFor(line: "interrupted")
        await repl.waitFor("the prompt back") { $0.last == ">" }
        repl.type("1 + 1\r")
        await repl.waitFor(line: "2")
        // A chunk waiting on a sleep is cancelled the same way.
        repl.type("sleep(60)\r")
        try await Task.sleep(for: .milliseconds(200))
        repl.type("\u{3}")
        await repl.waitFor(line: "cancelled")
        repl.type("print(\"still here\")\r")
        await repl.waitFor(line: "still here")
        // Ctrl-C at the prompt clears the line; twice on an empty line leaves.
        repl.type("half a line\u{3}")
        await repl.waitFor(line: "half a line^C")
        repl.type("\u{3}")
        await repl.waitFor(line: "press Ctrl-C again")
        repl.type("\u{3}")
        #expect(await repl.finish() == 0)
    }

    @Test func errorsPrintWithATracebackAndNeverEndTheRepl() async throws {
        let sandbox = try Sandbox()
        let repl = try await open(sandbox)
        repl.type("error(\"boom\")\r")
        await repl.waitFor(line: "stdin:1: boom")
        await repl.waitFor(line: "stack traceback:")
        repl.type("x = = 1\r")
        await repl.waitFor(line: "unexpected symbol near '='")
        repl.type("timer.after(0.05, function() error(\"late failure\") end)\r")
        await repl.waitFor(line: "late failure")
        await repl.waitFor("the prompt after the handler error") { $0.last == ">" }
        repl.type("print(\"alive\")\r")
        await repl.waitFor(line: "alive")
        repl.type("app.exit(3)\r")
        #expect(await repl.finish() == 3)
    }

    @Test func historyIsKeptAcrossSessionsWithMultiLineEntriesWhole() async throws {
        let sandbox = try Sandbox()
        let first = try await open(sandbox)
        first.type("marker = \"first session\"\r")
        first.type("for i = 1, 2 do\r")
        first.type("marker = marker .. i end\r")
        first.type("\u{4}")
        #expect(await first.finish() == 0)

        let second = try await open(sandbox)
        second.type("\u{1B}[A")
        await second.waitFor("the multi-line entry back") { lines in
            lines.suffix(2) == ["> for i = 1, 2 do", ".. marker = marker .. i end"]
        }
        second.type("\u{1B}[A\u{1B}[A")
        await second.waitFor("the older entry") { $0.last == "> marker = \"first session\"" }
        second.type("\u{15}\u{12}first")
        await second.waitFor("a reverse search") { $0.last?.contains("marker = \"first session\"") == true }
        second.type("\r\u{4}")
        #expect(await second.finish() == 0)
        let history = try String(contentsOfFile: sandbox.path + "/history", encoding: .utf8)
        #expect(history.contains("marker = \"first session\""))
    }

    /// `.load` of a controller script shows its view once, then only the lines that change: the
    /// title line is printed once however often the counter below it ticks.
    @Test func aLoadedControllerShowsItsViewOnceThenOnlyChanges() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.lua", """
            local C = controller("C")
            function C:loadView() return view.stack { view.text { id = "t", text = "the title" }, view.text { id = "n", text = "count 0" } } end
            function C:viewDidAppear() local n = 0; self.ticks = timer.every(0.1, function() n = n + 1; self.view.n:update("count " .. n) end) end
            app.push(C)
            """)
        let repl = try await open(sandbox)
        repl.type(".load app.lua\r")
        await repl.waitFor(line: "count 3")
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
        let lines = repl.screen.transcript
        #expect(lines.filter { $0 == "the title" }.count == 1, "\(lines)")
        #expect(lines.contains("count 0") && lines.contains("count 1") && lines.contains("count 2"), "\(lines)")
    }

    @Test func dotCommandsHelpServicesSubscriptionsLoadAndEditor() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("lib.lua", "loaded = 42\nreturn \"loaded \" .. loaded\n")
        let repl = try await open(sandbox, columns: 200)
        repl.type(".help\r")
        await repl.waitFor(line: ".editor")
        repl.type("sub = observe(services.location, \"location\", function() end)\r.subs\r")
        await repl.waitFor(line: "location.location")
        repl.type(".load lib.lua\r")
        await repl.waitFor(line: "\"loaded 42\"")
        repl.type(".load missing.lua\r")
        await repl.waitFor(line: "cannot open 'missing.lua'")
        repl.type(".editor\r")
        await repl.waitFor(line: "Ctrl-D runs")
        repl.type("local a = 20\rreturn a + loaded\u{4}")
        await repl.waitFor(line: "62")
        repl.type(".bogus\r")
        await repl.waitFor(line: "unknown command .bogus")
        repl.type(".services geocoder\r")
        await repl.waitFor(line: "services.geocoder:search(query[, options], completion)")
        repl.type(".exit\r")
        #expect(await repl.finish() == 0)

        // .services prints what `crescent services geocoder` prints: the same declarations.
        let cli = try await crescent(["services", "geocoder"])
        let transcript = repl.screen.transcript
        for line in cli.stdoutLines.prefix(6) where !line.isEmpty {
            #expect(transcript.contains(line), "\(line)")
        }
    }

    @Test func withoutATerminalTheInputRunsAsAScript() async throws {
        let result = try await crescent(["repl"], stdin: "print(1 + 2)\nprint(\"piped\")\n")
        #expect(result.status == 0)
        #expect(result.stdoutLines == ["3", "piped"])
        #expect(!result.stdout.contains("\u{1B}"), "no escape sequences without a terminal")
        let plain = try await crescent([], stdin: "print(\"also as a script\")\n")
        #expect(plain.stdoutLines == ["also as a script"])
    }
}
