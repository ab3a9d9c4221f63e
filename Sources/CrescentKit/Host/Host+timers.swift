import CLua
import LuaBridge
import Model
import NIOCore
import Services

extension Host {
    /// Installs `timer.after(s, fn)` and `timer.every(s, fn)`.
    func installTimers() {
        let timerType = vm.objectType(
            LuaTimer.self, name: "Timer",
            methods: [
                "cancel": { [unowned self] stack in
                    let timer = try self.timerType.checkSelf(in: stack, function: "cancel")
                    try ExtraArguments.check(stack, takes: 1, signature: "timer:cancel()", arity: "none", isMethod: true)
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
                case "schedule": if let schedule = timer.schedule { stack.push(schedule.description) } else { stack.pushNil() }
                default:
                    try UndeclaredField.check(stack.text(at: 2), on: "Timer",
                                              fields: ["active", "interval", "repeats", "firings", "schedule"],
                                              methods: ["cancel"], in: stack)
                    stack.pushNil()
                }
                return .one
            },
            metamethods: [
                "__tostring": { [unowned self] stack in
                    guard let timer = self.timerType.object(at: 1, in: stack) else { return .none }
                    let kind = timer.schedule?.description ?? "\(timer.repeats ? "every" : "after") \(formatSeconds(timer.interval)) s"
                    stack.push("Timer(\(kind), \(timer.isActive ? "active" : "cancelled"))")
                    return .one
                },
            ]
        )
        _ = timerType
        let stack = vm.stack
        stack.newTable()
        vm.register(field: "after") { [unowned self] stack in try self.makeTimer(stack, repeats: false, function: "timer.after") }
        vm.register(field: "every") { [unowned self] stack in try self.makeTimer(stack, repeats: true, function: "timer.every") }
        vm.register(field: "at") { [unowned self] stack in try self.makeWallTimer(stack, function: "timer.at") }
        vm.register(field: "cron") { [unowned self] stack in try self.makeWallTimer(stack, function: "timer.cron") }
        UndeclaredField.guardLibrary(onTop: "timer", in: vm)
        vm.setGlobal("timer")
    }

    var timerType: LuaObjectType<LuaTimer> { vm.objectType(LuaTimer.self, name: "Timer") }

    private func makeTimer(_ stack: LuaStack, repeats: Bool, function: StaticString) throws -> LuaReturn {
        let seconds = try stack.checkNumber(1, function: function)
        guard seconds.isFinite, seconds >= 0 else {
            throw LuaRaise.badArgument(1, to: "\(function)", "seconds must be a finite number >= 0, got \(NumberText.shown(seconds))")
        }
        if repeats && seconds == 0 {
            throw LuaRaise.badArgument(1, to: "\(function)", "an interval of 0 s would never let the loop rest; use a positive number")
        }
        try stack.checkFunction(2, function: function)
        try ExtraArguments.check(stack, takes: 2, signature: "\(function)(seconds, fn)", arity: "seconds and a function")
        let timer = LuaTimer(interval: seconds, repeats: repeats, deadline: clock.uptime + .seconds(seconds: seconds))
        if repeats { timer.site = binding.location(stack) }
        return try start(timer, callbackAt: 2, stack)
    }

    /// `timer.at("09:30"[, { zone = "Europe/Paris" }], fn)` and `timer.cron("*/5 8-18 * * 1-5"[, { zone }], fn)`:
    /// fires at each wall-clock time the schedule names, in its zone (the local one by default).
    private func makeWallTimer(_ stack: LuaStack, function: StaticString) throws -> LuaReturn {
        let text = try stack.checkString(1, function: function)
        let hasOptions = stack.type(at: 2) == .table
        let callbackPosition: Int32 = hasOptions ? 3 : 2
        var zone: String?
        if hasOptions {
            let options: Value
            do throws(ConversionFailure) {
                options = try binding.value(at: 2, in: stack)
            } catch {
                throw LuaRaise.badArgument(2, to: "\(function)", "options must be { zone = \"Area/City\" }, got \(error.description)")
            }
            do throws(ServiceError) {
                zone = try OptionTable.check(options, [.string("zone")])["zone"]?.stringValue
            } catch {
                throw LuaRaise.badArgument(2, to: "\(function)", error.message)
            }
        }
        let what = "\(function)" == "timer.at" ? ("time", "a time") : ("expression", "an expression")
        // `timer.after(seconds, fn)` puts the function last of two; here options come between.
        if !hasOptions, stack.type(at: 2) == .function, stack.type(at: 3) == .table {
            throw LuaRaise.badArgument(3, to: "\(function)", "the options go before the function: \(function)(\(what.0), { zone = ... }, fn)")
        }
        try stack.checkFunction(callbackPosition, function: function)
        try ExtraArguments.check(stack, takes: callbackPosition, signature: "\(function)(\(what.0)[, options], fn)",
                                 arity: "\(what.1), options (optional) and a function")
        let schedule: WallSchedule
        do throws(ServiceError) {
            schedule = "\(function)" == "timer.at" ? try WallSchedule(at: text, zone: zone) : try WallSchedule(cron: text, zone: zone)
        } catch {
            // The environment's TZ is no argument of the call.
            if error.message.hasPrefix("TZ '") { throw LuaRaise("\(function): \(error.message)") }
            // A zone that is no IANA name came in the options, argument #2.
            throw LuaRaise.badArgument(hasOptions && error.message.hasPrefix("zone '") ? 2 : 1, to: "\(function)", error.message)
        }
        guard let deadline = nextDeadline(of: schedule) else {
            throw LuaRaise.badArgument(1, to: "\(function)", "'\(text)' names no time in the next 28 years")
        }
        let timer = LuaTimer(interval: 0, repeats: true, deadline: deadline)
        timer.schedule = schedule
        timer.site = binding.location(stack)
        return try start(timer, callbackAt: callbackPosition, stack)
    }

    /// When `schedule` is next due, in the clock's uptime.
    private func nextDeadline(of schedule: WallSchedule) -> Duration? {
        let now = clock.wallTime
        guard let next = schedule.next(after: now) else { return nil }
        return clock.uptime + .seconds(seconds: next - now)
    }

    /// The most timers a Lua plugin may have active at once. A timer lives in the host's memory,
    /// outside the plugin VM's `memory_mib`: a plugin asking nothing made millions with
    /// `timer.after` and grew the host by ~530 MB past its 64 MiB VM. At this bound they hold a
    /// few MiB of the host's.
    static let pluginTimerLimit = 10_000

    private func start(_ timer: LuaTimer, callbackAt position: Int32, _ stack: LuaStack) throws -> LuaReturn {
        if isPluginHost && timers.count >= Self.pluginTimerLimit {
            throw LuaRaise("plugin '\(pluginName ?? "?")' has \(timers.count) timers active, the most a plugin may have (each lives in the host's memory, outside its memory_mib); cancel those it no longer needs (t:cancel())")
        }
        stack.pushValue(at: position)
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

    /// The warning, once per timer, that its callback returned `returned` (GLib's `return false`
    /// stops a timeout) while the timer goes on: said for timer.every's function and for the
    /// method self:every runs (the controllers' `timerValueIgnored`).
    func warnValueIgnored(_ timer: LuaTimer, returned: Bool) {
        guard timer.isActive, !timer.saidValueIgnored else { return }
        timer.saidValueIgnored = true
        writeError("\(console.styled("crescent: warning:", .warning)) \(timer.site): the timer's callback returned "
                   + "\(returned), and a callback's value is ignored, so the timer goes on: stop it with t:cancel() "
                   + "(the timer is the callback's argument)")
    }

    private func fire(_ timer: LuaTimer) {
        guard let callback = timer.callback, let handle = timer.handle else { return }
        timer.scheduled = nil
        timer.firings += 1
        if let wall = timer.schedule, let deadline = nextDeadline(of: wall) {
            timer.deadline = deadline
            schedule(timer)
        } else if timer.schedule != nil {
            cancel(timer)
        } else if timer.repeats {
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
            try withScope(timer.owner) { try vm.call(arguments: 1, results: 1) }  // value
            timer.consecutiveErrors = 0
            // GLib's `return false` stops a timeout; here the value is ignored, and a timer
            // that goes on firing said nothing of it.
            if stack.type(at: -1) == .boolean { warnValueIgnored(timer, returned: stack.boolean(at: -1)) }
            stack.pop()
        } catch let error as LuaError {
            reportHandlerError(error, in: "error in timer callback")
            timer.consecutiveErrors += 1
            // A callback that fails every time would fail for as long as the run lasts.
            if timer.isActive, timer.consecutiveErrors >= binding.registry.maxFailures {
                cancel(timer)
                let kind = timer.schedule?.description ?? "every \(formatSeconds(timer.interval)) s"
                writeError("\(console.styled("crescent: warning:", .warning)) cancelled the timer (\(kind)) made at \(timer.site) after \(timer.consecutiveErrors) consecutive errors")
            }
        } catch {}
    }
}
