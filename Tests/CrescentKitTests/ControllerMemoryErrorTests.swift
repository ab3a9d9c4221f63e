@testable import CrescentKit
import Testing

/// A key's handler that runs past the memory limit (the second terminal attack, new26k D4): the
/// prelude's message handler armed a second memory error, raised once the handler's pcall had
/// returned, so the run reported `error in task: [crescent controllers]:156: not enough memory`,
/// blaming the prelude's line, and the keys queued behind it did not run.
@Suite struct ControllerMemoryErrorTests {
    static let source = """
        local C = controller("C")
        function C:viewDidLoad()
          self:key("m", "bomb", "use memory")
          self:key("s", "say", "say")
        end
        function C:bomb()
          local t = {}
          for i = 1, 1e9 do t[i] = string.rep("x", 1000) .. i end
        end
        function C:say() print("said") end
        app.push(C)
        app.press("m", "s")
        """

    @Test func aMemoryErrorInAKeysHandlerNamesTheHandlerAndItsLine() throws {
        let test = try TestHost(memoryLimitMiB: 20)
        test.run(Self.source)
        test.settle()
        let errors = test.stderr
        #expect(errors.hasPrefix("crescent: error in C:bomb: test.lua:8: not enough memory: the memory limit of 20 MiB was reached"), "\(errors)")
        #expect(!errors.contains("error in task") && !errors.contains(#/\[crescent controllers\w*\]:/#), "\(errors)")
        #expect(test.lines == ["said"], "the key after it runs")
    }
}
