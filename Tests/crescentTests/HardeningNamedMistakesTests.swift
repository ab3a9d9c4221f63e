import Foundation
import Testing

/// What the attack on issue 39 ("every mistake is named") found still silent, misplaced or
/// misleading: each test is one of its defects, run through the `crescent` binary.
@Suite struct HardeningNamedMistakesTests {
    /// A one-line expression sent by `crescent eval` (the REPL compiles it the same way) named
    /// line 2 (`remote:2:`): the wrapping that keeps the chunk's frame put its `)` on a line of
    /// its own, and Lua emits the last argument's code there. lua5.4 says line 1.
    @Test func aOneLineExpressionsErrorNamesLineOne() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("idle.lua", "timer.every(60, function() end)\n")
        let host = try await ListeningHost(script: "idle.lua", name: "idle", sandbox: sandbox)
        let failure = try await host.crescentCommand(["eval", "idle", "string.nope.field"])
        #expect(failure.status == 1, "\(failure)")
        #expect(failure.stderr.contains("remote:1: attempt to index a nil value (field 'nope')"), "\(failure)")
        #expect(failure.stderr.contains("remote:1: in main chunk"), "\(failure)")
        #expect(!failure.stderr.contains("remote:2"), "\(failure)")
        // An expression ending in a comment still gives its value, and its errors their line.
        let commented = try await host.crescentCommand(["eval", "idle", "40 + 2 -- the answer"])
        #expect(commented.status == 0 && commented.stdout.contains("42"), "\(commented)")
        let twoLines = try await host.crescentCommand(["eval", "idle", "1,\nstring.nope.field -- a comment"])
        #expect(twoLines.stderr.contains("remote:2: attempt to index a nil value (field 'nope')"), "\(twoLines)")
        _ = await host.stop()
    }
}
