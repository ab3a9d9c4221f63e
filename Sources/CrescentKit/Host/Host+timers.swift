import CLua
import LuaBridge
import Model
import NIOCore

extension Host {
    /// Installs `timer.after(s, fn)` and `timer.every(s, fn)`.
    func installTimers() {
        let timerType = vm.objectType(
            LuaTimer.self, name: "Timer",
            methods: [
                "cancel": { [unowned self] stack in
                    let timer = try self.timerType.check(1, in: stack, function: "cancel")
                    self.cancel(timer)
                    return .none
                },
            ],
            getter: { [unowned self] stack in
                guard let timer = self.timerType.object(at: 1, in: stack) else { return .none }
                switch stack.text(at: 2) {
                case "active": stack.push(timer.isActive)
                case "interval": stack.push(timer.interval)
                case "repeats": stack.push(timer.repeats)
                case "firings": stack.push(timer.firings)
                default: stack.pushNil()
                }
                return .one
            },
            metamethods: [
                "__tostring": { [unowned self] stack in
                    guard let timer = self.timerType.object(at: 1, in: stack) else { return .none }
                    let kind = timer.repeats ? "every" : "after"
                    stack.push("Timer(\(kind) \(formatSeconds(timer.interval)) s, \(timer.isActive ? "active" : "cancelled"))")
                    return .one
                },
            ]
        )
        _ = timerType
        let stack = vm.stack
        stack.newTable()
        vm.register(field: "after") { [unowned self] stack in try self.makeTimer(stack, repeats: false, function: "timer.after") }
        vm.register(field: "every") { [unowned self] stack in try self.makeTimer(stack, repeats: true, function: "timer.every") }
        vm.setGlobal("timer")
    }

    var timerType: LuaObjectType<LuaTimer> { vm.objectType(LuaTimer.self, name: "Timer") }

    private func makeTimer(_ stack: LuaStack, repeats: Bool, function: StaticString) throws -> LuaReturn {
        let seconds = try stack.checkNumber(1, function: function)
        guard seconds.isFinite, seconds >= 0 else {
            throw LuaRaise.badArgument(1, to: "\(function)", "seconds must be a finite number >= 0, got \(seconds)")
        }
        if repeats && seconds == 0 {
            throw LuaRaise.badArgument(1, to: "\(function)", "an interval of 0 s would never let the loop rest; use a positive number")
        }
        try stack.checkFunction(2, function: function)
        let timer = LuaTimer(interval: seconds, repeats: repeats, deadline: clock.uptime + .seconds(seconds: seconds))
        stack.pushValue(at: 2)
        timer.callback = vm.ref(from: stack)
        timerType.push(timer, onto: stack)
        stack.pushValue(at: -1)
        timer.handle = vm.ref(from: stack)
        timer.hostLink = weakLink
        timer.ownerLink = currentScope.weakLink
        currentScope.adopt(timer)
        timers.insert(timer)
        schedule(timer)
        return .one
    }

    private func schedule(_ timer: LuaTimer) {
        let host = link
        let boundTimer = NIOLoopBound(timer, eventLoop: loop)
        timer.scheduled = clock.schedule(after: timer.deadline - clock.uptime) {
            host.turn { host in host.fire(boundTimer.value) }
        }
    }

    /// Cancels a timer: it will not fire again and no longer keeps the run alive.
    func cancel(_ timer: LuaTimer) {
        timer.invalidate()
        timers.remove(timer)
        timer.owner?.forget(timer)
    }

    private func fire(_ timer: LuaTimer) {
        guard let callback = timer.callback, let handle = timer.handle else { return }
        timer.scheduled = nil
        timer.firings += 1
        if timer.repeats {
            // Fixed rate without drift; a late loop skips ahead instead of firing in a burst.
            timer.deadline = max(timer.deadline + .seconds(seconds: timer.interval), clock.uptime)
            schedule(timer)
        } else {
            cancel(timer)
        }
        let stack = vm.stack
        callback.push(onto: stack)
        handle.push(onto: stack)
        do {
            try withScope(timer.owner) { try vm.call(arguments: 1, results: 0) }
        } catch let error as LuaError {
            reportHandlerError(error, in: "error in timer callback")
        } catch {}
    }
}
