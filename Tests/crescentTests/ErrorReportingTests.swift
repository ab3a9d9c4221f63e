import Testing

/// DESIGN.md "The event loop": an error reported from a handler is printed with `file:line` and a
/// traceback, the run goes on, and the exit status is 1; `--fail-fast` stops at the first.
@Suite struct ErrorReportingTests {
    static let failingTimer = """
        local function inner() error("deep") end
        local function outer() inner() end
        timer.after(0.01, function()
          outer()
        end)
        timer.after(0.08, function() print("later timer") end)
        print("main done")
        """

    @Test func aTimerCallbackErrorIsReportedWithItsTracebackAndTheRunGoesOn() async throws {
        let result = try await runScript(Self.failingTimer)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "main done\nlater timer\n", "\(result)")
        let lines = result.stderrLines
        #expect(lines.first == "crescent: error in timer callback: script.lua:1: deep", "\(result)")
        #expect(lines.contains("stack traceback:"), "\(result)")
        // Every frame down to the callback is named.
        for frame in ["script.lua:1: in", "script.lua:2: in", "script.lua:4: in"] {
            #expect(result.stderr.contains(frame), "traceback has \(frame): \(result)")
        }
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func failFastStopsAtTheFirstHandlerError() async throws {
        let result = try await runScript(Self.failingTimer, options: ["--fail-fast"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "main done\n", "the later timer does not fire: \(result)")
        #expect(result.stderr.hasPrefix("crescent: error in timer callback: script.lua:1: deep"), "\(result)")
        #expect(result.stderr.contains("stack traceback:"), "\(result)")
    }

    @Test func everyFailingCallOfARepeatingTimerIsReported() async throws {
        let result = try await runScript("""
            local n = 0
            timer.every(0.01, function(t)
              n = n + 1
              if n <= 2 then error("failure " .. n) end
              print("tick", n)
              if n == 3 then t:cancel() end
            end)
            """)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "tick\t3\n", "\(result)")
        #expect(result.stderr.contains("crescent: error in timer callback: script.lua:4: failure 1"), "\(result)")
        #expect(result.stderr.contains("crescent: error in timer callback: script.lua:4: failure 2"), "\(result)")
    }

    @Test func aTaskErrorIsReportedAndTheRunGoesOn() async throws {
        let result = try await runScript("""
            task(function()
              sleep(0.01)
              error("task failed")
            end)
            timer.after(0.08, function() print("later timer") end)
            """)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "later timer\n", "\(result)")
        #expect(result.stderr.hasPrefix("crescent: error in task: script.lua:3: task failed"), "\(result)")
        #expect(result.stderr.contains("stack traceback:"), "\(result)")
    }

    @Test func failFastStopsAtATaskError() async throws {
        let result = try await runScript("""
            task(function() sleep(0.01) error("task failed") end)
            timer.after(0.08, function() print("later timer") end)
            """, options: ["--fail-fast"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "", "\(result)")
        #expect(result.stderr.hasPrefix("crescent: error in task: script.lua:1: task failed"), "\(result)")
    }

    @Test func anErrorObjectWithToStringIsPrintedThroughIt() async throws {
        let result = try await runScript("""
            timer.after(0.01, function()
              error(setmetatable({}, { __tostring = function() return "custom message" end }))
            end)
            """)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.hasPrefix("crescent: error in timer callback: custom message"), "\(result)")
    }

    @Test func errorsFromEChunksAndStdinNameTheirChunk() async throws {
        let fromE = try await crescent(["-e", "local x = 1\nerror('from e')"])
        #expect(fromE.status == 1, "\(fromE)")
        #expect(fromE.stderr.hasPrefix("crescent: (command line):2: from e"), "\(fromE)")

        let fromStdin = try await crescent([], stdin: "print('x')\nerror('from stdin')\n")
        #expect(fromStdin.status == 1, "\(fromStdin)")
        #expect(fromStdin.stdout == "x\n", "\(fromStdin)")
        #expect(fromStdin.stderr.hasPrefix("crescent: stdin:2: from stdin"), "\(fromStdin)")
    }

    @Test func aHandledErrorIsNotReported() async throws {
        let result = try await runScript("""
            timer.after(0.01, function()
              local ok, err = pcall(error, "caught")
              print(ok, err)
            end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "false\tcaught\n", "\(result)")
        #expect(result.stderr == "", "\(result)")
    }
}
