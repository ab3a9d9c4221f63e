import Foundation
import Testing

/// `crescent attach` on a real terminal, against a running `groceries.lua`: the REPL's prompt with
/// chunks running in the host.
@Suite struct RemoteAttachTests {
    @Test func attachRunsChunksInTheHostAndDetachesWithControlD() async throws {
        let host = try await ListeningHost(script: RemoteControlTests.groceries, name: "groceries", options: ["--data-dir", "data"])
        let terminal = try InteractiveTerminal(["attach", "groceries"], directory: host.sandbox.path,
                                               environment: host.environment.merging(["CRESCENT_HISTORY": host.sandbox.path + "/history"]) { $1 })
        await terminal.waitFor(line: "Attached to groceries (pid \(host.pid)")
        // The view as it is now.
        await terminal.waitFor(line: "0 items")

        // A chunk runs in the host: its globals are the host's.
        terminal.type("#services.store:collection('groceries').items + 40\r")
        await terminal.waitFor("the value 40") { $0.contains("40") }

        // A command to the top controller: the render prints above the prompt.
        terminal.type(":add bread\r")
        await terminal.waitFor(line: "1 item")

        // Tab completes from the host's globals.
        terminal.type("servi\t")
        await terminal.waitFor(line: "> services")
        terminal.type("\u{15}")   // Ctrl-U clears the line

        // Ctrl-C interrupts a chunk that never ends; the prompt comes back.
        terminal.type("while true do end\r")
        try await Task.sleep(for: .milliseconds(300))
        terminal.type("\u{3}")
        await terminal.waitFor(line: "interrupted")

        // An error prints with its traceback; a chunk that goes on continues at `..`.
        terminal.type("for i = 1, 2 do\r")
        await terminal.waitFor(line: "..")
        terminal.type("print(i) end\r")
        terminal.type("error('nope')\r")
        await terminal.waitFor(line: "nope")

        // What the chunk starts prints here too: the host's output follows the client.
        terminal.type("timer.after(0.1, function() print('later, from a timer') end)\r")
        await terminal.waitFor(line: "later, from a timer")

        // Ctrl-D detaches; the host runs on.
        terminal.type("\u{4}")
        #expect(await terminal.finish() == 0)
        let after = try await host.crescentCommand(["eval", "groceries", "#services.store:collection('groceries').items"])
        #expect(after.stdout == "1\n", "\(after)")
        _ = await host.stop()
    }

    @Test func theReplListensAsReplThenRepl2() async throws {
        let sandbox = try Sandbox()
        let runtime = try sandbox.makeFolder("run")
        let environment: [String: String?] = ["XDG_RUNTIME_DIR": runtime, "CRESCENT_HISTORY": sandbox.path + "/history"]
        let first = try InteractiveTerminal(["--listen", "repl"], directory: sandbox.path, environment: environment)
        await first.waitFor(line: "Crescent")
        let second = try InteractiveTerminal(["--listen"], directory: sandbox.path, environment: environment)
        await second.waitFor(line: "Crescent")
        // A chunk sent to the first REPL's host sets a global its prompt sees.
        let sent = try await crescent(["eval", "repl", "shared = 6 * 7"], in: sandbox, environment: environment)
        #expect(sent.status == 0, "\(sent)")
        first.type("shared\r")
        await first.waitFor("42 at the first prompt") { $0.contains("42") }
        let listed = try await crescent(["ls"], in: sandbox, environment: environment)
        #expect(listed.stdoutLines.dropFirst().map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["repl", "repl-2"], "\(listed)")
        first.type("\u{4}")
        second.type("\u{4}")
        #expect(await first.finish() == 0)
        #expect(await second.finish() == 0)
    }
}
