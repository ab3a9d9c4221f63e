import Testing

/// DESIGN.md "The event loop": 0 success, 1 an uncaught error in the main chunk, and
/// `app.exit(code)` ending the run at once with `code`.
@Suite struct ExitStatusTests {
    @Test func aNormalScriptExitsZero() async throws {
        let result = try await runScript(#"print("hello")"#)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "hello\n", "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    @Test func anEmptyScriptExitsZero() async throws {
        let result = try await runScript("")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "" && result.stderr == "", "\(result)")
    }

    @Test func anUncaughtErrorInTheMainChunkExitsOneWithFileLineAndTraceback() async throws {
        let result = try await runScript("""
            print("before")
            local function fail() error("boom") end
            fail()
            print("after")
            """)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "before\n", "\(result)")
        let lines = result.stderrLines
        #expect(lines.first == "crescent: script.lua:2: boom", "\(result)")
        #expect(lines.contains("stack traceback:"), "\(result)")
        #expect(result.stderr.contains("script.lua:3: in main chunk"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func aRuntimeErrorNamesTheVariable() async throws {
        let result = try await runScript("local t = nil\nprint(t.x)\n")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.hasPrefix("crescent: script.lua:2: attempt to index a nil value (local 't')"), "\(result)")
        #expect(result.stderr.contains("stack traceback:"), "\(result)")
    }

    @Test func aSyntaxErrorNamesFileAndLineAndExitsOne() async throws {
        let result = try await runScript("print(1)\nlocal x = = 2\nprint(3)\n")
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "", "nothing runs when the chunk does not compile: \(result)")
        #expect(result.stderr.hasPrefix("crescent: script.lua:2: unexpected symbol near '='"), "\(result)")
    }

    @Test func anErrorInTheMainChunkDropsPendingTimers() async throws {
        let result = try await runScript("""
            timer.after(0.01, function() print("timer ran") end)
            error("main failed")
            """)
        #expect(result.status == 1, "\(result)")
        #expect(!result.stdout.contains("timer ran"), "\(result)")
        #expect(result.stderr.hasPrefix("crescent: script.lua:2: main failed"), "\(result)")
    }

    @Test func errorWithANonStringValueIsStillReported() async throws {
        let result = try await runScript("error({ code = 'x' })")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.hasPrefix("crescent: "), "\(result)")
        #expect(result.stderr.contains("stack traceback:"), "\(result)")
    }

    // MARK: app.exit

    @Test func appExitInACallbackExitsAtOnceWithItsCode() async throws {
        let result = try await runScript("""
            timer.after(0.01, function()
              print("before")
              app.exit(3)
              print("after exit")
            end)
            timer.after(0.08, function() print("other timer") end)
            """)
        #expect(result.status == 3, "\(result)")
        #expect(result.stdout == "before\n", "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    @Test func appExitWithoutACodeExitsZero() async throws {
        let result = try await runScript("""
            timer.after(0.01, function() app.exit() end)
            timer.every(0.01, function() end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    @Test func appExitInTheMainChunkStopsTheChunk() async throws {
        let result = try await runScript("""
            print("main")
            app.exit(4)
            print("not reached")
            """)
        #expect(result.status == 4, "\(result)")
        #expect(result.stdout == "main\n", "\(result)")
    }

    @Test func appExitInsideATaskExitsAtOnce() async throws {
        let result = try await runScript("""
            task(function()
              sleep(0.01)
              print("in task")
              app.exit(6)
              print("not reached")
            end)
            """)
        #expect(result.status == 6, "\(result)")
        #expect(result.stdout == "in task\n", "\(result)")
    }

    @Test func appExitFlushesEverythingPrintedBefore() async throws {
        let result = try await runScript("""
            for i = 1, 20000 do print(i) end
            io.write("no newline")
            app.exit(5)
            """)
        #expect(result.status == 5, "\(result.status)")
        let lines = result.stdoutLines
        #expect(lines.count == 20001)
        #expect(lines.first == "1")
        #expect(lines.last == "no newline")
    }

    @Test func appExitWithANonIntegerIsAnError() async throws {
        let result = try await runScript("app.exit(2.5)")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("bad argument #1 to 'app.exit'"), "\(result)")
    }
}
