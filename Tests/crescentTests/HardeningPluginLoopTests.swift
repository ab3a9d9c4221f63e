import Foundation
import Testing

/// A Lua plugin's code that loops where hooks used to be off — an `xpcall` message handler, a
/// `__gc` finalizer — or in fresh coroutines is stopped by `call_timeout` in a method, in `main`
/// and in a timer (issue 32, closing attack D4); the plugin fails with a clear message, and the
/// host and the other plugins go on. A `__gc` finalizer is refused at `setmetatable` in plugins
/// since (attack new24p D2: one stored after `setmetatable` could not be stopped): the "gc" case
/// raises that refusal where the plugin sets it.
@Suite struct HardeningPluginLoopTests {
    static let loops = [
        "xp": "xpcall(function() error('x') end, function() while true do end end)",
        "gc": "setmetatable({}, {__gc = function() while true do end end}) collectgarbage()",
        "co": "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
    ]

    static let refusal = "setmetatable: a metatable with __gc is not available in plugin 'spin'"

    @Test func aMethodThatLoopsInAHandlerOrAFinalizerAnswersTimeout() async throws {
        var methods = ""
        for (name, code) in Self.loops.sorted(by: { $0.key < $1.key }) {
            methods += "spin:method('\(name)', {}, 'string', 'd', function() \(code) return 'done' end)\n"
        }
        let sandbox = try luaPluginSandbox("spin", main: """
            spin = service("spin", "x")
            \(methods)
            spin:method("ok", {}, "string", "d", function() return "ok" end)
            """)
        _ = try luaPluginSandbox("other", main: """
            local other = service("other", "x")
            other:method("ping", {}, "string", "d", function() return "pong" end)
            """, in: sandbox)
        try sandbox.write("crescent.toml", "[plugins]\ncall_timeout = 1\n")
        let started = Date()
        let run = try await crescent(["-e", """
            task(function()
              for _, name in ipairs({ "co", "gc", "xp" }) do
                local value, err = services.spin[name](services.spin)
                print(name, value, err and err.code, err and err.message)
                print("next", (services.spin:ok()))
              end
              print("other", (services.other:ping()))
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(run.status == 0, "\(run)")
        for name in ["co", "xp"] {
            #expect(run.stdoutLines.contains("\(name)\tnil\ttimeout\tplugin 'spin': spin.\(name) did not answer within 1 s ([plugins] call_timeout)"), "\(run)")
        }
        #expect(run.stdoutLines.contains { $0.hasPrefix("gc\tnil\t") && $0.contains(Self.refusal) }, "\(run)")
        #expect(run.stdoutLines.filter { $0 == "next\tok" }.count == 3, "\(run)")
        #expect(run.stdoutLines.last == "other\tpong", "\(run)")
        #expect(Date().timeIntervalSince(started) < 30)
    }

    /// A finalizer left to run when the plugin's VM closes at the end of the run (the second
    /// permissions attack's D1: the run never ended) cannot be armed: refused at setmetatable,
    /// and the run ends.
    @Test func aFinalizerThatLoopsWhenTheRunEndsIsStopped() async throws {
        let sandbox = try luaPluginSandbox("spin", main: """
            spin = service("spin", "x")
            spin:method("arm", {}, "string", "d", function()
              setmetatable({}, {__gc = function() while true do end end})
              return "armed"
            end)
            """)
        let started = Date()
        let run = try await crescent(["-e", "task(function() print(services.spin:arm()) end)"], in: sandbox, timeLimit: 60)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines.count == 1 && run.stdoutLines[0].hasPrefix("nil\t") && run.stdoutLines[0].contains(Self.refusal), "\(run)")
        #expect(Date().timeIntervalSince(started) < 20, "the run ended")
    }

    @Test func aMainThatLoopsInAHandlerOrAFinalizerIsStopped() async throws {
        for (name, code) in Self.loops.sorted(by: { $0.key < $1.key }) {
            let sandbox = try luaPluginSandbox("spin", main: "service('spin', 'x')\n\(code)\n")
            _ = try luaPluginSandbox("other", main: """
                local other = service("other", "x")
                other:method("ping", {}, "string", "d", function() return "pong" end)
                """, in: sandbox)
            try sandbox.write("crescent.toml", "[plugins]\ncall_timeout = 0.5\n")
            let run = try await crescent(["-e", """
                local ticks = 0
                timer.every(0.05, function(t) ticks = ticks + 1 if ticks == 3 then t:cancel() end end)
                print(pcall(function() return services.spin end))
                task(function() print("other", (services.other:ping())) end)
                """], in: sandbox, timeLimit: 30)
            #expect(run.status == 0, "\(name): \(run)")
            #expect(run.stdoutLines.first?.hasPrefix("false") == true, "\(name): \(run)")
            #expect(run.stdoutLines.last == "other\tpong", "\(name): \(run)")
            #expect(run.stderr.contains(name == "gc" ? Self.refusal : "plugins/spin/main.lua: main did not return within 0.5 s ([plugins] call_timeout)"), "\(name): \(run)")
        }
    }

    @Test func aTimerThatLoopsInAHandlerOrAFinalizerStopsThePlugin() async throws {
        for (name, code) in Self.loops.sorted(by: { $0.key < $1.key }) {
            let sandbox = try luaPluginSandbox("spin", main: """
                local spin = service("spin", "x")
                spin:method("ping", {}, "string", "Answers pong.", function() return "pong" end)
                timer.after(0.2, function() \(code) end)
                """)
            try sandbox.write("crescent.toml", "[plugins]\ncall_timeout = 0.5\n")
            let run = try await crescent(["-e", """
                local ticks = 0
                local ticker = timer.every(0.1, function() ticks = ticks + 1 end)
                task(function()
                  print("first", (services.spin:ping()))
                  sleep(2)
                  local _, err = services.spin:ping()
                  print("later", err and err.code, ticks > 10)
                  ticker:cancel()
                end)
                """], in: sandbox, timeLimit: 30)
            #expect(run.stdoutLines.first == "first\tpong", "\(name): \(run)")
            // The refused finalizer is an error of the callback: the plugin runs on.
            #expect(run.stdoutLines.last == (name == "gc" ? "later\tnil\ttrue" : "later\tunavailable\ttrue"), "\(name): \(run)")
            #expect(run.stderr.contains(name == "gc" ? Self.refusal : "plugin 'spin' stopped: its timer callback ran past the time limit of 0.5 s"), "\(name): \(run)")
        }
    }
}
