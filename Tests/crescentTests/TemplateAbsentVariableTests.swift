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

    /// A close field is an error, in sections and dotted names as at the top (each showed
    /// nothing); names found in an outer context, a section over what data lacks, and a model's
    /// declared field that this model lacks are quiet.
    @Test func aCloseFieldIsAnErrorWhereverItIsAndCorrectTemplatesAreQuiet() async throws {
        let result = try await runScript("""
            local function try(source, data) print((select(2, pcall(function() view.template { source = source, data = data } end)))) end
            try("{{titel}} {{x}}", { title = "a" })
            try("{{#items}}- {{nme}}{{/items}}", { items = { { name = "a" }, { name = "b" } } })
            try("{{#user}}Hi {{nme}}{{/user}}", { user = { name = "a" } })
            try("Hi {{user.nme}}", { user = { name = "a" } })
            try("{{#itmes}}x{{/itmes}}", { items = { 1 } })
            view.template { source = "{{title}} {{#items}}{{name}} of {{title}}{{/items}}", data = { title = "a", items = { { name = "b" } } } }
            view.template { source = "{{#subtitle}}{{subtitle}}{{/subtitle}}{{^subtitle}}none{{/subtitle}}{{#gone}}{{anything}}{{/gone}}", data = { title = "a" } }
            view.template { source = "{{#items}}{{whatever}}{{/items}}{{#off}}{{x}}{{/off}}", data = { items = {}, off = false } }
            view.template { source = "{{user.name}} {{user.age}}", data = { user = { name = "a", age = 3 } } }
            task(function()
              local places = services.geocoder:reverse({ lat = 40.7128, lon = -74.0060 })
              local t = view.template { source = "{{name}} ({{subLocality}}) {{admin2}}", data = places[1] }
              print(t ~= nil)
              print((select(2, pcall(function() view.template { source = "{{contry}}", data = places[1] } end))))
            end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.count == 7, "\(result)")
        #expect(Array(result.stdoutLines.prefix(6)) == [
            "script.lua:1: view.template: {{titel}} names no field of data (fields: title); did you mean 'title'?",
            "script.lua:1: view.template: {{nme}} names no field of items (fields: name); did you mean 'name'?",
            "script.lua:1: view.template: {{nme}} names no field of user (fields: name); did you mean 'name'?",
            "script.lua:1: view.template: {{user.nme}} names no field of user (fields: name); did you mean 'name'?",
            "script.lua:1: view.template: {{itmes}} names no field of data (fields: items); did you mean 'items'?",
            "true",
        ], "\(result)")
        #expect(result.stdoutLines.last?.hasPrefix("script.lua:15: view.template: {{contry}} names no field of data (fields: ") == true, "\(result)")
        #expect(result.stdoutLines.last?.hasSuffix("did you mean 'country'?") == true, "\(result)")
        #expect(!result.stderr.contains("warning"), "\(result)")
    }
}
