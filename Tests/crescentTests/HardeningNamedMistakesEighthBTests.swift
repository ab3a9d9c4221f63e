import Foundation
import Testing

/// Issue 39's sixth attack (new28m), D13–D24: manifest near-misses and fields of the other kind,
/// `plugin check` saying an error once, near file, program, format and column names, command
/// arguments that cannot work, `self.titel`, a popped controller's view, `--keep-running` with
/// no effect, the REPL's `math.mininteger` and misspelled globals, and a `.luarc.json` for
/// another Lua. Each test is one finding, run through the `crescent` binary.
@Suite struct HardeningNamedMistakesEighthBTests {
    /// D13: `main`, a permission and a setting's type, each one edit from the right name, got no
    /// "did you mean".
    @Test func manifestNearMissesAreNamed() async throws {
        let main = try HardeningNamedMistakesTests.greetPlugin()
        try main.write("plugins/greet/plugin.toml", Self.manifest(kind: "lua", extra: #"main = "mian.lua""#))
        let mainCheck = try await crescent(["plugin", "check", "plugins/greet"], in: main)
        #expect(mainCheck.status == 1, "\(mainCheck)")
        #expect(mainCheck.stdout.contains("field 'main' names plugins/greet/mian.lua, which cannot be read; did you mean main = \"main.lua\"?"),
                "\(mainCheck)")

        let permission = try HardeningNamedMistakesTests.greetPlugin(extraManifest: "\n[permissions]\nraed = [\"/etc\"]\n")
        let permissionCheck = try await crescent(["plugin", "check", "plugins/greet"], in: permission)
        #expect(permissionCheck.status == 1, "\(permissionCheck)")
        #expect(permissionCheck.stdout.contains("field 'permissions.raed' is not a permission (permissions: collections, env, exec, "
                                                + "memory_mib, native, net, read, write; did you mean 'read'?)"), "\(permissionCheck)")

        let setting = try HardeningNamedMistakesTests.greetPlugin(extraManifest: "\n[settings.level]\ntype = \"numbr\"\ndefault = 1\n")
        let settingCheck = try await crescent(["plugin", "check", "plugins/greet"], in: setting)
        #expect(settingCheck.status == 1, "\(settingCheck)")
        #expect(settingCheck.stdout.contains("field 'settings.level.type' must be one of string, number, integer, boolean, array, table; "
                                             + "did you mean 'number'?"), "\(settingCheck)")
    }

    /// D22: a field only the other kind reads (`command` in a Lua plugin, `main` in a process
    /// plugin) passed `plugin check` without a word.
    @Test func aFieldOfTheOtherKindIsRefused() async throws {
        let lua = try HardeningNamedMistakesTests.greetPlugin(extraManifest: "\ncommand = [\"python3\", \"x.py\"]\n")
        let luaCheck = try await crescent(["plugin", "check", "plugins/greet"], in: lua)
        #expect(luaCheck.status == 1, "\(luaCheck)")
        #expect(luaCheck.stdout.contains("plugins/greet/plugin.toml: field 'command' is read only by a process plugin (kind = \"process\"), "
                                         + "and this one's kind is \"lua\", which runs main: remove command, or set kind = \"process\""),
                "\(luaCheck)")

        let process = try Sandbox()
        try process.write("plugins/greet/plugin.toml", Self.manifest(kind: "process", extra: "command = [\"python3\", \"p.py\"]\nmain = \"x.lua\""))
        let processCheck = try await crescent(["plugin", "check", "plugins/greet"], in: process)
        #expect(processCheck.status == 1, "\(processCheck)")
        #expect(processCheck.stdout.contains("field 'main' is read only by a Lua plugin (kind = \"lua\"), and this one's kind is \"process\", "
                                             + "which runs command: remove main, or set kind = \"lua\""), "\(processCheck)")
    }

    /// D14: `plugin check` printed a failing plugin's error twice, the second time telling the
    /// author to run `crescent plugin check`, the command running.
    @Test func pluginCheckSaysAStartErrorOnce() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin(main: """
            local s = service("greet", "says hi")
            s:property("level", "number", "Level.")
            """)
        let result = try await crescent(["plugin", "check", "plugins/greet"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        let output = result.stdout + result.stderr
        #expect(output.components(separatedBy: "property 'level' is declared number").count == 2, "\(result)")
        #expect(!output.contains("see `crescent plugin check"), "\(result)")
        #expect(result.stdout.contains("error: plugin 'greet' could not start (the error above)\nnot usable"), "\(result)")
    }

    /// D17: a process plugin's program one letter from one on PATH.
    @Test func aProcessPluginsMisspelledProgramIsNamed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/greet/plugin.toml", Self.manifest(kind: "process", extra: "command = [\"ennv\", \"p.py\"]"))
        let result = try await crescent(["plugin", "check", "plugins/greet"], in: sandbox, timeLimit: 60)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("cannot start 'ennv p.py': ennv is not an executable program on PATH; did you mean 'env'?"), "\(result)")
    }

    /// D17: in specs, a script's file name and a fake program's command line one letter off.
    @Test func specNearMissesAreNamed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.lua", "print('app')\n")
        try sandbox.write("spec/x_spec.lua", """
            it("script", function() script("ap.lua") end)
            it("fake", function()
              fake.process { ["git pull"] = { status = 0 } }
              services.process:run({ "git", "pul" }, function() end)
              clock.run()
            end)
            """)
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:1: script: cannot open ap.lua: No such file or directory; did you mean 'app.lua'?"),
                "\(result)")
        #expect(result.stdout.contains("no fake.process answer for git pul (answers: git pull; did you mean 'git pull'?)"), "\(result)")

        let format = try await crescent(["test", "--output", "jsn"], in: sandbox)
        #expect(format.status == 2, "\(format)")
        #expect(format.stderr.contains("--output jsn: crescent test writes plain, json, TAP; did you mean 'json'?"), "\(format)")
    }

    /// D17: `tbl:set(1, "nme", ...)` listed the columns without the closest.
    @Test func aTableCellsMisspelledColumnIsNamed() async throws {
        let result = try await runScript("""
            local t = view.table { id = "t", rows = { { name = "a" } } }
            print(select(2, pcall(t.set, t, 1, "nme", "x")))
            """, options: ["--ui", "plain"])
        #expect(result.stdout.contains("view.table.set: no column 'nme' (columns: name; did you mean 'name'?)"), "\(result)")
    }

    /// D24: a required argument after an optional one, one name twice, and a boolean given a
    /// word it does not take.
    @Test func commandArgumentsThatCannotWorkAreRefused() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { id = "t", text = "hi" } end
            function C:r(...) print("r", ...) end
            function C:viewDidLoad()
              print(select(2, pcall(function() self:command("r", "r", "x", { args = { "a: string?", "b: string" } }) end)))
              print(select(2, pcall(function() self:command("r", "r", "x", { args = { "a: string", "a: integer" } }) end)))
              self:command("b", "r", "x", { args = { "flag: boolean" } })
            end
            app.push(C)
            timer.after(0.1, function() app.send("b", "yes") end)
            timer.after(0.3, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.stdout.contains("script.lua:5: bad argument #4 to 'command' (options.args[2] 'b' is required but follows the optional "
                                       + "'a': words fill the arguments in order, so 'a' could never be left out; put optional arguments last)"),
                "\(result)")
        #expect(result.stdout.contains("script.lua:6: bad argument #4 to 'command' (options.args[2] names 'a' again, as options.args[1] does: "
                                       + "give each argument its own name)"), "\(result)")
        #expect(result.stderr.contains("script.lua:10: app.send: command 'b': argument #1 'flag' must be a boolean (true or false), got 'yes'"), "\(result)")
    }

    /// D18: `self.titel = ...` showed no title and said nothing; `self.title` and a field of
    /// another name say nothing.
    @Test func aMisspelledTitleIsWarned() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { id = "t", text = "hi" } end
            function C:viewDidLoad()
              self.titel = "Groceries"
              self.tile = { 1 }
              self.count = 1
            end
            local D = controller("D")
            function D:loadView() return view.text { id = "t", text = "hi" } end
            function D:viewDidLoad() self.title = "Fine" end
            app.push(C)
            app.push(D)
            timer.after(0.2, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("script.lua:4: C sets self.titel, which nothing reads: the title line shows self.title; "
                                       + "did you mean 'title'?"), "\(result)")
        #expect(result.stderr.components(separatedBy: "warning").count == 2, "\(result)")
    }

    /// D15: a popped controller's view updated later: the update vanished without a word.
    @Test func aDeallocatedControllersViewIsWarnedOnce() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { id = "t" } end
            local saved
            function C:viewDidLoad() saved = self end
            app.push(C)
            timer.after(0.1, function() app.pop() end)
            timer.after(0.2, function() saved.view.t:update { text = "late" }; saved.view.t:update { text = "later" } end)
            timer.after(0.3, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("script.lua:7: view.t of C, which was deallocated (popped or replaced): its view is shown no more, "
                                       + "so what changes it shows nothing"), "\(result)")
        #expect(result.stderr.components(separatedBy: "deallocated").count == 2, "\(result)")
    }

    /// D19: `--keep-running` in a run that pushed no controller did nothing, silently.
    @Test func keepRunningWithoutAControllerIsNoted() async throws {
        let result = try await crescent(["--keep-running", "-e", "print(1)"], stdin: "")
        #expect(result.status == 0 && result.stdout == "1\n", "\(result)")
        #expect(result.stderr.contains("--keep-running did nothing: it keeps the controllers running after the commands piped on stdin end, "
                                       + "and this run pushed no controller, so it read no commands; leave it out"), "\(result)")
        let plain = try await crescent(["-e", "print(1)"], stdin: "")
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain)")
    }

    /// D20, D16: the REPL wrote math.mininteger as digits Lua reads back as a float, and a
    /// misspelled global as a bare nil. On a terminal: piped input runs as a script.
    @Test func theReplWritesMinIntegerAndAMisspelledGlobalAsLuaReadsThem() async throws {
        let sandbox = try Sandbox()
        let repl = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--no-plugins"], directory: sandbox.path,
                                           environment: ["CRESCENT_HISTORY": sandbox.path + "/history"])
        await repl.waitFor("the first prompt") { $0.last == ">" }
        repl.type("{ i = math.mininteger, j = 1 }\r")
        await repl.waitFor(line: "{ i = math.mininteger, j = 1 }")
        repl.type("math.mininteger + 0\r")
        await repl.waitFor("math.mininteger alone") { $0.contains("math.mininteger") }
        repl.type("servies\r")
        await repl.waitFor(line: "nil  -- no global 'servies'; did you mean 'services'?")
        repl.type("print('reads back ' .. tostring(math.mininteger == load('return ' .. inspect(math.mininteger))()))\r")
        await repl.waitFor(line: "reads back true")
        repl.type("math.mininteger + 1\r")
        await repl.waitFor(line: "-9223372036854775807")
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
        #expect(!repl.screen.transcript.contains { $0.contains("-9223372036854775808") }, "\(repl.screen.transcript)")
    }

    /// D21: a project's `.luarc.json` naming Lua 5.1 was kept without a word.
    @Test func stubsWarnOfAnotherLuaVersion() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(".luarc.json", #"{ "runtime.version": "Lua 5.1" }"#)
        let result = try await crescent(["stubs", "--out", "types"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains(#"./.luarc.json keeps your "runtime.version": "Lua 5.1", but crescent runs Lua 5.4"#), "\(result)")
        let again = try await crescent(["stubs", "--out", "other"], in: try Sandbox())
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    /// D23: a repeating timer's callback returning false (GLib's way to stop a timeout) kept
    /// firing without a word; it is warned once, and a one-shot timer's value says nothing.
    @Test func aRepeatingTimersReturnedBooleanIsWarnedOnce() async throws {
        let result = try await runScript("""
            local n = 0
            timer.every(0.05, function(t) n = n + 1; if n == 3 then t:cancel(); print("fired", n) end; return false end)
            timer.after(0.01, function() return true end)
            """)
        #expect(result.status == 0 && result.stdout == "fired\t3\n", "\(result)")
        #expect(result.stderr == "crescent: warning: script.lua:2: the timer's callback returned false, and a callback's value is ignored, "
                + "so the timer goes on: stop it with t:cancel() (the timer is the callback's argument)\n", "\(result)")
    }

    /// A manifest for the plugin `greet` of `kind`, ending in `extra`.
    static func manifest(kind: String, extra: String) -> String {
        """
        name = "greet"
        version = "1.0.0"
        crescent = ">=0.1.0"
        description = "says hi"
        kind = "\(kind)"
        services = ["greet"]
        \(extra)

        """
    }
}
