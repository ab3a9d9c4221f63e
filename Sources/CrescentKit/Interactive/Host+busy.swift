import CLua
import LuaBridge
import Model

/// A key or command handler that waits or loops, on the whole terminal (``BusyHandler``): the
/// status line shows it after half a second, and a Ctrl-C then stops it.
extension Host {
    /// Adds `busy(kind, name)` to the controller prelude's table (on top of the stack): a key's
    /// (`"key"`, its name), a command's (`"command"`, its name) or a click's (`"click"`) handler
    /// starts; `busy()` with nothing says the queue of keys and commands is empty. Does nothing
    /// outside a terminal session. And `stopping()`: whether a Ctrl-C is stopping what runs.
    func installBusyPrimitive() {
        vm.register(field: "busy") { [unowned self] stack in
            guard let busy = self.busyHandler else { return .none }
            let work: BusyHandler.Work? = switch stack.text(at: 1) {
            case "key": .key(stack.text(at: 2) ?? "?")
            case "command": .command(stack.text(at: 2) ?? "?")
            case "click": .click
            default: nil
            }
            guard let work else {
                busy.ended()
                if self.presenter.status.busy != "" { self.presenter.showBusy("") }
                return .none
            }
            busy.started(work, at: self.clock.uptime)
            self.scheduleBusyCheck(after: BusyHandler.indicatorDelay)
            return .none
        }
        // stopping(): whether a Ctrl-C is stopping what runs (its "interrupted" is no failure).
        vm.register(field: "stopping") { [unowned self] stack in
            stack.push(self.busyHandler?.isStopping ?? false)
            return .one
        }
    }

    /// Starts following the handlers that run (``busyHandler``) and returns the terminal
    /// session's Ctrl-C, called from the key reader's thread: it stops a handler that has run
    /// past ``BusyHandler/indicatorDelay`` (its running code interrupted now, its task cancelled
    /// on the loop), else calls `quit`.
    func busyInterrupt(quit: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let busy = BusyHandler()
        busyHandler = busy
        vm.setNoticeHandler { [unowned self] in self.showBusyWhileCodeRuns() }
        let clock = self.clock, link = self.link
        let script = vm.interrupter, plugins = pluginInterrupters
        return {
            guard busy.interrupt(at: clock.uptime) == .stop else { return quit() }
            // Code that holds the loop (a handler's `while true do end`) is interrupted where it
            // runs; the loop then finishes the stop. A handler that waits is only cancelled there.
            script.interruptRunningCode()
            plugins.interruptRunningCode()
            link.turn { host in host.finishBusyStop() }
        }
    }

    /// Looks, `delay` from now, whether a handler still runs (one look at a time: a key that
    /// runs for microseconds costs no timer of its own).
    func scheduleBusyCheck(after delay: Duration) {
        guard !busyCheckScheduled else { return }
        busyCheckScheduled = true
        let link = self.link
        clock.schedule(after: delay) {
            link.turn { host in
                host.busyCheckScheduled = false
                host.showBusyIndicator()
            }
        }
    }

    /// Shows what runs and for how long once it has run past the delay, and looks again in a
    /// second (the count goes up); looks again when the delay ends for a handler that started
    /// since the last look.
    private func showBusyIndicator() {
        guard let busy = busyHandler, case .running(let work, let since) = busy.phase else { return }
        let elapsed = clock.uptime - since
        guard elapsed >= BusyHandler.indicatorDelay else {
            return scheduleBusyCheck(after: BusyHandler.indicatorDelay - elapsed)
        }
        presenter.showBusy(Self.busyText(work, elapsed))
        scheduleBusyCheck(after: .seconds(1))
    }

    private static func busyText(_ work: BusyHandler.Work, _ elapsed: Duration) -> String {
        "\(work.description) running \(tenths(elapsed)) s · ctrl-c stops it, keys wait"
    }

    /// Called inside a handler's running Lua code by the VM's notice (the loop is held, so no turn
    /// shows it): the status line is drawn at once, and looked at again in a second. Touches no
    /// Lua and no view node.
    private func showBusyWhileCodeRuns() {
        guard let busy = busyHandler, case .running(let work, let since) = busy.phase else { return }
        let elapsed = clock.uptime - since
        guard elapsed >= BusyHandler.indicatorDelay else { return }
        presenter.showBusy(Self.busyText(work, elapsed))
        presenter.drawStatusLineNow()
    }

    /// The key reader's idle tick: a handler that loops holds the loop, so no turn (and no clock
    /// job, which runs on the loop) can show it; the VM's notice shows it from inside its code
    /// (``showBusyWhileCodeRuns()``) once it has run past the delay, and each second after.
    func busyNotice() -> @Sendable () -> Void {
        guard let busy = busyHandler else { return {} }
        let clock = self.clock, interrupter = vm.interrupter
        return {
            if busy.noticeDue(at: clock.uptime) { interrupter.notice() }
        }
    }

    /// `duration` in seconds to a tenth below ten seconds (`0.5`, `3.2`), whole above (`42`).
    static func tenths(_ duration: Duration) -> String {
        let tenths = Int((duration.inSeconds * 10).rounded())
        return tenths >= 100 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }

    /// After a Ctrl-C stopped a handler: forgets the interrupt, cancels the handler's task and
    /// drops the keys and commands that waited behind it, and says so on the status line in
    /// place of the hints until the next key has run.
    func finishBusyStop() {
        clearStrayInterrupt()
        guard let busy = busyHandler, let (work, since, droppedKeys) = busy.finishStop() else { return }
        var dropped = Int64(droppedKeys)
        if let hooks = controllerHooks {
            let stack = vm.stack
            hooks.push(onto: stack)
            if stack.rawGet(-1, "stopCommands") == .function, (try? vm.call(arguments: 0, results: 1)) != nil {
                dropped += stack.integer(at: -1) ?? 0
            }
            stack.setTop(0)
        }
        let seconds = Self.tenths(clock.uptime - since)
        let waited = dropped == 0 ? "" : dropped == 1 ? "; 1 key typed meanwhile dropped" : "; \(dropped) keys typed meanwhile dropped"
        let text = "ctrl-c stopped \(work.description) after \(seconds) s\(waited)"
        // Tab's completion stopped: the command line is open, and shows a message beside it.
        if case .completion = work { return presenter.showMessage(text) }
        // In place of the hints, where a long hint line cannot cut it off, until the next key
        // has run.
        presenter.showBusy(text)
    }

    /// After a remote client's interrupt (or its hanging up) stopped the key or command it sent:
    /// the handler ended without telling the busy indicator, which would go on counting; says who
    /// stopped what in its place, as a Ctrl-C's stop does.
    func finishRemoteStop(by caller: String) {
        guard let busy = busyHandler, case .running(let work, let since) = busy.phase else { return }
        busy.ended()
        presenter.showBusy("\(caller) stopped \(work.description) after \(Self.tenths(clock.uptime - since)) s")
    }
}
