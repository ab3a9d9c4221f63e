import Foundation
import Glibc
import Testing

/// The shipped controller scripts and controller behaviour of the binary: commands from stdin,
/// teardown on SIGINT.
@Suite struct ControllerScriptTests {
    /// The repository's `scripts/` folder.
    static let scripts = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts").path

    @Test func helloTakesCommandsFromStdin() async throws {
        let result = try await crescent(["\(Self.scripts)/hello.lua"], stdin: "greet Ada\nquit\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Hello, world!"), "\(result)")
        #expect(result.stdout.contains("Hello, Ada!"), "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }

    @Test func theContainerSwapsItsStatusChild() async throws {
        let result = try await crescent(["\(Self.scripts)/container.lua"], stdin: "state busy\nstate idle\nstate nope\nquit\n")
        #expect(result.status == 0, "\(result)")
        let renders = result.stdout.components(separatedBy: "\n\n").filter { $0.hasPrefix("Dashboard") }
        #expect(renders.first?.hasPrefix("Dashboard\nleft  0") == true, "both counters are shown: \(result)")
        #expect(renders.first?.contains("right  0") == true, "\(result)")
        #expect(renders.contains { $0.contains("working") }, "the busy child was shown: \(result)")
        #expect(renders.last?.hasSuffix("nothing to do") == true, "the idle child is back: \(result)")
        #expect(result.stdout.contains("state must be idle or busy"), "\(result)")
    }

    /// A list controller over a store collection: commands change the collection, the table
    /// follows its change sets, and the items are still there in the next run.
    @Test func groceriesKeepTheirItemsAndFollowChangeSets() async throws {
        let sandbox = try Sandbox()
        let data = try sandbox.makeFolder("data")
        let first = try await crescent(["--data-dir", data, "\(Self.scripts)/groceries.lua"], in: sandbox,
                                       stdin: "add milk\nadd \"oat milk\" 2\nadd bread\nremove 1\nquit\n")
        #expect(first.status == 0, "\(first)")
        // The title is the terminal's title line; a printed view does not repeat it.
        let renders = first.stdout.components(separatedBy: "\n\n").filter { $0.hasPrefix("  item") }
        #expect(renders.last == """
              item      qty
              ────────  ───
            > oat milk    2
              bread       1
            2 items
            """, "the selection marks the first row: \(first)")
        let second = try await crescent(["--data-dir", data, "\(Self.scripts)/groceries.lua"], in: sandbox, stdin: "quit\n")
        #expect(second.stdout.contains("> oat milk    2\n  bread       1\n2 items"), "\(second)")
    }

    @Test func releasesKeepsTwoListsInStep() async throws {
        let sandbox = try Sandbox()
        let data = try sandbox.makeFolder("data")
        let result = try await crescent(
            ["--data-dir", data, "\(Self.scripts)/releases.lua"], in: sandbox,
            stdin: "add demand \"faster startup\"\nadd service store\nadd demand docs\ndone demand 1\nremove demand 2\nadd nothing x\nquit\n")
        #expect(result.status == 0, "\(result)")
        let renders = result.stdout.components(separatedBy: "\n\n").filter { $0.hasPrefix("Releases") }
        #expect(renders.last == """
            Releases
            Demands                                  Services
            title           done                     title  done
            ──────────────  ────                     ─────  ─────
            faster startup  true                     store  false
            """, "\(result)")
        #expect(result.stdout.contains("say demand or service, got nothing"), "\(result)")
    }

    /// A second process adding to the same store shows up in the first within a second.
    @Test func releasesShowsWhatAnotherProcessAdds() async throws {
        let sandbox = try Sandbox()
        let data = try sandbox.makeFolder("data")
        // Generous limits: on a loaded machine the other process alone can take seconds to start.
        let watcher = CrescentProcess(["--keep-running", "--timeout", "15", "--data-dir", data, "\(Self.scripts)/releases.lua"], directory: sandbox.path)
        try watcher.start()
        #expect(await watcher.waitForOutput("Releases", within: 10), "\(watcher.stderr)")
        let adder = try await crescent(["--data-dir", data, "\(Self.scripts)/releases.lua"], in: sandbox,
                                       stdin: "add service \"from elsewhere\"\nquit\n")
        #expect(adder.status == 0, "\(adder)")
        #expect(await watcher.waitForOutput("from elsewhere", within: 10), "the watcher saw the other process's add: \(watcher.stdout)")
        watcher.send(SIGTERM, expecting: .handled)
        _ = await watcher.finish()
    }

    @Test func loginFollowsCurrentUser() async throws {
        let sandbox = try Sandbox()
        let data = try sandbox.makeFolder("data")
        try sandbox.write("crescent.toml", "[session]\nkdf_rounds = 1000\nfailure_delay = 0.01\n")
        let result = try await crescent(
            ["--data-dir", data, "\(Self.scripts)/login.lua"], in: sandbox,
            stdin: "register ada s3cret-pass\nlogin ada wrong-password\nlogin ada s3cret-pass\nlogout\nquit\n")
        #expect(result.status == 0, "\(result)")
        let renders = result.stdout.components(separatedBy: "\n\n").filter { $0.hasPrefix("Session") }
        #expect(renders.contains { $0.contains("registered ada") }, "\(result)")
        #expect(renders.contains { $0.contains("session.login: permission:") }, "\(result)")
        #expect(renders.contains { $0.contains("user   ada") && $0.contains("welcome") }, "\(result)")
        #expect(renders.last?.contains("user  nobody") == true && renders.last?.contains("bye") == true, "\(result)")
    }

    @Test func anUnknownCommandListsTheCommandsAndTheRunGoesOn() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:viewDidLoad() self:command("ping", "ping", "answer pong") end
            function C:ping() print("pong") end
            app.push(C)
            """, stdinText: "bogus\nping\nquit\n")
        // The run goes on to `ping`, and exits 1 for the command it refused (as `crescent send`).
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "pong\n", "\(result)")
        #expect(result.stderr.contains("unknown command 'bogus'; commands of C:"), "\(result)")
        #expect(result.stderr.contains("ping  answer pong"), "\(result)")
    }

    @Test func sigintTearsDownEveryVisibleController() async throws {
        let sandbox = try Sandbox()
        let process = try startScript("""
            local function traced(name)
              local class = controller(name)
              for _, m in ipairs({ "viewWillDisappear", "viewDidDisappear", "dealloc" }) do
                class[m] = function() print(name .. ":" .. m) io.stdout:flush() end
              end
              return class
            end
            local Parent, Child = traced("Parent"), traced("Child")
            function Parent:viewDidLoad() self:addChild(Child) end
            function Parent:viewDidAppear() print("ready") io.stdout:flush() end
            app.push(Parent)
            """, options: ["--keep-running"], in: sandbox)
        let ready = await process.waitForOutput("ready\n", within: 10)
        #expect(ready, "\(process.stderr)")
        process.send(SIGINT, expecting: .handled)
        let result = await process.finish()
        #expect(result.status == 130, "\(result)")
        #expect(result.stdoutLines == [
            "ready", "Parent:viewWillDisappear", "Child:viewWillDisappear", "Child:viewDidDisappear",
            "Parent:viewDidDisappear", "Child:dealloc", "Parent:dealloc",
        ], "\(result)")
    }
}

/// Runs `source` as `script.lua` with `stdinText` on standard input.
func runScript(_ source: String, stdinText: String, options: [String] = []) async throws -> RunResult {
    let sandbox = try Sandbox()
    try sandbox.write("script.lua", source)
    return try await crescent(options + ["script.lua"], in: sandbox, stdin: stdinText)
}
