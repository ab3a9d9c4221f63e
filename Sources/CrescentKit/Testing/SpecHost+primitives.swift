import LuaBridge
import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

extension SpecHost {
    /// Pushes the table of primitives the testing prelude builds on (`T` there): time, views,
    /// fakes and scripts. Each runs on the loop, inside the test's turn.
    func pushPrimitives(onto stack: LuaStack) {
        let vm = host.vm
        stack.newTable(fieldCount: 14)
        // Time.
        vm.register(field: "advance") { [unowned self] stack in
            let seconds = try stack.checkNumber(1, function: "clock.advance")
            settle()
            // A test's time limit stops a long run of short firings too: each may run too little
            // Lua for the interrupt hook to see the limit. Work that keeps scheduling more at
            // (nearly) the same instant (a timer.after(0) that re-arms itself) would hold the
            // clock until then: it is stopped after as many jobs as clock.run allows, and named.
            let jobLimit = 100_000
            var instant = clock.uptime, atInstant = 0
            var settled = true
            clock.advance(by: .seconds(seconds: seconds)) {
                let now = clock.uptime
                if now - instant < .milliseconds(1) { atInstant += 1 } else { instant = now; atInstant = 0 }
                if atInstant > jobLimit { settled = false }
                return !settled || self.host.vm.pendingInterrupt != 0
            }
            if !settled {
                let timers = activeTimers()
                let culprit = timers.isEmpty ? "work that kept scheduling more" : timers.joined(separator: ", ")
                throw LuaRaise("clock.advance(\(formatSeconds(seconds))): the clock did not move: more than \(jobLimit) jobs ran "
                               + "within a millisecond of virtual time at \(formatSeconds(instant.inSeconds)) s; kept scheduling: "
                               + "\(culprit) (a timer that re-arms itself with no delay never lets time pass: give it one)")
            }
            if host.vm.pendingInterrupt != 0 {
                throw LuaRaise("clock.advance(\(formatSeconds(seconds))): stopped at the test's time limit with timers still due")
            }
            return .none
        }
        vm.register(field: "run") { [unowned self] stack in
            let limit = stack.isNoneOrNil(1) ? 100_000 : Int(clamping: try stack.checkInteger(1, function: "clock.run"))
            settle()
            let start = clock.uptime
            guard clock.run(limit: limit) else {
                let passed = formatSeconds((clock.uptime - start).inSeconds)
                let repeating = repeatingTimers()
                let culprit = repeating.isEmpty ? "work that kept scheduling more" : repeating.joined(separator: ", ")
                throw LuaRaise("clock.run: the clock did not settle: work was still pending after \(limit) jobs and \(passed) s of "
                               + "virtual time; kept scheduling: \(culprit) (a repeating timer never ends: use "
                               + "clock.advance(seconds), or cancel the timer)")
            }
            return .none
        }
        vm.register(field: "now") { [unowned self] stack in
            stack.push(clock.uptime.inSeconds)
            return .one
        }
        vm.register(field: "settle") { [unowned self] _ in
            settle()
            return .none
        }
        vm.register(field: "step") { [unowned self] stack in
            if waitStart == nil { waitStart = clock.uptime }
            guard let stopped = step(since: waitStart ?? .zero) else {
                stack.push(true)
                return .one
            }
            stack.push(false)
            stack.push(stopped)
            return .values(2)
        }
        // os.exit: fails the running test instead of ending the whole run.
        vm.register(field: "exit") { [unowned self] stack in
            let status: Int32 = switch stack.type(at: 1) {
            case .none, .nil: 0
            case .boolean: stack.boolean(at: 1) ? 0 : 1
            default: Int32(truncatingIfNeeded: try stack.checkInteger(1, function: "os.exit"))
            }
            let place = stack.place(level: 1)
            if osExit == nil { osExit = "os.exit(\(status))" + (place.isEmpty ? "" : " at " + place.dropLast(2)) }
            host.requestExit(status)
            host.vm.interrupter.interruptForExit()
            throw LuaRaise("exiting")
        }
        // os.execute's program ended by a signal: SIGINT there is a Ctrl-C os.execute kept from
        // the runner (it ignores SIGINT while it waits, as system() does), which stops the run.
        vm.register(field: "programSignal") { [unowned self] stack in
            if stack.integer(at: 1) == Int64(SIGINT) { timeLimit?.stopsRun() }
            return .none
        }
        // Views.
        vm.register(field: "viewText") { [unowned self] stack in
            settle()
            guard let root = host.presenter.root else { return .none }
            var lines = root.lines(width: host.options.columns ?? 80)
            while lines.last?.isEmpty == true { lines.removeLast() }
            stack.push(lines.joined(separator: "\n"))
            return .one
        }
        vm.register(field: "screenText") { [unowned self] stack in
            settle()
            // Answered, not raised: testing.lua raises it at the spec's line (a raise here would
            // name testing.lua's own line). A size that is no whole number, or no number (`"a"`,
            // 2.5), is refused with the same words as one out of range.
            func size(_ index: Int32, default value: Int) -> Int? {
                switch stack.type(at: index) {
                case .none, .nil: return value
                case .number: return stack.integer(at: index).flatMap { Int(exactly: $0) }
                default: return nil
                }
            }
            let width = size(1, default: host.options.columns ?? 80), height = size(2, default: 24)
            guard let width, let height, (1...1000).contains(width), (2...1000).contains(height) else {
                stack.pushNil()
                func shown(_ index: Int32, _ value: Int?) -> String {
                    value.map(String.init) ?? stack.number(at: index).map { "\($0)" } ?? "'\(stack.text(at: index) ?? "?")'"
                }
                stack.push("a screen of \(shown(1, width)) x \(shown(2, height)) cannot be shown; pass 1-1000 columns and 2-1000 rows")
                return .values(2)
            }
            stack.push(host.presenter.frame(width: width, height: height).text)
            return .one
        }
        vm.register(field: "viewJSON") { [unowned self] stack in
            settle()
            guard let root = host.presenter.root else { return .none }
            do throws(JSONEncodingFailure) {
                stack.push(try JSONText.node(root))
            } catch {
                throw LuaRaise("view_json(): " + error.message(root: "view"))
            }
            return .one
        }
        vm.register(field: "notePressedQuit") { [unowned self] stack in
            if pressedQuit == nil { pressedQuit = try stack.checkString(1, function: "press") }
            return .none
        }
        vm.register(field: "noteUpdated") { [unowned self] stack in
            updated.append(try stack.checkString(1, function: "assert.view"))
            return .none
        }
        vm.register(field: "nearFile") { stack in
            // nearFile(path): the file beside a missing `path` it most likely misspells, with
            // path's folder, or nil.
            let path = try stack.checkString(1, function: "script")
            guard access(path, F_OK) != 0, let near = ScriptSource.nearFile(path) else { return .none }
            stack.push((path.lastIndex(of: "/").map { String(path[...$0]) } ?? "") + near)
            return .one
        }
        vm.register(field: "scriptFolder") { [unowned self] stack in
            host.addScriptFolderToPath(try stack.checkString(1, function: "script"))
            return .none
        }
        // Fakes.
        vm.register(field: "fakeLocation") { [unowned self] stack in try fakeLocation(stack) }
        vm.register(field: "locationFail") { [unowned self] stack in
            let code = try stack.checkString(1, function: "fail")
            guard let errorCode = ServiceError.Code(name: code) else {
                let codes = ServiceError.Code.all.map(\.name)
                let listing = NameSuggestion.listing("codes", codes, suggesting: NameSuggestion.closest(to: code, among: codes))
                throw LuaRaise.badArgument(1, to: "fail", "an error code such as \"unavailable\" expected, got \"\(code)\" (\(listing))")
            }
            guard let locationScript else { throw LuaRaise("fail: call fake.location first") }
            locationScript.fail(ServiceError(errorCode, stack.text(at: 2) ?? code, service: "location"))
            return .none
        }
        vm.register(field: "fakeService") { [unowned self] stack in try fakeService(stack) }
        vm.register(field: "fakeSet") { [unowned self] stack in
            let fake = try fakeNamed(stack)
            let key = try stack.checkString(2, function: "set")
            try Self.checkDeclared(key, among: fake.interface.properties.map(\.name), kind: "property", of: fake.interface.name, in: "set")
            let value = try modelValue(at: 3, stack, function: "set")
            if let type = fake.interface.property(key)?.type, let problem = Self.typeProblem(value, declared: type) {
                throw LuaRaise.badArgument(2, to: "set", "'\(key)' of \(fake.interface.name) is \(type), got \(problem)")
            }
            fake.set(key, value)
            return .none
        }
        vm.register(field: "fakeEmit") { [unowned self] stack in
            let fake = try fakeNamed(stack)
            let event = try stack.checkString(2, function: "emit")
            try Self.checkDeclared(event, among: fake.interface.events.map(\.name), kind: "event", of: fake.interface.name, in: "emit")
            fake.emit(event, try modelValue(at: 3, stack, function: "emit"))
            return .none
        }
        vm.register(field: "controllerHooks") { [unowned self] stack in
            // The controllers' hooks (sendCommand), for a spec's send to hear how a command went;
            // loaded first if they have not, by the spec's own code on its stack, as a script's
            // first use does (the loader returns them).
            guard let loader = host.controllersLoader else { return .none }
            let base = stack.top
            loader.push(onto: stack)
            guard stack.callKeepingError(arguments: 0) else { throw ErrorValueOnTop() }
            return .values(stack.top - base)
        }
        vm.register(field: "noteHook") { [unowned self] stack in
            // noteHook(name, kind[, testStatus, testMessage]): the test's hook starting; none, none when they are done.
            guard let name = stack.text(at: 1), let kind = stack.text(at: 2) else {
                hookUnderWay = nil
                return .none
            }
            hookUnderWay = SpecHookUnderWay(name: name, kind: kind, testStatus: stack.text(at: 3), testMessage: stack.text(at: 4) ?? "")
            return .none
        }
        vm.register(field: "goldenRefusal") { stack in
            // goldenRefusal(path, writing): why assert.view may not read (or write) the golden
            // file at path, or nil when it may.
            let path = try stack.checkString(1, function: "assert.view")
            guard let refusal = GoldenTarget.refusal(path, writing: stack.boolean(at: 2)) else { return .none }
            stack.push(refusal)
            return .one
        }
        vm.register(field: "goldenHint") { stack in
            // goldenHint(path): where golden paths are read from and the near file, and the
            // file's folder when it is missing (nil when it is there).
            let hint = GoldenPathHint(path: try stack.checkString(1, function: "goldenHint"))
            stack.push(hint.text)
            if let folder = hint.missingFolder { stack.push(folder) } else { stack.pushNil() }
            return .values(2)
        }
        vm.register(field: "closest") { stack in
            // closest(name, names): the one of `names` that `name` most likely misspells, or nil.
            let name = try stack.checkString(1, function: "closest")
            let names = UndeclaredField.names(inListAt: 2, in: stack)
            guard let closest = NameSuggestion.closest(to: name, among: names) else { return .none }
            stack.push(closest)
            return .one
        }
    }

    /// Why `value` does not fit a property of the declared `type` (nil when it does), checked as
    /// a plugin service's own values are (``ServiceDeclaration/value(_:fitsProperty:)``): a
    /// location is a table with number fields `lat` and `lon`, `integer` is a whole number. A
    /// builtin's type is written in words (`location or nil`, `array of items`), read here as
    /// `location?` and `array` (`location|nil` would take any value: there `nil` is a payload
    /// that may be anything).
    static func typeProblem(_ value: Value, declared type: String) -> String? {
        let words = type.split(separator: " or ").map { word -> String in
            let word = String(word).trimmingSpaces
            return word.hasPrefix("array of ") ? "array" : word
        }
        let alternatives = words.filter { $0 != "nil" }
        let written = alternatives.joined(separator: "|") + (words.count > alternatives.count ? "?" : "")
        guard !ServiceDeclaration.value(value, fitsProperty: written) else { return nil }
        let shapes = alternatives.map { ServiceDeclaration.argumentType($0) }
        switch value {
        case .object, .array, .model:
            // "got table" for a location missing its lat said nothing of what was missing.
            return "a table that is not " + shapes.map(\.description).joined(separator: " or ")
        default:
            return value.typeName
        }
    }

    /// `timer.every(1 s) at spec/x_spec.lua:3` (where its function is) for each active repeating timer.
    /// The timers still waiting to fire, each as `timer.after(0 s) at file:line` (or as
    /// ``repeatingTimers()`` names a repeating one).
    private func activeTimers() -> [String] {
        let stack = host.vm.stack
        return host.timers.filter { $0.isActive }.compactMap { timer -> String? in
            guard let callback = timer.callback else { return nil }
            callback.push(onto: stack)                                   // fn
            guard let (source, line) = stack.popDefinition() else { return nil }   // (popped)
            let kind = timer.repeats ? "timer.every" : "timer.after"
            return "\(kind)(\(formatSeconds(timer.interval)) s) at \(source):\(line)"
        }.sorted()
    }

    private func repeatingTimers() -> [String] {
        let stack = host.vm.stack
        return host.timers.filter { $0.repeats && $0.isActive }.compactMap { timer -> String? in
            guard let callback = timer.callback else { return nil }
            callback.push(onto: stack)                                   // fn
            guard let (source, line) = stack.popDefinition() else { return nil }   // (popped)
            // A wall-clock schedule repeats with no interval: named by its schedule, not as the
            // "timer.every(0 s)" it was taken for.
            if let schedule = timer.schedule { return "the schedule '\(schedule.description)' at \(source):\(line)" }
            return "timer.every(\(formatSeconds(timer.interval)) s) at \(source):\(line)"
        }.sorted()
    }

    /// Raises "emit: 'didUpdate' is not an event of location (events: ...; did you mean ...?)"
    /// when `name` is not among the `kind` names a fake declares.
    private static func checkDeclared(_ name: String, among names: [String], kind: String, of service: String,
                                      in function: String) throws {
        guard !names.contains(name) else { return }
        let listing = NameSuggestion.listing(kind == "property" ? "properties" : kind + "s", names,
                                             suggesting: NameSuggestion.closest(to: name, among: names))
        throw LuaRaise("\(function): '\(name)' is not \(kind == "event" ? "an" : "a") \(kind) of \(service) (\(listing))")
    }

    private static func checkDeclared(names: [String], among declared: [String], kind: String, of service: String) throws {
        for name in names { try checkDeclared(name, among: declared, kind: kind, of: service, in: "fake.service(\"\(service)\")") }
    }

    private func modelValue(at index: Int32, _ stack: LuaStack, function: String) throws -> Value {
        do {
            return try host.binding.value(at: index, in: stack)
        } catch {
            throw LuaRaise("\(function): argument #\(index - 1) \(error.description)")
        }
    }

    private func fakeNamed(_ stack: LuaStack) throws -> FakeService {
        let name = try stack.checkString(1, function: "fake")
        guard let fake = fakes[name] else { throw LuaRaise("no fake.service named '\(name)'") }
        return fake
    }

    /// `fake.location(fixes, track, interval)`: a location service replaying them.
    private func fakeLocation(_ stack: LuaStack) throws -> LuaReturn {
        let interval = stack.isNoneOrNil(3) ? nil : try stack.checkNumber(3, function: "fake.location")
        if let interval, !(interval >= 0 && interval.isFinite) {
            throw LuaRaise("fake.location: interval must be a number of seconds >= 0, got \(NumberText.shown(interval))")
        }
        let script: LocationScript
        if let track = stack.text(at: 2) {
            do throws(ServiceError) {
                script = try LocationScript(track: track, interval: interval)
            } catch {
                throw LuaRaise("fake.location: \(error.message)")
            }
        } else {
            let fixes = stack.isNoneOrNil(1) ? .array([]) : try modelValue(at: 1, stack, function: "fake.location")
            guard case .array(let items) = fixes else {
                throw LuaRaise("fake.location: fixes must be a list of { lat =, lon = } tables")
            }
            var parsed: [LocationFix] = []
            let fields = ["lat", "lon", "altitude", "speed", "course", "accuracy", "time"]
            for (index, item) in items.enumerated() {
                if case .object(let given) = item,
                   let unknown = given.dictionary.keys.sorted().first(where: { !fields.contains($0) }) {
                    // `lng` and `long` are two edits from `lon`: the usual spellings of the other APIs.
                    let closest = ["lng": "lon", "long": "lon", "longitude": "lon", "latitude": "lat"][unknown]
                        ?? NameSuggestion.closest(to: unknown, among: fields)
                    throw LuaRaise("fake.location: fixes[\(index + 1)] has '\(unknown)', no field of a fix ("
                                   + NameSuggestion.listing("fields", fields, suggesting: closest) + ")")
                }
                guard let lat = item["lat"].doubleValue, let lon = item["lon"].doubleValue,
                      (-90...90).contains(lat), (-180...180).contains(lon) else {
                    throw LuaRaise("fake.location: fixes[\(index + 1)] must have lat in [-90, 90] and lon in [-180, 180]")
                }
                let offset = Double(index) * (interval ?? 1)
                parsed.append(LocationFix(latitude: lat, longitude: lon, altitude: item["altitude"].doubleValue,
                                          speed: item["speed"].doubleValue, course: item["course"].doubleValue,
                                          accuracy: item["accuracy"].doubleValue,
                                          time: item["time"].doubleValue ?? clock.wallTime + offset, provider: "fake"))
            }
            script = LocationScript(fixes: parsed, interval: interval ?? 1)
        }
        locationScript = script
        host.binding.substitute(LocationService(script: script, clock: clock))
        return .none
    }

    /// `fake.service(name, properties, methodNames, events, summary)`.
    private func fakeService(_ stack: LuaStack) throws -> LuaReturn {
        let name = try stack.checkString(1, function: "fake.service")
        guard name.first.map({ $0.isLetter || $0 == "_" }) == true,
              name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            throw LuaRaise("fake.service: '\(name)' is not a service name (letters, digits and _)")
        }
        let properties = try modelValue(at: 2, stack, function: "fake.service")
        var initial: [String: Value] = [:]
        if case .object(let fields) = properties { initial = fields.dictionary }
        let methods = (try modelValue(at: 3, stack, function: "fake.service")).arrayValue?.compactMap(\.stringValue) ?? []
        let events = (try modelValue(at: 4, stack, function: "fake.service")).arrayValue?.compactMap(\.stringValue) ?? []
        let entry = host.binding.services.first { $0.name == name }
        // A process plugin never run declares nothing until it starts, which it may not do in a
        // spec: its fake takes the spec's names as an undeclared service's would.
        let declared = entry.flatMap { entry -> AnyInterface? in
            let interface = entry.interface
            return interface.methods.isEmpty && interface.properties.isEmpty && interface.events.isEmpty ? nil : interface
        }
        // A fake of a name no service has is the spec's own service, unless it is one edit from a
        // real one (`geocodr`): then the fake stands in for nothing the code under test reads.
        let serviceNames = host.binding.services.map(\.name)
        if entry == nil, let closest = NameSuggestion.closest(to: name, among: serviceNames, prefixes: false) {
            throw LuaRaise("fake.service: no service is named '\(name)' (\(NameSuggestion.listing("services", serviceNames, suggesting: closest))); "
                           + "a fake of a service of the spec's own needs a name no service's is close to")
        }
        // A fake of a declared service keeps its declaration: a method, property or event the
        // declaration lacks is a misspelling, and could never be reached through it.
        if let declared {
            // A started service's start and stop are its own, not declared methods: a fake may
            // give them (its fake is no started service), and `strat` is their misspelling.
            let lifecycle = entry?.isStartable == true ? ["start", "stop"] : []
            try Self.checkDeclared(names: methods, among: declared.methods.map(\.name) + lifecycle, kind: "method", of: name)
            try Self.checkDeclared(names: initial.keys.sorted(), among: declared.properties.map(\.name), kind: "property", of: name)
            try Self.checkDeclared(names: events, among: declared.events.map(\.name), kind: "event", of: name)
            // Their values keep the declared types too, as `h:set` checks them.
            for (key, value) in initial.sorted(by: { $0.key < $1.key }) {
                if let type = declared.property(key)?.type, let problem = Self.typeProblem(value, declared: type) {
                    throw LuaRaise("fake.service(\"\(name)\"): property '\(key)' of \(name) is \(type), got \(problem)")
                }
            }
        }
        let link = self.link
        let fake = FakeService(name: name, summary: stack.text(at: 5), declared: declared, properties: initial,
                               methods: methods, events: events) { method, arguments in
            link.onLoop { spec in spec.call(name, method, arguments) }
                ?? .failure(ServiceError(.unavailable, "fake.service('\(name)') was called after its test ended"))
        }
        fakes[name] = fake
        host.binding.substitute(fake)
        return .none
    }
}
