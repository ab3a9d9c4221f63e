import CLua
import LuaBridge
import Glibc
import Testing

@Suite struct LuaErrorTests {
    struct Refused: Error, CustomStringConvertible {
        var description: String { "refused by Swift" }
    }

    @Test func swiftErrorsBecomeLuaErrorsThatPcallCatches() throws {
        let vm = try LuaVM()
        vm.register("fail") { _ in throw Refused() }
        vm.register("failArgument") { stack in
            _ = try stack.checkInteger(1, function: "failArgument")
            return .none
        }
        let results = try evaluate(vm, """
            local ok1, e1 = pcall(fail)
            local ok2, e2 = pcall(failArgument, "x")
            local ok3, e3 = pcall(failArgument, 1.5)
            return ok1, e1, ok2, e2, ok3, e3
            """)
        #expect(results[0] == false && results[2] == false && results[4] == false)
        #expect(results[1] == "refused by Swift")
        #expect(results[3] == "bad argument #1 to 'failArgument' (number expected, got string)")
        #expect(results[5] == "bad argument #1 to 'failArgument' (number has no integer representation)")
    }

    @Test func raisedMessagesCarryTheCallersPosition() throws {
        let vm = try LuaVM()
        vm.register("fail") { _ in throw LuaRaise("nope") }
        let message = try evaluateOne(vm, "local ok, e = pcall(function()\n fail()\n end) return e")
        #expect(message == "test:2: nope")
    }

    @Test func luaErrorsInCallbacksComeBackWithATraceback() throws {
        let vm = try LuaVM()
        guard case .reference(let callback) = try evaluateOne(vm, """
            local function inner(x) error("bad value " .. x) end
            return function(x) inner(x) end
            """) else {
            Issue.record("no function")
            return
        }
        do {
            _ = try vm.call(callback, 7)
            Issue.record("the call should have failed")
        } catch {
            #expect(error.kind == .runtime)
            #expect(error.message.hasPrefix("test:1: bad value 7"))
            #expect(error.message.contains("stack traceback:"))
            #expect(error.message.contains("in local 'inner'") || error.message.contains("in upvalue 'inner'"))
        }
        #expect(vm.stack.top == 0)
    }

    @Test func syntaxErrorsNameTheLine() throws {
        let vm = try LuaVM()
        do {
            try vm.load(Array("local x = 1\nlocal = 2".utf8), name: "@bad.lua")
            Issue.record("should not compile")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.message.hasPrefix("bad.lua:2:"))
        }
    }

    @Test func protectedHelpersNeverRaise() throws {
        let vm = try LuaVM()
        _ = try evaluate(vm, """
            hostile = setmetatable({}, {
              __index = function() error("index refused") end,
              __tostring = function() error("tostring refused") end,
            })
            """)
        vm.getGlobal("hostile")
        #expect(vm.stack.describe(at: -1) == "<table: error in __tostring>")
        #expect(throws: LuaError.self) { try vm.stack.getField(-1, "anything") }
        vm.stack.pop()
        #expect(vm.stack.top == 0)
    }

    @Test func theMemoryLimitIsACleanError() throws {
        let vm = try LuaVM(memoryLimit: 8 << 20)
        do {
            try vm.run("local t = {} for i = 1, 1e8 do t[i] = tostring(i) .. 'padding' end", name: "=hog")
            Issue.record("the limit was not enforced")
        } catch {
            #expect(error.kind == .memory)
            #expect(error.message.contains("memory limit of 8 MiB"))
        }
        // The VM is still usable once the garbage is gone.
        #expect(try evaluateOne(vm, "collectgarbage() return 1 + 1") == 2)
    }

    @Test func aLimitCrossedWhileSwiftRunsIsRaisedAfterSwiftReturns() throws {
        let vm = try LuaVM(memoryLimit: 4 << 20)
        vm.register("bigString") { stack in
            stack.push(String(repeating: "x", count: 8 << 20))
            return .one
        }
        let results = try evaluate(vm, "local ok, e = pcall(bigString) return ok, e")
        #expect(results.first == false)
        // Raised where the Lua code called, naming its line and the limit.
        guard case .string(let message)? = results.last else { Issue.record("no message: \(results)"); return }
        #expect(message.description.hasSuffix(":1: not enough memory: the memory limit of 4 MiB was reached (raise it with --memory-limit)"),
                "\(message)")
        #expect(try evaluateOne(vm, "collectgarbage() return 'alive'") == "alive")
    }

    @Test func interruptsStopRunawayCodeFromAnotherThread() throws {
        let vm = try LuaVM()
        let interrupter = vm.interrupter
        let thread = Thread { usleep(100_000); interrupter.interrupt(status: 130) }
        thread.start()
        do {
            try vm.run("while true do end", name: "=spin")
            Issue.record("not interrupted")
        } catch {
            #expect(error.kind == .interrupted)
        }
        // A pcall inside the script cannot swallow the interrupt for good.
        vm.clearInterrupt()
        #expect(try evaluateOne(vm, "return 'runs again'") == "runs again")
    }

    /// A script that sets or clears its own hook in a loop (as a profiler or a sandbox does)
    /// cannot remove the hook that raises a pending interrupt; its own hook is its own again after.
    @Test func interruptsSurviveTheScriptsOwnSethook() throws {
        let vm = try LuaVM()
        let loops = [
            "for i = 1, 20000000 do debug.sethook() end return 'shed'",
            "for i = 1, 20000000 do debug.sethook(function() end, '', 100) end return 'shed'",
            "local co = coroutine.running() for i = 1, 20000000 do debug.sethook(co) end return 'shed'",
        ]
        for loop in loops {
            let interrupter = vm.interrupter
            let thread = Thread { usleep(50_000); interrupter.interruptForTimeout() }
            thread.start()
            do {
                let result = try evaluateOne(vm, loop)
                Issue.record("not interrupted: \(String(describing: result)) from \(loop)")
            } catch {
                #expect((error as? LuaError)?.kind == .timeout, "\(loop): \(error)")
            }
            vm.clearInterrupt()
        }
        #expect(try evaluateOne(vm, "debug.sethook(function() end, 'r') local h = debug.gethook() debug.sethook() return type(h)") == "function")
        #expect(try evaluateOne(vm, "return debug.gethook()") == .nil)
        #expect(throws: LuaError.self) { try vm.run("debug.sethook(function() end)", name: "=bad") }
    }

    /// Lua runs no hook inside a hook, so a script's hook function that loops could not be
    /// stopped by the interrupt hook: it runs where an interrupt reaches it.
    @Test func aLoopingHookFunctionIsInterrupted() throws {
        let vm = try LuaVM()
        for mask in ["l", "c"] {
            let interrupter = vm.interrupter
            let thread = Thread { usleep(50_000); interrupter.interruptForTimeout() }
            thread.start()
            do {
                let result = try evaluateOne(vm, "local function f() return 1 end\ndebug.sethook(function() while true do end end, '\(mask)')\nlocal x = f()\nreturn x")
                Issue.record("not interrupted: \(String(describing: result)) (mask \(mask))")
            } catch {
                #expect((error as? LuaError)?.kind == .timeout, "mask \(mask): \(error)")
            }
            vm.clearInterrupt()
            crescent_drop_hook(vm.state)   // a Lua chunk would fire the hook first
        }
        #expect(try evaluateOne(vm, "return 'runs again'") == "runs again")
    }

    /// Pattern matching is C that runs no hook: a pattern that backtracks for hours stops on an
    /// interrupt all the same, in each of the four functions that match.
    @Test func aPathologicalPatternIsInterrupted() throws {
        let vm = try LuaVM()
        let calls = [
            "return string.find(s, p)", "return s:match(p)", "for _ in s:gmatch(p) do end", "return s:gsub(p, 'x')",
        ]
        for call in calls {
            let interrupter = vm.interrupter
            let thread = Thread { usleep(100_000); interrupter.interruptForTimeout() }
            thread.start()
            let started = ContinuousClock.now
            do {
                let result = try evaluateOne(vm, "local s, p = ('a'):rep(40), ('a*'):rep(40) .. 'b' \(call)")
                Issue.record("not interrupted: \(String(describing: result)) from \(call)")
            } catch {
                #expect((error as? LuaError)?.kind == .timeout, "\(call): \(error)")
            }
            #expect(ContinuousClock.now - started < .seconds(5), "\(call)")
            vm.clearInterrupt()
        }
        // The functions still match as Lua's do.
        #expect(try evaluateOne(vm, "return ('hello world'):gsub('o', '0')") == "hell0 w0rld")
        #expect(try evaluateOne(vm, "return select(2, ('key = value'):find('(%w+)%s*=%s*(%w+)'))") == 11)
        #expect(try evaluateOne(vm, "local t = {} for k, v in ('a=1, b=2'):gmatch('(%w+)=(%w+)') do t[#t + 1] = k .. v end return table.concat(t, ',')") == "a1,b2")
        #expect(throws: LuaError.self) { try vm.run("return ('x'):find('[')", name: "=bad") }
    }

    /// Inside the hook, as under lua5.4: level 2 is the function the hook fired in, errors of
    /// the hook are errors of that code, gethook gives the script's function back.
    @Test func aHookSeesWhatItHookedAsUnderLua() throws {
        let vm = try LuaVM()
        // The same chunk gives "line:4:4 line:5:5 true" under lua5.4.
        let seen = try evaluateOne(vm, """
            local lines = {}
            local hooked
            hooked = function()
              local a = 1
              return a
            end
            local function hook(event, line)
              local info = debug.getinfo(2, "fl")
              if info and info.func == hooked then lines[#lines + 1] = event .. ":" .. line .. ":" .. info.currentline end
            end
            debug.sethook(hook, "l")
            hooked()
            local same = debug.gethook() == hook
            debug.sethook()
            return table.concat(lines, " ") .. " " .. tostring(same)
            """)
        #expect(seen == .string("line:4:4 line:5:5 true"), "\(String(describing: seen))")
        #expect(try evaluateOne(vm, "local f = function() end debug.sethook(f, 'l') local same = debug.gethook() == f debug.sethook() return same") == true)
        #expect(throws: LuaError.self) {
            try vm.run("debug.sethook(function() error('from the hook') end, 'l')\nlocal x = 1", name: "=raise")
        }
        crescent_drop_hook(vm.state)   // a Lua chunk would fire the hook first
        // The hook's coroutine is made again after an error ended it.
        #expect(try evaluateOne(vm, "local n = 0 debug.sethook(function() n = n + 1 end, 'l')\nlocal x = 1\nx = 2\ndebug.sethook() return n > 0") == true)
    }
}

/// A minimal thread for tests that must act from off the VM's thread.
final class Thread: Sendable {
    private let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    func start() {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        pthread_create(&thread, nil, { context in
            // Invariant: context is the retained box passed just above.
            let me = Unmanaged<Thread>.fromOpaque(context!).takeRetainedValue()
            me.body()
            return nil
        }, box.toOpaque())
        pthread_detach(thread)
    }
}
