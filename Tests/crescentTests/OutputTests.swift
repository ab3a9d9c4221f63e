import Testing

/// `print` and `io.write` share one ordered stdout; nothing is lost at exit.
@Suite struct OutputTests {
    @Test func printAndIoWriteInterleaveInProgramOrder() async throws {
        let result = try await runScript("""
            io.write("a")
            print("b")
            io.write("c", 1, "\\n")
            print("d", 2, nil, true)
            io.stdout:write("e\\n")
            print("f")
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "ab\nc1\nd\t2\tnil\ttrue\ne\nf\n", "\(result)")
    }

    @Test func outputFromCallbacksAndTasksKeepsProgramOrder() async throws {
        let result = try await runScript("""
            -- 190 ms between the two deadlines: a stall between these lines on a loaded machine
            -- (one of 10 ms did it) must not reorder them.
            timer.after(0.2, function() io.write("timer-") print("print") end)
            task(function() io.write("task-") sleep(0.01) print("resumed") end)
            io.write("main-")
            print("end")
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "task-main-end\nresumed\ntimer-print\n", "\(result)")
    }

    @Test func manyLinesArriveCompleteAndInOrder() async throws {
        let result = try await runScript("""
            for i = 1, 30000 do
              if i % 2 == 0 then print(i) else io.write(i, "\\n") end
            end
            """)
        #expect(result.status == 0, "\(result.status)")
        #expect(result.stdoutLines == (1...30000).map(String.init))
    }

    @Test func printUsesToString() async throws {
        let result = try await runScript("""
            print(setmetatable({}, { __tostring = function() return "custom" end }), 1.5, 10 // 1)
            """)
        #expect(result.stdout == "custom\t1.5\t10\n", "\(result)")
    }

    @Test func printKeepsEmbeddedZeros() async throws {
        let result = try await runScript(#"print("a\0b")"#)
        #expect(result.stdout == "a\u{0}b\n", "\(result)")
    }

    @Test func stderrWritesGoToStderr() async throws {
        let result = try await runScript(#"io.stderr:write("to stderr\n") print("to stdout")"#)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "to stdout\n", "\(result)")
        #expect(result.stderr == "to stderr\n", "\(result)")
    }

    @Test func outputPrintedBeforeAnErrorIsKept() async throws {
        let result = try await runScript("""
            io.write("partial")
            timer.after(0.01, function() print(" line") error("late") end)
            """)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "partial line\n", "\(result)")
    }
}
