@testable import CrescentKit
import LuaBridge
import Testing

/// The controller prelude loads when a run first uses it (Prelude/controllers_firstuse.lua), not
/// with the host: until then `controller`, `help` and `app`'s fields are stand-ins that load it,
/// and from then on everything is as if it had loaded at start.
struct ControllersFirstUseTests {
    /// Whether the controllers have loaded: their hooks' table is filled then. Only while the
    /// host runs (a finished host has closed its VM).
    static func loaded(_ host: Host) -> Bool {
        guard let hooks = host.controllerHooks else { return false }
        let stack = host.vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        hooks.push(onto: stack)
        return stack.rawGet(-1, "errorText") == .function
    }

    /// A run that makes no controller never loads them, though it reads `app.args` (a plain
    /// value); the host's own first use does.
    @Test func aRunWithoutControllersNeverLoadsThem() throws {
        let test = try TestHost(arguments: ["one"])
        test.run("print(type(controller), type(app), rawget(app, 'push'), app.args[1], debug.getinfo(controller, 'S').source)")
        #expect(test.lines == ["function\ttable\tnil\tone\t=[crescent controllers_firstuse]"])
        #expect(test.stderr == "")
        let asked = try TestHost()
        #expect(!Self.loaded(asked.host))
        #expect(asked.host.commandNames() == [])
        #expect(Self.loaded(asked.host))
        asked.run("print(type(rawget(app, 'push')), debug.getinfo(controller, 'S').source)")
        #expect(asked.lines == ["function\t=[crescent controllers]"])
        #expect(asked.stderr == "")
    }

    /// Whichever way a script first touches them (making a class, reading or writing a field of
    /// `app`, iterating it, asking help), the controllers are loaded; a stand-in taken before
    /// reaches theirs; in a task or a coroutine too.
    @Test(arguments: [
        "local C = controller('First')",
        "local push = app.push",
        "local top = app.top",
        "app.mine = 1",
        "for _ in pairs(app) do end",
        "help(app.exit)",
        "local text; task(function() text = tostring(controller('First')) end); assert(text == 'controller First', text)",
        "coroutine.wrap(function() local C = controller('First') end)()",
    ])
    func controllersLoadOnFirstUseWhicheverWayTheyAreTouched(firstTouch: String) throws {
        let test = try TestHost()
        test.run("""
            local loadedAtStart = rawget(app, "push") ~= nil
            local standIn = controller
            \(firstTouch)
            assert(type(rawget(app, "push")) == "function", "app's functions are its own fields now")
            assert(controller ~= standIn and debug.getinfo(controller, "S").source == "=[crescent controllers]")
            local ok, message = pcall(function() app.args = {} end)
            assert(not ok and message:find("cannot set 'app.args'", 1, true), message)
            assert(type(app.args) == "table")
            local Main = standIn("Main")
            app.push(Main)
            print(loadedAtStart, tostring(Main))
            """)
        #expect(test.stderr == "")
        #expect(test.lines.last == "false\tcontroller Main")
    }

    /// Before the controllers load, the stand-ins word mistakes as the controllers do, at the
    /// script's line: a table raised with error(), a misspelled `app` function, a write to
    /// `app.args`, a bad class name.
    @Test(arguments: [
        ("error({ code = 1 })", "test.lua:1: { code = 1 }"),
        ("app.pushh(1)", "test.lua:1: no function 'app.pushh' (app: args, commandLine, exit, open, pop, press, push, replace, route, send, "
            + "stack, top; did you mean 'push'?)"),
        ("app.args = 1", "test.lua:1: cannot set 'app.args'"),
        ("controller(5)", "test.lua:1: bad argument #1 to 'controller' (name must be a non-empty string)"),
        ("help(1, 2)", "test.lua:1: help([topic]): argument #2 is one too many (it takes a topic (optional))"),
    ])
    func mistakesBeforeTheControllersLoadAreWordedAsTheirs(script: String, message: String) throws {
        let test = try TestHost()
        test.run(script)
        #expect(test.stderr.contains(message), "\(test.stderr)")
    }

    /// A script's own `controller` or `help`, set before the controllers load, stays.
    @Test func aGlobalTheScriptReplacedStaysItsOwn() throws {
        let test = try TestHost()
        test.run("""
            controller = "mine"
            app.mine = 1
            print(controller, type(rawget(app, "push")))
            """)
        #expect(test.lines == ["mine\tfunction"])
        #expect(test.stderr == "")
    }

    /// Globals a script set before its first controller (`task`, `print`, `help`) do not reach
    /// the controllers, which take the ones of the start, as when they loaded with the host.
    @Test func theControllersTakeTheGlobalsOfTheStart() throws {
        let test = try TestHost()
        test.run("""
            local say = print
            task, timer, help, inspect = "buy milk", 5, nil, nil
            local C = controller("C")
            function C:viewDidLoad()
              self:task(function() say("in a task") end)
              self:every(1, function() end)
            end
            app.push(C)
            say(type(task), type(help))
            """)
        test.settle()
        #expect(test.stderr == "")
        #expect(test.lines == ["in a task", "string\tnil"])
    }
}
