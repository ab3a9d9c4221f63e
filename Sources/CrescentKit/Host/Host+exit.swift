public import LuaBridge
import Model

/// How a run ends: asked (`app.exit`, a signal, the time limit), then torn down once.
extension Host {
    /// Asks the run to end with `status` at the end of the current turn (`app.exit`, signals).
    public func requestExit(_ status: Int32) {
        switch runState {
        case .runningMain, .mainFinished: runState = .exitRequested(status: status)
        case .exitRequested, .finished: break
        }
    }

    /// Interrupts running Lua code (from a signal or time limit) and ends the run with `status`.
    /// Safe from any thread.
    ///
    /// - Parameter interrupting: false when the running code was interrupted already, on the
    ///   loop (a Ctrl-C only `os.execute`'s program saw): only the run is ended.
    public static func stop(_ link: HostLink, interrupter: LuaInterrupter, status: Int32, timeout: Bool, interrupting: Bool = true) {
        if !interrupting {
            // Already interrupted where it ran.
        } else if timeout { interrupter.interruptForTimeout() } else { interrupter.interrupt(status: status) }
        link.onLoop { host in
            guard host.isRunning else { return }
            if timeout && !host.reportedTimeout {
                host.reportedTimeout = true
                host.writeError("\(host.console.styled("crescent:", .error)) \(host.timeoutMessage)")
            }
            host.finish(status: status)
        }
    }

    /// Tears down (cancels timers and tasks, runs teardown actions, closes the VM) and reports
    /// `status` once.
    public func finish(status requested: Int32) {
        guard isRunning else { return }
        var status = requested
        let failedBefore = sawError
        runState = .finished(status: status)
        gate.close()
        vm.clearInterrupt()
        for action in teardownActions.reversed() { action() }
        teardownActions.removeAll()
        for runtime in pluginRuntimes.reversed() { runtime.finish() }
        pluginRuntimes.removeAll()
        scriptScope.end()
        binding.teardown(keepingVM: keepsVM)
        for timer in timers { timer.invalidate() }
        timers.removeAll()
        for task in tasks { task.invalidate() }
        tasks.removeAll()
        for coroutine in idleCoroutines { coroutine.release() }
        idleCoroutines.removeAll()
        currentTask = nil
        // A teardown step that failed (viewWillDisappear, dealloc while quitting) is an error of
        // the run like any handler's: a zero status becomes 1, as ``endTurn()`` makes it for
        // the errors before. (The REPL's own status on leaving is kept for those.)
        if status == 0 && sawError && !failedBefore {
            status = 1
            runState = .finished(status: status)
        }
        // A finalizer that failed in the last turn, or as the VM closed, fails the run too.
        var failures = [vm.takeFinalizerFailures()]
        if !keepsVM {
            vm.close()
            failures.append(vm.finalizerFailures)
        }
        for (failure, when) in zip(failures, ["", " as the run ended"]) where reportsFinalizerFailuresAtClose {
            guard let failure else { continue }
            // Written directly: ``report(_:context:)`` reads the VM's globals, closed by now.
            let plugin = pluginName.map { "plugin '\($0)': " } ?? ""
            writeError("\(console.styled("crescent:", .error)) \(plugin)\(Self.finalizerContext(failure, when: when)): \(failure.first)")
            if status == 0 { status = 1 }
        }
        runState = .finished(status: status)
        // The runner's hooks are never called after the run (the first controller, a Ctrl-C in
        // os.execute's program) and reach the host through its link: let go, so a runner's
        // closures do not keep the finished host (and its VM's memory) alive.
        onFirstController = nil
        onFirstControllerLoading = nil
        onProgramInterrupted = nil
        pluginLauncher?.finish()
        // Nothing of the run is left to read the host through its link: from here on it reads
        // nil on any thread, even while the host itself is still held.
        weakLink.clear()
        presenter.finish()
        endTerminalSession()
        presenter.present(nil, controller: "")
        console.flush()
        onExit(status)
    }

    /// Gives a finished host that kept its VM (``keepsVM``) a fresh model: new services on a new
    /// clock, a new gate and link, an empty script scope, no controller, timer or task, and the
    /// run going again. The VM and its globals stay, with what Lua holds in them; the model
    /// values it holds from before (service objects) refuse to be used (ModelBinding.restart).
    func restartModel(services: [ServiceEntry], clock: any ServiceClock, launcher: PluginLauncher) throws(LuaError) {
        guard keepsVM, !isRunning else { throw LuaError(.runtime, "restartModel: only a finished host that kept its VM restarts") }
        gate = LoopGate()
        weakLink = WeakLink()
        weakLink.attach(self)
        launcher.attach(self)
        pluginLauncher = launcher
        self.clock = clock
        scriptScope.reopen()
        currentScope = scriptScope
        navigationDepth = 0
        teardownActions = setupTeardownActions
        sawError = false
        reportedTimeout = false
        vm.clearInterrupt()
        // What a person did on the last run's screen (the `?` help, a message, the command line)
        // is no part of the next: each starts as a new run would.
        presenter.reset()
        commandLine = commandLine.map { .closed($0.history) }
        runState = .runningMain
        try binding.restart(services: services)
    }
}
