import Foundation
import Testing

/// Issue 39's attack new28m, D23: a handler's `true` or `false` (GLib's `return false` stops a
/// timeout, a Neovim autocmd's `return true` deletes it) was ignored without a word, and the
/// handler went on being called. Each kind of handler a script registers says so once, at the
/// line that made it, with what stops it; `nil`, other values, a one-shot and a handler that
/// cancelled itself say nothing. Each test runs a script through the `crescent` binary.
@Suite struct HardeningHandlerReturnTests {
    /// The warning for an `on` handler (`on(name)`, `obj:on(event)`) made at `site`.
    static func onWarning(_ site: String, _ target: String, returned value: Bool) -> String {
        "crescent: warning: \(site): the on \(target) handler returned \(value), and a handler's value is ignored, so the subscription "
            + "goes on: stop it with sub:cancel() (sub is what on returned, and info.sub inside the handler), or pass { once = true } "
            + "to on for a single delivery\n"
    }

    /// Adds two records to `things`, a turn apart, then cancels `sub`.
    static let addTwoThenCancel = """
        task(function()
          things:add({ name = "a" })
          sleep(0.05)
          things:add({ name = "b" })
          sleep(0.05)
          sub:cancel()
        end)
        """

    @Test func anOnHandlerReturningTrueIsWarnedOnce() async throws {
        let result = try await runScript("""
            local n = 0
            local sub = on("refreshed", function(payload, info)
              n = n + 1
              return true
            end)
            post("refreshed", 1)
            post("refreshed", 2)
            timer.after(0.05, function() print("deliveries", n); sub:cancel() end)
            """)
        #expect(result.status == 0 && result.stdout == "deliveries\t2\n", "\(result)")
        #expect(result.stderr == Self.onWarning("script.lua:2", "refreshed", returned: true), "\(result)")
    }

    @Test func anObserveHandlerReturningFalseIsWarnedOnce() async throws {
        let result = try await runScript("""
            local things = services.store:collection("things")
            local sub = observe(things, "count", function(new) print("count", new); return false end)
            \(Self.addTwoThenCancel)
            """, options: ["--data-dir", "data"])
        #expect(result.status == 0 && result.stdout == "count\t0\ncount\t1\ncount\t2\n", "\(result)")
        #expect(result.stderr == "crescent: warning: script.lua:2: the collection.count handler returned false, and a handler's value is "
                + "ignored, so the subscription goes on: stop it with sub:cancel() (sub is what observe returned, and change.sub inside "
                + "the handler), or pass { once = true } to observe for a single delivery\n", "\(result)")
    }

    @Test func aCollectionsDidChangeHandlerReturningFalseIsWarnedOnce() async throws {
        let result = try await runScript("""
            local things = services.store:collection("things")
            local sub = things:on("didChange", function(change) print("inserted", change.inserted[1]); return false end)
            \(Self.addTwoThenCancel)
            """, options: ["--data-dir", "data"])
        #expect(result.status == 0 && result.stdout == "inserted\t1\ninserted\t2\n", "\(result)")
        #expect(result.stderr == Self.onWarning("script.lua:2", "collection.didChange", returned: false), "\(result)")
    }

    @Test func aFileWatchsDidChangeHandlerReturningFalseIsWarnedOnce() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("watched/keep.txt", "")
        try sandbox.write("script.lua", """
            local n = 0
            task(function()
              local watcher = services.files:watch("watched", { debounce = 0 })
              watcher:on("didChange", function(change) n = n + 1; return false end)
              for round = 1, 2 do
                services.files:write("watched/" .. round .. ".txt", "x")
                local seen = n
                for _ = 1, 200 do
                  if n > seen then break end
                  sleep(0.02)
                end
              end
              watcher:cancel()
              print("deliveries", n >= 2)
            end)
            """)
        let result = try await crescent(["script.lua"], in: sandbox)
        #expect(result.status == 0 && result.stdout == "deliveries\ttrue\n", "\(result)")
        #expect(result.stderr == Self.onWarning("script.lua:4", "fileWatcher.didChange", returned: false), "\(result)")
    }

    @Test func aProcesssDidOutputHandlerReturningTrueIsWarnedOnce() async throws {
        let result = try await runScript("""
            local child = services.process:spawn({ "sh", "-c", "echo a; echo b" })
            child:on("didOutput", function(output) print("line", output.line); return true end)
            child:on("didExit", function(exit) print("status", exit.status) end)
            """)
        #expect(result.status == 0 && result.stdout == "line\ta\nline\tb\nstatus\t0\n", "\(result)")
        #expect(result.stderr == Self.onWarning("script.lua:2", "childProcess.didOutput", returned: true), "\(result)")
    }

    /// A service's event through `svc:on`, and an observer's method (`addObserver`), which is
    /// stopped with `removeObserver`.
    @Test func aServicesEventHandlerAndAnObserversMethodAreWarnedOnce() async throws {
        let result = try await runScript("""
            local location = services.location
            local sub = location:on("didUpdateLocations", function(payload) print("fix"); return true end)
            location:addObserver({ didUpdateLocations = function(self, payload) return false end })
            location:start()
            timer.after(0.2, function() location:stop(); sub:cancel() end)
            """, options: ["--location", "fixed:48.85,2.35"])
        #expect(result.status == 0 && result.stdout.hasPrefix("fix\n"), "\(result)")
        #expect(result.stderr == Self.onWarning("script.lua:2", "location.didUpdateLocations", returned: true)
                + "crescent: warning: script.lua:3: the observer's method didUpdateLocations returned false, and a method's value is "
                + "ignored, so the observer stays: stop it with services.location:removeObserver(observer)\n", "\(result)")
    }

    /// A correct script prints nothing extra: `nil`, a number, a string or a table returned, a
    /// one-shot handler's `true`, a handler that cancelled itself before returning `false`, and a
    /// controller's method named as its handler (a method, whose value its other callers may use).
    @Test func otherValuesOneShotsAndCancelledHandlersSayNothing() async throws {
        let result = try await runScript("""
            local n = 0
            on("x", function() n = n + 1 end)
            on("x", function() return nil end)
            on("x", function() return 1 end)
            on("x", function() return "yes" end)
            on("x", function() return true end, { once = true })
            local own; own = on("x", function() own:cancel(); return false end)
            local things = services.store:collection("things")
            local count = observe(things, "count", function() return {} end)
            local C = controller("C")
            function C:loadView() return view.text { text = "shown" } end
            function C:viewDidLoad() self:on("x", "changed") end
            function C:changed() return true end
            app.push(C)
            post("x", 1)
            post("x", 2)
            timer.after(0.05, function() print("deliveries", n); count:cancel(); app.exit(0) end)
            """, options: ["--data-dir", "data", "--ui", "plain"])
        #expect(result.status == 0 && result.stdout.hasSuffix("deliveries\t2\n"), "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }
}
