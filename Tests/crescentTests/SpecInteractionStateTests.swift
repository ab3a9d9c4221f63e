import Foundation
import Testing

/// What a spec's keys leave on its host's screen (attack new28t on issue 34): the `?` help one
/// test opened was over the next test's view, and took that test's first key (a `press("q")` that
/// should have failed only closed it); `press()` right after `send()` returned before its key was
/// handled, so a component's `selected` disagreed with `screen_text()`.
@Suite struct SpecInteractionStateTests {
    static let groceries = CrescentProcess.packageRoot.appendingPathComponent("scripts/groceries.lua").path

    /// D1: each `it` starts with the help closed and no status message of the test before; a
    /// `press("q")` there is the controller's (groceries binds none, so the test fails naming it).
    @Test func aTestStartsWithNothingTheTestBeforeLeftOnTheScreen() async throws {
        let (result, _) = try await TestCommandTests.run(["state_spec.lua": """
            local GROCERIES = "\(Self.groceries)"
            describe("state", function()
              it("opens the help", function()
                script(GROCERIES)
                press("x", "?")
                assert.truthy(screen_text(60, 12):find("keys of", 1, true))
              end)
              it("starts with it closed", function()
                script(GROCERIES)
                local screen = screen_text(60, 12)
                assert.falsy(screen:find("keys of", 1, true), screen)
                assert.falsy(screen:find("no key 'x'", 1, true), screen)
              end)
              it("opens it again", function() script(GROCERIES) press("?") end)
              it("quits on q", function() script(GROCERIES) press("q") end)
            end)
            """])
        #expect(result.stdout.contains("ok      state starts with it closed"), "\(result)")
        #expect(result.stdout.contains("FAIL    state quits on q"), "\(result)")
        #expect(result.stdout.contains("press(\"q\")"), "\(result)")
        #expect(result.stdoutLines.last == "3 passed, 1 failed", "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// D5: `press` returns once its keys, and the commands sent before them, have been handled.
    @Test func pressReturnsOnceItsKeysAndTheCommandsBeforeThemAreHandled() async throws {
        let (result, _) = try await TestCommandTests.run(["press_spec.lua": """
            local GROCERIES = "\(Self.groceries)"
            it("agrees with the screen", function()
              script(GROCERIES)
              send("add", "a")
              send("add", "b")
              press("down")
              local index = app.top.view.list.selected
              assert.equals(2, index)
              assert.truthy(screen_text(30, 6):find("> b", 1, true))
            end)
            """])
        #expect(result.stdoutLines.last == "1 passed, 0 failed", "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }
}
