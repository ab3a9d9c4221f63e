import Foundation
import Testing

/// What a spec author reads when something is missing or wrong (issue 36): a service with no
/// fake, an assertion that does not exist (with the close ones), a spec file that does not load.
extension TestCommandTests {
    @Test func aServiceWithNoFakeSaysHowToFakeIt() async throws {
        let (result, _) = try await Self.run(["weather_spec.lua": """
            it("asks the weather", function()
              local forecast = services.weather:today()
            end)
            """])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/weather_spec.lua:2: no service 'weather'"), "\(result)")
        #expect(result.stdout.contains("in a test, fake it: fake.service(\"weather\", { methods = { ... } })"), "\(result)")
    }

    @Test func anAssertionThatDoesNotExistNamesTheCloseOnes() async throws {
        let (result, _) = try await Self.run(["typo_spec.lua": """
            it("uses a misspelled assertion", function() assert.is_equl(1, 1) end)
            it("uses a modifier as an assertion", function() assert.are_nat.same({}, {}) end)
            it("adds a word to a whole assertion", function() assert.equal_to(1, 1) end)
            """])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/typo_spec.lua:1: assert.is_equl: there is no assertion or modifier 'equl' (did you mean equal?)"),
                "\(result)")
        #expect(result.stdout.contains("assert:register(\"assertion\", \"equl\", fn, ...)"), "\(result)")
        #expect(result.stdout.contains("spec/typo_spec.lua:2: assert.are_nat_same: there is no assertion or modifier 'nat' (did you mean not?)"),
                "\(result)")
        // Not 'no', one letter from 'to': a word tacked onto a whole assertion suggests the assertion.
        #expect(result.stdout.contains("spec/typo_spec.lua:3: assert.equal_to: there is no assertion or modifier 'to' (did you mean assert.equal?)"),
                "\(result)")
    }

    @Test func aSpecFileThatDoesNotLoadNamesItsLine() async throws {
        let (result, _) = try await Self.run([
            "syntax_spec.lua": "describe(\"x\", function()\n  it(\"y\", function() end\nend)\n",
            "runtime_spec.lua": "local helper = require(\"no_such_helper\")\nit(\"never runs\", function() end)\n",
        ])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("FAIL    (loading the file)  (spec/syntax_spec.lua)"), "\(result)")
        #expect(result.stdout.contains("spec/syntax_spec.lua:3: ')' expected (to close '(' at line 2)"), "\(result)")
        #expect(result.stdout.contains("spec/runtime_spec.lua:1: module 'no_such_helper' not found"), "\(result)")
    }
}
