import Testing

/// What the attack on the process and files services broke, end to end through the binary: a
/// program that does not read its input ended the host by SIGPIPE, and a one-character file
/// name trapped in Foundation.
@Suite struct HardeningAutomationTests {
    @Test func aProgramThatNeverReadsItsInputFailsOnlyItsWrite() async throws {
        let sandbox = try Sandbox()
        let result = try await crescent(["-e", """
            task(function()
              local outcome, err = services.process:run({ "true" }, { stdin = string.rep("z", 1 << 20) })
              print("ran", outcome and outcome.status, err and err.code)
              local again = services.process:run({ "true" }, { stdin = "z" })
              print("again", again and again.status)
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.contains { $0.hasPrefix("ran\t") }, "\(result)")
        #expect(result.stdoutLines.contains("again\t0"), "\(result)")
    }

    @Test func aOneCharacterFileNameIsWrittenAndAFolderOrTrailingSlashIsAnError() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.makeFolder("d")
        let result = try await crescent(["-e", """
            task(function()
              print(services.files:write("x", "a"))
              print(services.files:read("x"))
              local _, folder = services.files:write("d", "a")
              print("folder", folder and folder.code)
              local _, slash = services.files:write("y/", "a")
              print("slash", slash and slash.code)
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.count >= 4 && result.stdoutLines[1].hasPrefix("a\t"), "\(result)")
        #expect(result.stdoutLines.contains { $0.hasPrefix("folder\t") && !$0.hasSuffix("nil") }, "\(result)")
        #expect(result.stdoutLines.contains { $0.hasPrefix("slash\t") && !$0.hasSuffix("nil") }, "\(result)")
    }
}
