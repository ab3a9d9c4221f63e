import Testing

/// An error message with a NUL byte in it is printed whole, the NUL shown as `\0`: the traceback
/// handler once passed the message to `luaL_traceback` as a C string, which ended it at the NUL.
@Suite struct NULMessageTests {
    @Test func aNULInAnErrorMessageIsShownAndNothingAfterItIsLost() async throws {
        let result = try await runScript(#"error("before\0after")"#)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains(#"before\0after"#), "\(result)")
    }

    @Test func aNULInAHandlersErrorIsShownToo() async throws {
        let result = try await runScript(#"timer.after(0, function() error("in a timer\0and after") end)"#)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains(#"in a timer\0and after"#), "\(result)")
    }
}
