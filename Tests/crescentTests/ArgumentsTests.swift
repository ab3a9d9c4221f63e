import Testing

/// `arg` as `lua5.4` sets it, `...` in the main chunk, and `app.args`.
@Suite struct ArgumentsTests {
    static let dump = """
        print("arg0", arg[0])
        print("arg-1", arg[-1])
        print("n", #arg)
        for i = 1, #arg do print(i, arg[i]) end
        print("dots", select("#", ...), ...)
        print("app", #app.args, table.concat(app.args, "|"))
        """

    @Test func argTableDotsAndAppArgsHoldTheScriptArguments() async throws {
        let result = try await runScript(Self.dump, arguments: ["one", "two words", ""])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "arg0\tscript.lua",
            "arg-1\tcrescent",
            "n\t3",
            "1\tone",
            "2\ttwo words",
            "3\t",
            "dots\t3\tone\ttwo words\t",
            "app\t3\tone|two words|",
        ], "\(result)")
    }

    @Test func noArguments() async throws {
        let result = try await runScript(Self.dump)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "arg0\tscript.lua", "arg-1\tcrescent", "n\t0", "dots\t0", "app\t0\t",
        ], "\(result)")
    }

    @Test func appArgsEqualsArgOneToN() async throws {
        let result = try await runScript("""
            local same = #app.args == #arg
            for i = 1, #arg do same = same and app.args[i] == arg[i] end
            print(same, app.args[0])
            """, arguments: ["a", "-b", "--c=d", "é"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "true\tnil\n", "\(result)")
    }

    @Test func theScriptPathIsArgZeroAsGiven() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("sub/script.lua", "print(arg[0])")
        let result = try await crescent(["sub/script.lua"], in: sandbox)
        #expect(result.stdout == "sub/script.lua\n", "\(result)")
        let viaRun = try await crescent(["run", "./sub/script.lua"], in: sandbox)
        #expect(viaRun.stdout == "./sub/script.lua\n", "\(viaRun)")
    }

    @Test func eChunkGetsTheWordsAfterItAsArguments() async throws {
        let result = try await crescent(["-e", "print(select('#', ...), ...) print(#arg, arg[1], arg[2]) print(table.concat(app.args, ','))", "a", "b"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["2\ta\tb", "2\ta\tb", "a,b"], "\(result)")
    }

    @Test func optionsBeforeTheScriptAreNotArguments() async throws {
        let result = try await runScript("print(select('#', ...), ...)", options: ["--fail-fast", "--timeout", "10"], arguments: ["x"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "1\tx\n", "\(result)")
    }

    @Test func stdinScriptGetsArgumentsAfterTheDash() async throws {
        let result = try await crescent(["-", "x", "y"], stdin: "print(select('#', ...), ...) print(app.args[2])")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "2\tx\ty\ny\n", "\(result)")
    }
}
