import Foundation
import Testing

/// What the attack on issue 39 (new23) found silent or misleading in views, keys and the
/// controller stack, each as the script's author meets it.
@Suite struct HardeningNewcomerFifthTests {
    /// A self-contradicting `apply({})` ("must be a table, got table"), a fix that creates the
    /// misspelled slot, field lists without `id`/`file`, a number as a key name, `Enter` and
    /// `ctl-r`, an update a keyvalue cannot show, and an argument `subscriptions` ignored.
    @Test func viewAndKeyMistakesSayWhatToDo() async throws {
        let result = try await runScript("""
            local function try(f) print((select(2, pcall(f)))) end
            local t = view.table { columns = { "a" } }
            try(function() t:apply({}) end)
            try(function() view.template { sourse = "x" } end)
            try(function() view.text { txt = "x" } end)
            local kv = view.keyvalue { pairs = { a = 1 } }
            try(function() kv:update(5) end)
            try(function() subscriptions(42) end)
            local C = controller("C")
            function C:loadView() return view.stack { view.slot { id = "detail" } } end
            function C:go() end
            function C:viewDidAppear()
              local Child = controller("Child")
              function Child:loadView() return view.text("x") end
              try(function() self:addChild(Child, "detial") end)
              try(function() self:key(1, "go") end)
              try(function() self:key("Enter", "go") end)
              try(function() self:key("ctl-r", "go") end)
              try(function() self:key("entr", "go") end)
              app.exit(0)
            end
            app.push(C)
            """)
        #expect(result.status == 0, "\(result)")
        let keyNames = "; key names are a character"
        let lines = result.stdoutLines
        #expect(lines.count == 10, "\(result)")
        #expect(lines.prefix(6) == [
            "script.lua:3: view.table:apply: an empty table is no change set: give at least one of inserted=, deleted=, updated= "
                + "(lists of positions) or reload = true, or pass the change set a collection's didChange handler gets",
            "script.lua:4: view.template: no field 'sourse' (fields: id, source, data, file; did you mean 'source'?)",
            "script.lua:5: view.text: no field 'txt' (fields: id, text, style; did you mean 'text'?)",
            "script.lua:7: view.keyvalue:update: cannot show number in a keyvalue: give a table of its fields (fields: pairs)",
            "script.lua:8: subscriptions() takes no arguments, got 1: it lists every subscription; pick from the list it returns "
                + "(each has owner, target, site, deliveries, errors and sub)",
            "script.lua:15: addChild: C's view has no view.slot with id 'detial' (ids: detail; did you mean 'detail'?)",
        ], "\(result)")
        #expect(lines.dropFirst(6).first?.hasPrefix("script.lua:16: bad argument #1 to 'key' (unknown key 1 (a number); a key name is a string: "
                                                   + "write \"1\" for that key\(keyNames)") == true, "\(result)")
        #expect(lines.dropFirst(7).first?.hasPrefix("script.lua:17: bad argument #1 to 'key' (unknown key 'Enter'; did you mean 'enter'?\(keyNames)") == true,
                "\(result)")
        #expect(lines.dropFirst(8).first?.hasPrefix("script.lua:18: bad argument #1 to 'key' (unknown key 'ctl-r'; did you mean 'ctrl-r'?\(keyNames)") == true,
                "\(result)")
        #expect(lines.dropFirst(9).first?.hasPrefix("script.lua:19: bad argument #1 to 'key' (unknown key 'entr'; did you mean 'enter'?\(keyNames)") == true,
                "\(result)")
    }

    /// `app.press`, `app.send` and `app.pop` with no controller shown did nothing and said
    /// nothing (send said it without the line).
    @Test func callsWithNoControllerToActOnAreSaidAtTheirLine() async throws {
        let result = try await runScript("""
            app.press("down")
            app.send("nope")
            app.pop()
            timer.after(0.05, function() app.exit(0) end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrLines.filter { !$0.isEmpty } == [
            "crescent: warning: script.lua:1: app.press: no controller to receive key 'down' (app.push(Controller) shows one that takes keys)",
            "crescent: warning: script.lua:2: no controller to receive 'nope' (app.push(Controller) shows one that takes commands)",
            "crescent: warning: script.lua:3: app.pop(): no controller to pop (the stack is empty: app.push(Controller) shows one)",
        ], "\(result)")
    }
}
