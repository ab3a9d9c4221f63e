import LuaBridge
import Model
import NIOCore
import Services
import Synchronization

/// One spec file's host: one VM for the file, as under busted, and for each test fresh services on
/// a new ``ManualClock`` (``restartModel()``), the store in memory, the network and the location
/// device replaced by what the spec fakes, output captured.
///
/// The file's walk runs in it (``next()``), each test it reaches runs (``run(_:)``), then the host
/// is torn down. Every turn of the host happens on the runner's thread: work that services
/// finish on other threads waits on the ``PumpedEventLoop`` until ``settle()`` runs it.
final class SpecHost {
    let host: Host
    /// The test's clock: a new one for each test of the file (``restartModel()``).
    private(set) var clock: ManualClock
    /// What made the host's services, to make them again for each test.
    private let plugins: [any Plugin]
    let loop: PumpedEventLoop
    let output: SpecOutput
    let link: SpecLink
    /// The running test's real-time limit, if it has one.
    let timeLimit: SpecTimeLimit?
    /// The runner table the testing prelude returned, and its callbacks.
    private(set) var runner: LuaRef?
    /// The testing prelude's `runner.http`: answers requests from `fake.http`'s routes.
    var httpHandler: LuaRef?
    /// The testing prelude's `runner.process`: answers programs from `fake.process`.
    var processHandler: LuaRef?
    /// The testing prelude's `runner.call`: answers a faked service's methods.
    var callHandler: LuaRef?
    /// The fakes the spec made, by service name.
    var fakes: [String: FakeService] = [:]
    var locationScript: LocationScript?
    /// Golden files `--update` rewrote.
    var updated: [String] = []
    /// `os.exit(N) at file:line` once the code under test called it.
    var osExit: String?
    /// `press("q") at file:line` once the spec pressed the key that quits where the controller
    /// does not bind it: its own quit, not the code under test's app.exit.
    var pressedQuit: String?
    /// The hook of the running test under way, if one is (``SpecHookUnderWay``).
    var hookUnderWay: SpecHookUnderWay?
    /// When the test's body began waiting (virtual time), for ``waitLimit``.
    var waitStart: Duration?

    /// How many tasks slept on the clock when the host last settled.
    var sleepersSettled = 0

    /// A host for a spec file, with `options` as the base (config file, columns).
    /// - Parameter selection: `--filter` and the tags (`#tag` in names) that select and leave out tests.
    init(loop: PumpedEventLoop, options: HostOptions, update: Bool, timeLimit: SpecTimeLimit? = nil,
         selection: SpecSelection = SpecSelection()) throws {
        self.loop = loop
        self.timeLimit = timeLimit
        let link = SpecLink()
        self.link = link
        let clock = ManualClock()
        self.clock = clock
        let output = SpecOutput()
        self.output = output
        var options = options
        options.dataDirectory = ":memory:"
        options.location = nil
        options.ui = .plain
        options.colors = false
        options.columns = options.columns ?? 80
        let console = Console(colors: false) { stream, text in output.append(text, error: stream == .error) }
        plugins = [SpecPlugin(link: link)]
        host = try Host(loop: loop, options: options, console: console, plugins: plugins, clock: clock) { _ in }
        host.keepsVM = true
        host.startsPluginPrograms = false
        // The memory error names what raises the limit of a test run.
        host.vm.memoryLimitSetting = "crescent test --memory-limit MIB"
        // Those as it closes fail the test in its teardown (SpecTeardown), with the test's name.
        host.reportsFinalizerFailuresAtClose = false
        let hostLink = host.link
        link.host.withLock { $0 = hostLink }
        let me = NIOLoopBound(Unowned(self), eventLoop: loop)
        link.spec.withLock { $0 = me }
        clock.onSettle { me.value.object?.settle() }
        try host.vm.withCollectorPaused { () throws in
            try installTesting(update: update, selection: selection)
        }
    }

    /// Gives the host a fresh model for the file's next test: the one before is torn down (its
    /// controllers, timers, tasks, subscriptions, services, store and fakes), and the next test
    /// starts on a new clock with new services, no fakes and no output. The VM and what Lua holds
    /// stay, as busted keeps a file's state from one test to the next. Nil, or why it failed.
    func restartModel() -> String? {
        if host.isRunning { host.finish(status: 0) }
        _ = loop.runPending()
        let clock = ManualClock()
        self.clock = clock
        let me = NIOLoopBound(Unowned(self), eventLoop: loop)
        clock.onSettle { me.value.object?.settle() }
        fakes = [:]
        locationScript = nil
        updated = []
        osExit = nil
        pressedQuit = nil
        waitStart = nil
        sleepersSettled = 0
        output.clear()
        link.notices.withLock { $0 = [] }
        do {
            let launcher = PluginLauncher()
            let setup = try ServiceFactory.setup(plugins: plugins, options: host.options, clock: clock, launcher: launcher)
            try host.restartModel(services: setup.entries, clock: clock, launcher: launcher)
        } catch {
            return "cannot give the test fresh services: \(error)"
        }
        let hostLink = host.link
        link.host.withLock { $0 = hostLink }
        var failure: String?
        host.runTurn { host in
            let stack = host.vm.stack
            let base = stack.top
            defer { stack.setTop(base) }
            runner?.push(onto: stack)
            guard runner != nil, stack.rawGet(-1, "reset") == .function else { return }
            do throws(LuaError) { try host.vm.call(arguments: 0, results: 0) } catch { failure = error.message }
        }
        return failure
    }

    /// Counts the lines this host's Lua runs into `coverage` (`--coverage`), from now on.
    func measure(_ coverage: LineCoverage) {
        coverage.install(on: host.vm)
    }

    /// What stops the host's running Lua code from another thread (the time limit).
    var interrupter: LuaInterrupter { host.vm.interrupter }

    // MARK: The spec

    /// Runs the spec file's chunk (declaring its tests); nil, or the error.
    func load(_ source: [UInt8], path: String) -> String? {
        var failure: String?
        host.runTurn { host in
            let stack = host.vm.stack
            let base = stack.top
            defer { stack.setTop(base) }
            // The runner runs the chunk with the file's environment as its globals (busted's
            // per-block environments).
            runner?.push(onto: stack)                                    // runner
            guard runner != nil, stack.rawGet(-1, "file") == .function else {  // runner file
                failure = "crescent test's runner has no 'file' function (the testing prelude did not load)"
                return
            }
            do throws(LuaError) {
                try host.vm.load(source, name: "@" + path)              // runner file chunk
                try host.vm.call(arguments: 1, results: 0)               // runner
            } catch {
                // A misspelled global (`descibe`) with the closest one, as a script's error says.
                failure = GlobalNameHint.hinted(error.message, in: host.vm)
            }
        }
        if let limit = pastTimeLimit { return limit }
        return exitFailure ?? failure
    }

    /// Runs test `index` (0-based); its outcome and what it printed.
    func run(_ index: Int) -> SpecOutcome {
        var status = "failed"
        var message = ""
        var reportedName: String?
        var failedHook: String?
        var afterHook: SpecHookFailure?
        var interrupted = false
        hookUnderWay = nil
        defer { hookUnderWay = nil }
        callRunner("run", argument: index + 1, results: 7) { host, stack, failure in
            if let failure {
                message = failure.message
                interrupted = failure.kind == .interrupted
            } else {
                status = stack.text(at: -7) ?? "failed"
                // The values an assertion shows need not be UTF-8: "a\255" and "a\254" must
                // not both read "a\u{FFFD}". Their other bytes are shown as \xFF, as names are.
                message = GlobalNameHint.hinted(stack.string(at: -6).map { ByteText.shown($0.bytes) } ?? "", in: host.vm)
                reportedName = stack.text(at: -5)
                failedHook = stack.text(at: -4)
                if let said = stack.text(at: -3), let name = stack.text(at: -2) {
                    afterHook = SpecHookFailure(name: name, message: said, isTeardown: stack.text(at: -1) == "teardown")
                }
            }
        }
        if let limit = pastTimeLimit {
            // Stopped while the body waited on a call (`location:current()`, a plugin's method):
            // no Lua ran to meet the interrupt, which would stop the walk's next step and fail
            // the file. The host ends here, as the interrupt ends one that runs Lua, and the
            // next test gets a fresh model.
            if host.isRunning { host.finish(status: 0) }
            if let hookUnderWay { return hookUnderWay.outcome(stoppedBy: limit, output: output.text) }
            return SpecOutcome(passed: false, message: limit, output: output.text, status: .error)
        }
        if interrupted, let hookUnderWay, let exit = exitFailure {
            return hookUnderWay.outcome(stoppedBy: exit, output: output.text)
        }
        settle()
        // A finalizer the body's collection ran (collectgarbage()) that failed fails the test.
        if host.isRunning { host.reportFinalizerFailures() }
        // An exit unwound the test: the exit's own message says what happened.
        if interrupted && exitFailure != nil { message = "" }
        // app.exit(0) is no failure of the code, but it unwound the test: say so, not "exiting".
        if interrupted && exitFailure == nil && host.exitStatus == 0, let pressedQuit {
            message = "the test's \(pressedQuit) quit the app (q quits where the controller binds no 'q'), which ended the test "
                + "there: the rest of the test did not run (bind 'q' with self:key to test it, or press another key)"
        } else if interrupted && exitFailure == nil && host.exitStatus == 0 {
            message = "the code under test called app.exit(0), which ended the test there: the rest of the test did "
                + "not run (replace app.exit inside the test to check a script that exits, as spec/pull-all_spec.lua does)"
        }
        message = Self.namingMemoryLimit(message, mebibytes: host.vm.memoryLimit >> 20)
        // pending() inside the body: its message is the reason, not a failure.
        let pendingReason = status == "pending" ? message : nil
        if pendingReason != nil { message = "" }
        var messages = message.isEmpty ? [] : [message]
        messages += link.notices.withLock { $0 }
        if let exit = exitFailure { messages.append(exit) }
        if host.sawError {
            messages.append("the code under test reported an error:\n" + output.errors)
        }
        if let pendingReason, messages.isEmpty {
            return SpecOutcome(passed: false, message: pendingReason, output: output.text, status: .pending, afterHook: afterHook)
        }
        let passed = status == "passed" && messages.isEmpty
        let kind: SpecResult.Status = passed ? .passed : status == "error" ? .error : .failed
        // The errors the message shows already are not shown again under its output.
        let shown = host.sawError ? output.printed : output.text
        return SpecOutcome(passed: passed, message: messages.joined(separator: "\n"), output: shown, status: kind,
                           reportedName: reportedName, isSetupFailure: failedHook == "setup", afterHook: afterHook)
    }

    /// Lua raises the memory error without a message handler, and a spec's pcall (busted's, for a
    /// describe or expose body) keeps only its bare text: the limit is named, as a run names it.
    static func namingMemoryLimit(_ message: String, mebibytes: Int) -> String {
        guard message == "not enough memory", mebibytes > 0 else { return message }
        return "not enough memory: the memory limit of \(mebibytes) MiB was reached (raise it with crescent test --memory-limit MIB)"
    }

    /// Why the test stopped when it ran past its real-time limit.
    var pastTimeLimit: String? {
        guard let timeLimit, timeLimit.hasExpired else { return nil }
        let seconds = formatSeconds(timeLimit.seconds)
        return "the test was still running after its time limit of \(seconds) s (real time) and was stopped; "
            + "if it needs longer, raise the limit with crescent test --timeout SECONDS"
    }

    /// Why the host stopped, when the code under test ended the run (`app.exit(1)`, any `os.exit`).
    var exitFailure: String? {
        if let osExit {
            return "the code under test called \(osExit), which would end the whole run: under crescent test it fails "
                + "the test instead (a script ends by returning from its main chunk, or with app.exit(status))"
        }
        guard let status = host.exitStatus, status != 0 else { return nil }
        return "the code under test exited with status \(status) (app.exit)"
    }

    /// Tears the host down: its VM closes, its services go.
    func close() {
        host.keepsVM = false
        // A test that ended the host (an exit, the time limit, an interrupt) left the VM open,
        // and maybe an interrupt pending: its finalizers run now, as a closing host's do.
        if !host.isRunning {
            host.vm.clearInterrupt()
            host.vm.close()
        }
        host.finish(status: 0)
        runner = nil
        httpHandler = nil
        processHandler = nil
        callHandler = nil
        _ = loop.runPending()
    }

    /// Loads the testing prelude with its primitives and keeps the runner it returns.
    private func installTesting(update: Bool, selection: SpecSelection) throws {
        var failure: LuaError?
        host.runTurn { host in
            do throws(LuaError) {
                // `io.write` is captured as `print` is: a test's output never reaches the
                // runner's report stream (a TAP or JSON record written by a test forged one).
                try host.routeStandardOutputThroughConsole()
                let stack = host.vm.stack
                pushPrimitives(onto: stack)
                let primitives = host.vm.ref(from: stack)
                var fields: [LuaValue: LuaValue] = ["update": .boolean(update)]
                if !selection.filters.isEmpty { fields["filter"] = .array(selection.filters.map { .string(LuaString(bytes: $0)) }) }
                if !selection.tags.isEmpty { fields["tags"] = .array(selection.tags.map { .string(LuaString(bytes: $0)) }) }
                if !selection.excludedTags.isEmpty {
                    fields["exclude_tags"] = .array(selection.excludedTags.map { .string(LuaString(bytes: $0)) })
                }
                let options = LuaValue.table(fields)
                try Prelude.assertions.load(into: host.vm)                   // fn
                primitives.push(onto: stack)
                stack.push(options)                                          // fn T options
                try host.vm.call(arguments: 2, results: 1)                   // assertions
                try Prelude.checks.load(into: host.vm)                       // assertions fn
                stack.pushValue(at: -2)                                      // assertions fn assertions
                try host.vm.call(arguments: 1, results: 0)                   // assertions
                try Prelude.doubles.load(into: host.vm)                      // assertions fn
                stack.pushValue(at: -2)                                      // assertions fn assertions
                try host.vm.call(arguments: 1, results: 1)                   // assertions doubles
                try Prelude.fakes.load(into: host.vm)                        // assertions doubles fn
                primitives.push(onto: stack)
                stack.pushValue(at: -4)                                      // assertions doubles fn T assertions
                try host.vm.call(arguments: 2, results: 1)                   // assertions doubles fakes
                try Prelude.environments.load(into: host.vm)                 // assertions doubles fakes fn
                try host.vm.call(arguments: 0, results: 1)                   // assertions doubles fakes environments
                try Prelude.testing.load(into: host.vm)                      // assertions doubles fakes environments fn
                primitives.push(onto: stack)
                stack.push(options)
                for _ in 0..<4 { stack.pushValue(at: -7) }                   // ... fn T options assertions doubles fakes environments
                try host.vm.call(arguments: 6, results: 2)                   // assertions doubles fakes environments runner S
                for part in Prelude.testingParts {
                    try part.load(into: host.vm)                             // ... environments runner S fn
                    primitives.push(onto: stack)
                    stack.push(options)
                    for _ in 0..<6 { stack.pushValue(at: -9) }               // ... fn T options assertions doubles fakes environments runner S
                    try host.vm.call(arguments: 8, results: 0)               // assertions doubles fakes environments runner S
                }
                stack.pop()                                                  // assertions doubles fakes environments runner
                try Prelude.testingApp.load(into: host.vm)                   // ... environments runner fn
                primitives.push(onto: stack)
                stack.push(options)
                stack.pushValue(at: -8)                                      // ... runner fn T options assertions
                try host.vm.call(arguments: 3, results: 0)                   // assertions doubles fakes environments runner
                stack.pushValue(at: -1)
                runner = host.vm.ref(from: stack)                            // assertions doubles fakes environments runner
                _ = stack.rawGet(-1, "http")                                 // ... runner http
                httpHandler = host.vm.ref(from: stack)                       // ... runner
                _ = stack.rawGet(-1, "process")                              // ... runner process
                processHandler = host.vm.ref(from: stack)                    // ... runner
                _ = stack.rawGet(-1, "call")                                 // ... runner call
                callHandler = host.vm.ref(from: stack)                       // assertions doubles fakes environments runner
                stack.pop(5)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }
}
