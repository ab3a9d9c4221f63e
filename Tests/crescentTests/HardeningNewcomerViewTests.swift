import Foundation
import Testing

/// The newcomer probe of issue 39, findings 17, 18 and 24: a controller helper given the wrong
/// kind of value, a Mustache template that does not parse, and `crescent attach` following a
/// view, each said in the script's terms.
@Suite struct HardeningNewcomerViewTests {
    /// Finding 17: the helpers name themselves, the argument and what it must be, at the
    /// script's line (they failed inside the prelude: "[crescent controllers]:58: bad argument
    /// #2 to 'within'").
    @Test func aWrongValueToAControllerHelperIsNamedAtTheScriptsLine() async throws {
        let cases: [(code: String, message: String)] = [
            ("self:start(\"location\")",
             "self:start(service[, options]): argument #1 must be a service, such as services.location, got string 'location'"),
            ("self:start(services.geocoder)",
             "self:start(service[, options]): <service geocoder> has no start(): only a service that runs on its own starts and stops, such as services.location"),
            ("self:stop(nil)", "self:stop(service): argument #1 must be a service, such as services.location, got nil"),
            ("self.start(services.location)",
             "self:start(service[, options]): call it with ':' on the controller (self:start(service[, options])), got userdata as self"),
            ("self:after(\"1\", \"show\")", "self:after(seconds, handler): argument #1 must be a number of seconds, got string '1'"),
            ("self:every(1, 5)", "self:every(seconds, handler): argument #2 must be a function or the name of a method of T, got number"),
            ("self:observe(\"location\", \"location\", \"show\")",
             "self:observe(object, key, handler[, options]): argument #1 must be a service or model object, such as services.location, got string 'location'"),
            ("self:on(5, \"show\")",
             "self:on(event, handler[, options]): argument #1 must be an event name such as \"location.didUpdateLocations\", got number"),
            ("self:task(5)", "self:task(fn, ...): argument #1 must be a function or the name of a method of T, got number"),
        ]
        let lines = cases.map { "  print(select(2, pcall(function() \($0.code) end)))" }
        let result = try await runScript("""
            local T = controller("T")
            function T:loadView() return view.text { text = "hi" } end
            function T:show() end
            function T:viewDidAppear()
            \(lines.joined(separator: "\n"))
              app.exit(0)
            end
            app.push(T)
            """, options: ["--location", "fixed:1,2"])
        #expect(result.status == 0, "\(result)")
        for (index, expected) in cases.enumerated() {
            #expect(result.stdoutLines.contains("script.lua:\(index + 5): " + expected.message), "\(expected.code)\n\(result)")
        }
        #expect(!result.stdout.contains(#/\[crescent controllers\w*\]:/#), "\(result)")
    }

    /// Finding 18: a template that does not parse names its file (or `source`), the line and
    /// column of the tag at fault and what to write; no Swift type names, no column shifted by
    /// crescent's own prefix.
    @Test func aTemplateThatDoesNotParseNamesTheFileLineAndFix() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("bad.mustache", "Hello {{name}}\nline2\n{{#items}}\n- {{.}}\n")
        try sandbox.write("wrong.mustache", "{{#a}}\n  {{#b}}x{{/a}}\n{{/b}}\n")
        try sandbox.write("script.lua", """
            print(select(2, pcall(function() return view.template { file = "bad.mustache" } end)))
            print(select(2, pcall(function() return view.template { source = "{{/a}}" } end)))
            print(select(2, pcall(function() return view.template { file = "wrong.mustache" } end)))
            print(select(2, pcall(function() return view.template { source = "ok\\n  {{name" } end)))
            local t = view.template { source = "{{name}}", data = { name = "x" } }
            print(select(2, pcall(function() t:update { source = "{{^empty}}" } end)))
            """)
        let result = try await crescent(["script.lua"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "script.lua:1: view.template: bad.mustache:3:1: {{#items}} is never closed: add {{/items}} where its section ends",
            "script.lua:2: view.template: source:1:1: {{/a}} closes no section: remove it, or open one before it with {{#a}}",
            "script.lua:3: view.template: wrong.mustache:2:10: {{/a}} does not close {{#b}}, opened at line 2: close that one first with {{/b}}",
            "script.lua:4: view.template: source:2:3: the tag {{name is never closed: end it with }}",
            "script.lua:6: view.template: source:1:1: {{^empty}} is never closed: add {{/empty}} where its section ends",
        ], "\(result)")
    }

    /// Finding 24: `crescent attach` prints the view once, then only the lines a render changed
    /// (as the REPL's `.load` does): it reprinted the whole view at every render.
    @Test func attachPrintsOnlyTheLinesARenderChanged() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("counter.lua", """
            local T = controller("T")
            function T:loadView()
              return view.stack { view.text { text = "a line that stays" }, view.text { id = "n", text = "count 0" } }
            end
            function T:viewDidLoad() local view = self.view; function bump(n) view.n.text = "count " .. n end end
            app.push(T)
            """)
        let host = try await ListeningHost(script: "counter.lua", name: "counter", sandbox: sandbox)
        let terminal = try InteractiveTerminal(["attach", "counter"], directory: sandbox.path,
                                               environment: host.environment.merging(["CRESCENT_HISTORY": sandbox.path + "/history"]) { $1 })
        await terminal.waitFor(line: "count 0")
        for n in 1...3 {
            terminal.type("bump(\(n))\r")
            await terminal.waitFor(line: "count \(n)")
        }
        terminal.type("\u{4}")
        #expect(await terminal.finish() == 0)
        let transcript = terminal.screen.transcript
        #expect(transcript.filter { $0.contains("a line that stays") }.count == 1, "\(transcript.joined(separator: "\n"))")
        #expect(transcript.filter { $0.hasPrefix("count ") }.count == 4, "\(transcript.joined(separator: "\n"))")
        _ = await host.stop()
    }
}
