import Foundation
import Testing

/// Issue 39's seventh attack (new29m), defects 18, 27, 28, 29 and 34: a list read as one record,
/// a plugin method declared without its doc, a plugin method's wrong answer, a plugin's `set` of
/// the wrong type, and a writable change set. Each test is one finding, run through the
/// `crescent` binary, so `CRESCENT_BIN` can name the binary before the fixes.
@Suite struct HardeningNamedMistakesNinthCTests {
    /// 34: a `didChange` handler's `cs.insertd = 1` was kept and read back, while placemarks,
    /// tasks and a process's exit refuse writes.
    @Test func aChangeSetIsReadOnly() async throws {
        let result = try await runScript("""
            local c = services.store:collection("g")
            c:on("didChange", function(cs)
              print("write", pcall(function() cs.insertd = 1 end))
              print("kept", rawget(cs, "insertd"), #cs.inserted)
            end)
            task(function() c:add({ name = "x" }) end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("write\tfalse\tscript.lua:3: cannot set 'change set.insertd' (did you mean 'inserted'?): "
                                       + "a change set is read-only (it is what its service delivered); keep what you need in a local "
                                       + "or a table of your own"), "\(result)")
        #expect(result.stdout.contains("kept\tnil\t1"), "\(result)")
    }
}
