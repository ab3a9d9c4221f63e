import Foundation
import Testing

/// What the attack on the terminal (new25k) found in the spec helpers, run through the
/// `crescent test` binary: `screen_text` with a size that is no whole number (D14).
@Suite struct SpecHelperAttackTests {
    /// D14: `screen_text(2.5, 3)` raised "[crescent testing]:470: bad argument #1 … (number has no
    /// integer representation)" and `screen_text("a", 2)` was taken as the default width. Both
    /// get the words a size out of range gets, at the spec's line.
    @Test func aScreenSizeThatIsNoWholeNumberIsRefusedAtTheSpecsLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.lua", """
            local V = controller("V")
            function V:loadView() return view.text { id = "t", text = "hi" } end
            app.push(V)
            """)
        try sandbox.write("spec/x_spec.lua", """
            describe("d", function()
              it("fraction", function() script("app.lua"); screen_text(2.5, 3) end)
              it("string", function() script("app.lua"); screen_text("a", 2) end)
            end)
            """)
        let result = try await crescent(["test", "spec/x_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:2: screen_text(width, height): a screen of 2.5 x 3 cannot be shown; "
                                       + "pass 1-1000 columns and 2-1000 rows"), "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:3: screen_text(width, height): a screen of 'a' x 2 cannot be shown"), "\(result)")
        #expect(!result.stdout.contains("[crescent testing]"), "\(result)")
    }
}
