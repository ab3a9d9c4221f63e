import Foundation
import Testing

/// A template variable that its data lacks, with no field of a close name, rendered as nothing
/// without a word (`{{subtitle}}` forgotten in data, or `{{titel}}`-style misspellings too far
/// from any field to suggest one). It stays valid, since an optional field renders empty too, but
/// it is said: once per component, at the script's line, with the two ways to mean it.
@Suite struct TemplateAbsentVariableTests {
    @Test func aVariableDataLacksIsSaidOncePerComponentWithTheFix() async throws {
        let result = try await runScript("""
            local t = view.template { source = "{{title}}: {{subtitle}} ({{count}})", data = { title = "Inbox", count = 3 } }
            t:update { title = "Inbox", count = 4 }
            t.data = { title = "Inbox", count = 5 }
            local quiet = view.template {
              source = "{{title}}{{#subtitle}}: {{subtitle}}{{/subtitle}}{{^subtitle}}!{{/subtitle}}",
              data = { title = "Inbox" },
            }
            local given = view.template { source = "{{title}} {{subtitle}}", data = { title = "Inbox", subtitle = "" } }
            local later = view.template { source = "{{owner.name}} {{{raw}}}" }
            print("made")
            later:update { owner = { name = "Ada" } }
            later:update { owner = { name = "Grace" } }
            local empty = view.template { source = "{{&greeting}}", data = {} }
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["made"], "\(result)")
        let warnings = result.stderrLines.filter { $0.contains("warning") }
        #expect(warnings == [
            "crescent: warning: script.lua:1: view.template: {{subtitle}} is not in data (fields: count, title), so it shows nothing; "
                + "give data a 'subtitle' (\"\" to show nothing), or if it is optional, show it in a section: "
                + "{{#subtitle}}{{subtitle}}{{/subtitle}}",
            "crescent: warning: script.lua:11: view.template: {{raw}} is not in data (fields: owner), so it shows nothing; "
                + "give data a 'raw' (\"\" to show nothing), or if it is optional, show it in a section: {{#raw}}{{raw}}{{/raw}}",
            "crescent: warning: script.lua:13: view.template: {{greeting}} is not in data (data has no fields), so it shows nothing; "
                + "give data a 'greeting' (\"\" to show nothing), or if it is optional, show it in a section: "
                + "{{#greeting}}{{greeting}}{{/greeting}}",
        ], "\(result)")
    }

    /// A close field is still an error (the misspelling case), and neither form stops a view that
    /// uses every variable from being quiet.
    @Test func aCloseFieldIsAnErrorAndAFullDataIsQuiet() async throws {
        let result = try await runScript("""
            print(select(2, pcall(function() view.template { source = "{{titel}} {{x}}", data = { title = "a" } } end)))
            view.template { source = "{{title}} {{#items}}{{nme}}{{/items}}", data = { title = "a", items = { { name = "b" } } } }
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "script.lua:1: view.template: {{titel}} names no field of data (fields: title); did you mean 'title'?",
        ], "\(result)")
        #expect(!result.stderr.contains("warning"), "\(result)")
    }
}
