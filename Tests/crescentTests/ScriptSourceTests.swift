import Foundation
import Testing

/// Where a script comes from: a file, `-e`, standard input (`crescent < file`, `crescent -`), and
/// shebang scripts run directly.
@Suite struct ScriptSourceTests {
    @Test func aScriptPipedOnStdinRuns() async throws {
        let result = try await crescent([], stdin: "print('from stdin')\ntimer.after(0.01, function() print('timer') end)\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "from stdin\ntimer\n", "\(result)")
    }

    @Test func dashReadsTheScriptFromStdin() async throws {
        let result = try await crescent(["-"], stdin: "print('from dash')")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "from dash\n", "\(result)")
    }

    @Test func aLargeScriptOnStdinIsReadWhole() async throws {
        // Far more than a pipe's buffer.
        let source = (1...20000).map { "v\($0 % 100) = \($0)" }.joined(separator: "\n") + "\nprint('end', v0)\n"
        let result = try await crescent([], stdin: source)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "end\t20000\n", "\(result)")
    }

    /// 12,000 lines of about 50 bytes: a file past 64 KiB is read in several chunks.
    static let largeScript = (1...12000).map { "v\($0 % 100) = \($0) -- a line of a large script file" }.joined(separator: "\n")
        + "\nprint('end', v0)\n"

    @Test func aScriptFileLargerThanOneReadRunsWhole() async throws {
        let result = try await runScript(Self.largeScript, arguments: [])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "end\t12000\n", "\(result)")
    }

    @Test func aScriptPathNamingAPipeIsReadToItsEnd() async throws {
        // /dev/stdin names the pipe here: its size reads as 0, and it is read whole all the same.
        let result = try await crescent(["/dev/stdin"], stdin: Self.largeScript)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "end\t12000\n", "\(result)")
    }

    @Test func anEmptyStdinIsAnEmptyScript() async throws {
        let result = try await crescent([], stdin: "")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "" && result.stderr == "", "\(result)")
    }

    @Test func eRunsAChunk() async throws {
        let result = try await crescent(["-e", "print(1 + 1)"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "2\n", "\(result)")
    }

    static let shebangScript = """
        #!/usr/bin/env crescent
        print("shebang ok", ...)
        error("on line three")
        """

    @Test func aShebangLineIsSkippedAndLinesKeepTheirNumbers() async throws {
        let result = try await runScript(Self.shebangScript, arguments: ["a"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "shebang ok\ta\n", "\(result)")
        #expect(result.stderr.hasPrefix("crescent: script.lua:3: on line three"), "\(result)")
    }

    @Test func aShebangScriptRunsAsACommand() async throws {
        // `#!/usr/bin/env crescent` finds the binary under test through PATH.
        let sandbox = try Sandbox()
        let script = try sandbox.write("tool", Self.shebangScript, executable: true)
        let binFolder = URL(fileURLWithPath: CrescentProcess.binaryPath).deletingLastPathComponent().path
        let path = binFolder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try await crescent(["x", "y"], executable: script, in: sandbox, environment: ["PATH": path])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "shebang ok\tx\ty\n", "\(result)")
        // The kernel passes the script's absolute path, so the message names it.
        #expect(result.stderr.hasPrefix("crescent: "), "\(result)")
        #expect(result.stderr.contains("tool:3: on line three"), "\(result)")
    }

    @Test func aShebangOnStdinIsSkippedToo() async throws {
        let result = try await crescent([], stdin: Self.shebangScript)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "shebang ok\n", "\(result)")
        #expect(result.stderr.hasPrefix("crescent: stdin:3: on line three"), "\(result)")
    }

    @Test func aUTF8ByteOrderMarkIsSkippedAsLua54Does() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("bom.lua", bytes: [0xEF, 0xBB, 0xBF] + Array("print('bom ok')\n".utf8))
        let result = try await crescent(["bom.lua"], in: sandbox)
        do {
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "bom ok\n", "\(result)")
        }
    }

    @Test func aScriptWithAnEmbeddedZeroByteRuns() async throws {
        let result = try await runScript("local s = \"a\\0b\"\nprint(#s)\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "3\n", "\(result)")
    }
}
