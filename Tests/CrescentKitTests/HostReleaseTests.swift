@testable import CrescentKit
import class Foundation.FileManager
import class Foundation.Thread
import struct Foundation.UUID
import Model
import NIOCore
import NIOEmbedded
import Testing

/// A finished host is freed once its owner lets go, whatever the script left waiting on the
/// clock: the waiting jobs hold the host (through its link) and the host holds the clock, so a
/// cancelled job the clock kept would keep the whole host and its VM allocated. LeakSanitizer
/// (`make sanitize`) reported exactly that for the two tests that end with a sleep or a
/// repeating timer pending; these check it in every build.
@Suite struct HostReleaseTests {
    @Test(arguments: [
        "task(function() sleep(10) end)",
        "keep = timer.every(1, function() end)",
        "timer.after(30, function() end)",
    ])
    func aFinishedHostIsFreedWithWorkStillScheduled(_ script: String) throws {
        weak var observed: Host?
        do {
            let test = try TestHost()
            test.run(script)
            #expect(test.host.isRunning)
            observed = test.host
            test.host.finish(status: 0)
        }
        #expect(observed == nil)
    }

    @Test func aHostLeftRunningIsFreedWithItsTest() throws {
        weak var observed: Host?
        do {
            let test = try TestHost()
            test.run("task(function() sleep(10) end)")
            observed = test.host
        }
        #expect(observed == nil)
    }

    /// The host's hooks a runner sets (os.execute's Ctrl-C, the first controller) reach the host
    /// through its link, as `crescent run`'s do: the host lets go of them as it finishes, so a
    /// hook that was never called does not hold it.
    @Test func aFinishedHostLetsGoOfTheHooksItWasGiven() throws {
        weak var observed: Host?
        do {
            let test = try TestHost()
            let link = test.host.link
            test.host.onFirstController = { link.onLoop { _ in } }
            test.host.onFirstControllerLoading = { link.onLoop { _ in } }
            test.host.onProgramInterrupted = { link.onLoop { _ in } }
            test.run("print('done')")
            #expect(test.exitStatus == 0)
            observed = test.host
        }
        #expect(observed == nil)
    }

    /// A host whose script left a kept timer, a subscription and a reply the service never
    /// answers is freed, whether the binding tore down in `finish` or before it (as
    /// BindingTeardownTests does).
    @Test(arguments: [false, true])
    func aHostIsFreedWhenAServiceKeptAReplyItNeverAnswered(bindingTornDownFirst: Bool) throws {
        weak var observed: Host?
        do {
            let test = try TestHost(thermostat: Thermostat())
            test.run("""
                keep = timer.after(100, function() end)
                T = services.thermostat
                S = T:observe("temperature", function() end)
                Q = T:hold(false, function() end)
                """)
            test.settle()
            #expect(test.stderr == "")
            if bindingTornDownFirst { test.host.binding.teardown() }
            observed = test.host
        }
        #expect(observed == nil)
    }

    /// A host that found a process plugin (registered with its launcher to start in the
    /// background, never started) is freed after its run: the plugin's start holds the launcher,
    /// which the host lets go of as it finishes.
    @Test func aHostWithAProcessPluginItNeverStartedIsFreed() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("host-release-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/probe", withIntermediateDirectories: true)
        try """
            name = "probe"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "probe.py"]
            services = ["probe"]
            """.write(toFile: root + "/probe/plugin.toml", atomically: true, encoding: .utf8)
        weak var observed: Host?
        weak var launcher: PluginLauncher?
        do {
            let loop = EmbeddedEventLoop()
            var options = HostOptions()
            options.pluginSearch = PluginSearch(folders: [root], onlyFolders: true)
            let host = try Host(loop: loop, options: options, console: Console(colors: false) { _, _ in },
                                clock: ManualClock()) { _ in }
            #expect(host.binding.services.contains { $0.name == "probe" })
            observed = host
            launcher = host.pluginLauncher
            host.runMain(source: Array("print('x')".utf8), chunkName: "=test", scriptPath: nil)
            #expect(host.exitStatus == 0)
            try loop.syncShutdownGracefully()
        }
        #expect(launcher == nil)
        #expect(observed == nil)
    }

    /// `crescent run`'s host is freed when the run returns. The run's closures (its stop
    /// thread's signal handler and `--timeout` deadline, the host's hooks) reach the host through
    /// its link: kept, they held the host, its VM and the stop thread until the process ended,
    /// which LeakSanitizer reported for every run (and an ASan-built `crescent` then exited 1).
    @Test(arguments: [
        "print('hi')",
        "timer.after(0.01, function() print('fired') end)",
        "task(function() sleep(0.01) end)",
    ])
    func aScriptRunnersHostIsFreedWhenTheRunReturns(_ script: String) async {
        let observed = ObservedHost()
        let status = await withCheckedContinuation { continuation in
            let thread = Thread {
                var options = HostOptions()
                options.timeout = 600
                let console = Console(colors: false) { _, _ in }
                let status = ScriptRunner.run(.file("test.lua"), bytes: Array(script.utf8), options: options, plugins: [],
                                              console: console, scriptName: nil, readsCommands: true, readsKeys: false) { host in
                    observed.host = host
                }
                continuation.resume(returning: status)
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        #expect(status == 0)
        #expect(observed.host == nil)
    }
}

/// A weak reference to the host a run makes on a thread of its own.
/// `@unchecked Sendable`: set once on the run's thread before the run returns, read after the
/// continuation the run's thread resumed, which orders the two.
private final class ObservedHost: @unchecked Sendable {
    weak var host: Host?
}
