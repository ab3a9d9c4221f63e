import Foundation
import Testing

/// Issue 39's seventh attack (new29m): controllers, commands and remote eval. Each test is one
/// finding, run through the `crescent` binary, so `CRESCENT_BIN` can name the binary before the
/// fixes.
@Suite struct HardeningNamedMistakesNinthBTests {
    /// 2: `self:command(name, method, { args = … })` took the options as the help text, dropped
    /// the args, and `help` failed inside the host.
    @Test func commandOptionsInPlaceOfTheHelpAreNamed() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { id = "t", text = "hi" } end
            function C:add(item, qty) print("add", item, qty) end
            function C:viewDidLoad() self:command("add", "add", { args = { "item: string", "qty: integer" } }) end
            app.push(C)
            timer.after(0.2, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("script.lua:4: self:command(name, method[, help][, options]): argument #3 (help) must be a string, "
                                       + "got table: the options go 4th, after the help text"), "\(result)")
    }

    /// 9: a method called on the class (`C:refresh()`) read an instance's field as nil without a word.
    @Test func aClassReadingAnInstanceFieldIsToldOfAppTop() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { id = "t", text = "x" } end
            function C:init() self.count = 5 end
            function C:refresh() print("count is", self.count, self.title) end
            app.push(C)
            timer.after(0.05, function() C:refresh(); C:refresh(); app.top:refresh() end)
            timer.after(0.2, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 0, "\(result)")
        let warning = "script.lua:4: self.count reads nil: self is the class C here, which has no view or state of its own: app.push(C) "
            + "shows an instance of it, app.top, so call app.top:refresh(...) where C:refresh(...) was written"
        // Once per place, however often it runs; the instance's read of a missing field says nothing.
        #expect(result.stderr.components(separatedBy: warning).count == 2, "\(result)")
        #expect(result.stderr.components(separatedBy: "reads nil").count == 2, "\(result)")
        #expect(result.stdout.contains("count is\t5\tnil"), "\(result)")
    }

    /// L1: `function C:stop()` hid the helper self:stop(service) without a word until a helper
    /// call went to it.
    @Test func aMethodHidingAHelperIsWarnedAtPush() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { id = "t", text = "x" } end
            function C:stop() print("stopped") end
            function C:every() end
            app.push(C)
            app.push(C)
            timer.after(0.1, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 0, "\(result)")
        let stop = "script.lua:3: C:stop hides the controller helper self:stop(...), so each self:stop(...) of C calls this method instead of the helper: "
            + "give the method another name (e.g. 'handleStop')"
        #expect(result.stderr.components(separatedBy: stop).count == 2, "\(result)")
        #expect(result.stderr.contains("script.lua:4: C:every hides the controller helper self:every(...)"), "\(result)")
    }

    /// 23: `self:every(s, "tick")` whose method returned false went on firing without a word,
    /// where timer.every's callback is warned.
    @Test func aTimedMethodReturningABooleanIsWarned() async throws {
        let result = try await runScript("""
            local C = controller("C")
            local n = 0
            function C:loadView() return view.text { id = "t", text = "x" } end
            function C:viewDidLoad() self:every(0.02, "tick") end
            function C:tick() n = n + 1; return false end
            app.push(C)
            timer.after(0.3, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 0, "\(result)")
        let warning = "script.lua:4: the timer's callback returned false, and a callback's value is ignored, so the timer goes on"
        #expect(result.stderr.components(separatedBy: warning).count == 2, "\(result)")
    }

    /// 12 and 13: `crescent eval NAME 'servies'` printed a bare `nil` where the REPL names the
    /// global it resembles; code split over several shell words was told to give the code.
    @Test func remoteEvalNamesAMisspelledGlobalAndSplitCode() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("host.lua", "timer.every(1, function() end)\n")
        let host = try await ListeningHost(script: "host.lua", name: "ninth-b", options: ["--ui", "plain"], sandbox: sandbox)
        let misspelled = try await host.crescentCommand(["eval", "ninth-b", "servies"])
        #expect(misspelled.status == 0, "\(misspelled)")
        #expect(misspelled.stdout == "nil  -- no global 'servies'; did you mean 'services'?\n", "\(misspelled)")
        let split = try await host.crescentCommand(["eval", "ninth-b", "1", "+", "1"])
        #expect(split.status == 2, "\(split)")
        #expect(split.stderr.contains("the code is split over 3 words: quote it as one argument, as crescent eval ninth-b '1 + 1'"), "\(split)")
        let unnamed = try await host.crescentCommand(["eval", "1", "+", "1"])
        #expect(unnamed.stderr.contains("the code is split over 3 words: quote it as one argument, as crescent eval '1 + 1'"), "\(unnamed)")
        _ = await host.stop()
    }

    /// 33: a command's `complete` returning `{ "ok", 5, {} }` dropped the rest without a word; a
    /// non-list was warned without the function's line.
    @Test func aCompleteReturningOtherThanWordsIsNamedAtItsLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("host.lua", """
            local C = controller("C")
            function C:loadView() return view.text { id = "t" } end
            function C:viewDidLoad()
              self:command("add", "add", "adds", { args = { "item: string" }, complete = function(i, p)
                return { "ok", 5, {} } end })
              self:command("say", "say", "says", { args = { "word: string" }, complete = function() return 42 end })
            end
            function C:add() end
            function C:say() end
            app.push(C)
            """)
        let host = try await ListeningHost(script: "host.lua", name: "ninth-b-complete", options: ["--ui", "plain"], sandbox: sandbox)
        let client = try host.client()
        for _ in 0..<2 {
            let completed = client.call("complete", ["line": ":add ", "cursor": 5])?["result"] as? [String: Any]
            #expect(completed?["items"] as? [String] == ["ok"], "\(String(describing: completed))")
        }
        _ = client.call("complete", ["line": ":say ", "cursor": 5])
        let ended = await host.stop()
        let mixed = "host.lua:4: command 'add': complete returned a list with a number in it, and Tab offers only strings"
        #expect(ended.stderr.components(separatedBy: mixed).count == 2, "\(ended)")
        #expect(ended.stderr.contains("host.lua:6: command 'say': complete returned a number, not a list of words"), "\(ended)")
    }

    /// 36: `C.new()` said only "attempt to call a nil value (field 'new')".
    @Test func aConstructorCallOnAClassSaysAppPush() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { id = "t", text = "x" } end
            local c = C.new()
            """, options: ["--ui", "plain"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("script.lua:3: attempt to call a nil value (field 'new'); a controller class has no new: "
                                       + "app.push(C[, args]) makes an instance and shows it"), "\(result)")
    }

    /// 19: a loadView returning two components showed the first without a word.
    @Test func aLoadViewReturningTwoViewsIsWarned() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" }, view.text { text = "y" } end
            app.push(C)
            timer.after(0.1, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("script.lua:2: C:loadView returned more than one value, and a controller shows one view, the first: "
                                       + "put them in one, as return view.stack { first, second }"), "\(result)")
    }

    /// 20: a misspelled field of a route's args (`args.idd` for `:id`) read nil.
    @Test func aMisspelledRouteArgumentIsNamed() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:init(args) print("id", args.id, args.other); print(args.idd) end
            app.route("goods/:id", C)
            app.open("goods/42")
            timer.after(0.1, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("id\t42\tnil"), "\(result)")
        #expect(result.stderr.contains("script.lua:3: no field 'idd' in the args of the route 'goods/:id' (fields: id; did you mean 'id'?)"),
                "\(result)")
    }

    /// 11: `self:on`'s warnings carried no `file:line` and named the global `on(...)`.
    @Test func aHelpersWarningNamesTheScriptsLine() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:viewWillAppear() self:on("didFail", "failed") end
            function C:failed() end
            app.push(C)
            timer.after(0.1, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("warning: script.lua:3: self:on(\"didFail\", handler) listens for the script's own event 'didFail'"),
                "\(result)")
    }

    /// 10: a controller as a delegate: its misspelled event methods are on its class, which the
    /// check did not read.
    @Test func aControllerDelegatesMisspelledEventMethodsAreNamed() async throws {
        let beside = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:viewDidLoad() services.location:addObserver(self) end
            function C:didfail() end
            function C:didUpdateLocations() end
            app.push(C)
            timer.after(0.1, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(beside.stderr.contains("script.lua:3: location:addObserver(observer): the observer's method 'didfail' is named after no event "
                                       + "of location, so it is never called (events: didUpdateLocations, didFail; did you mean 'didFail'?)"),
                "\(beside)")
        let alone = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:viewDidLoad() services.location:addObserver(self) end
            function C:didUpdateLocation() end
            app.push(C)
            timer.after(0.1, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(alone.stderr.contains("(events: didUpdateLocations, didFail; did you mean 'didUpdateLocations' for 'didUpdateLocation'?)"),
                "\(alone)")
        // A right one alone says nothing.
        let right = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:viewDidLoad() services.location:addObserver(self) end
            function C:didUpdateLocations() end
            function C:didFail() end
            app.push(C)
            timer.after(0.1, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(!right.stderr.contains("warning"), "\(right)")
    }

    /// 24: `self.view.l.selectd` suggested the method `select` for a read meant as the field
    /// `selected`; a name close to one of each kind offers both.
    @Test func aNameCloseToAFieldAndAMethodOffersBoth() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.list { id = "l", selectable = true, items = { "a", "b" } } end
            function C:viewDidLoad() local i = self.view.l.selectd end
            app.push(C)
            timer.after(0.1, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("script.lua:3: no field or method 'selectd' on view.list (fields: "), "\(result)")
        #expect(result.stderr.contains("did you mean the field 'selected' or the method 'select'?)"), "\(result)")
    }

    /// 14: a live timer or task a remote eval returned ended when the client hung up, and its
    /// printed value said nothing of it.
    @Test func aClientsLiveTimerSaysItEndsWithTheClient() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("host.lua", "hostTimer = timer.every(1, function() end)\n")
        let host = try await ListeningHost(script: "host.lua", name: "ninth-b-owned", options: ["--ui", "plain"], sandbox: sandbox)
        let note = "the timer is this client's, so it ends when the client disconnects"
        let owned = try await host.crescentCommand(["eval", "ninth-b-owned", "timer.after(5, function() end)"])
        #expect(owned.status == 0, "\(owned)")
        #expect(owned.stdout.contains("Timer(after 5 s, active)  -- " + note), "\(owned)")
        let task = try await host.crescentCommand(["eval", "ninth-b-owned", "task(function() sleep(5) end)"])
        #expect(task.stdout.contains("  -- the task is this client's, so it ends when the client disconnects"), "\(task)")
        // The script's own timer goes on after the client: no note.
        let scripts = try await host.crescentCommand(["eval", "ninth-b-owned", "hostTimer"])
        #expect(scripts.stdout == "Timer(every 1 s, active)\n", "\(scripts)")
        _ = await host.stop()
    }
}
