import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A client that stops reading never slows the host or grows its memory: renders and
/// observations drop to the latest, events past the bound disconnect the client.
@Suite struct RemoteBackPressureTests {
    static let counter = """
        local Counter = controller("Counter")
        function Counter:loadView() return view.stack { view.text { id = "n", text = "0" } } end
        function Counter:viewDidLoad() self:command("go", "go", "10,000 updates") end
        function Counter:go(label)
          for i = 1, 10000 do
            self.view.n.text = ("update %d %s"):format(i, string.rep("x", 200))
            post("tick", { i = i, pad = string.rep("y", 200) })
            coroutine.yield()   -- a turn per update: a render per update
          end
          print("done " .. label)
        end
        app.push(Counter)
        """

    @Test func aClientThatStopsReadingDoesNotSlowTheHost() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("counter.lua", Self.counter)
        let host = try await ListeningHost(script: "counter.lua", name: "counter", options: ["--ui", "json"], sandbox: sandbox)
        let control = try host.client()

        // Alone, as a baseline.
        var started = Date()
        _ = control.call("send", ["command": "go", "args": ["alone"]])
        #expect(await host.process.waitForOutput("done alone", within: 120))
        let alone = Date().timeIntervalSince(started)
        let memoryAlone = host.memory("VmRSS")

        // A watcher that stops reading: it asks for every render and event, then never reads.
        let stalled = try host.client()
        stalled.request("view", ["watch": true, "format": "json"])
        stalled.request("on", ["event": "tick"])
        let watching = try host.client()
        #expect(watching.call("view", ["watch": true]) != nil)
        started = Date()
        _ = control.call("send", ["command": "go", "args": ["stalled"]])
        #expect(await host.process.waitForOutput("done stalled", within: 120))
        let withStalled = Date().timeIntervalSince(started)
        let memoryStalled = host.memory("VmRSS")

        // The pace is the host's own (generous bound: the machine is shared and loaded).
        #expect(withStalled < alone * 3 + 5, "alone \(alone) s, with a stalled client \(withStalled) s")
        // Memory stays within a bound (the outbox holds at most the latest render and 1,000 events).
        #expect(memoryStalled - memoryAlone < 64 * 1024, "VmRSS \(memoryAlone) kB alone, \(memoryStalled) kB with the stalled client")
        // The events it let pile up disconnected it, saying why.
        #expect(await host.process.waitForOutput("did not read", onStderr: true, within: 30), "\(host.process.stderr)")
        #expect(stalled.waitClosed(within: 30))

        // A client that reads late gets the latest render, not 10,000 of them.
        var renders = 0
        var last: [String: Any]?
        let deadline = Date().addingTimeInterval(5)
        while let message = watching.next(until: deadline) {
            if message["method"] as? String == "render" {
                renders += 1
                last = message["params"] as? [String: Any]
            }
        }
        #expect(renders < 10000)
        #expect((last?["text"] as? String)?.contains("update 10000") == true)
        _ = await host.stop()
    }
}
