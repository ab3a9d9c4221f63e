import CLua
import LuaBridge
import Model

/// A Lua value posted with `post(name, payload)`, pinned until its delivery is over.
final class PostedPayload {
    let value: LuaRef
    init(_ value: LuaRef) { self.value = value }
}

extension ModelBinding {
    /// `observe`, `on`, `post` and `subscriptions`.
    func installObservationGlobals() {
        vm.register("observe") { [unowned self] stack in
            try self.checkRunning("observe")
            guard let box = self.anyObjectBox(at: 1, in: stack) else {
                throw stack.argumentError(1, function: "observe", expected: "service or model object")
            }
            try ExtraArguments.check(stack, takes: 4, signature: "observe(object, key, handler[, options])",
                                     arity: "an object, a key, a handler and options (optional)")
            return try self.observe(box, keyAt: 2, handlerAt: 3, optionsAt: 4, stack, site: .global("observe"))
        }
        vm.register("on") { [unowned self] stack in
            try self.checkRunning("on")
            if let box = self.anyObjectBox(at: 1, in: stack) { throw Self.objectGivenToOn(box, stack) }
            let name = try stack.checkString(1, function: "on")
            try self.checkServiceEvent(name, stack)
            try ExtraArguments.check(stack, takes: 3, signature: "on(name, handler[, options])", arity: "a name, a handler and options (optional)")
            return try self.on(name, object: nil, event: name, handlerAt: 2, optionsAt: 3, stack, site: .global("on"))
        }
        vm.register("post") { [unowned self] stack in
            try self.checkRunning("post")
            let name = try stack.checkString(1, function: "post")
            // No `on` can listen for the empty name (it is refused there), so the post reaches no one.
            guard !name.isEmpty else {
                throw CallSite.global("post").invalid(1, "the name is empty, so no subscription can hear it: post a name the script listens "
                                                      + "for (post(\"refreshed\", payload) with on(\"refreshed\", handler))")
            }
            // A service's event posted by the script reached `on("location.didFail")` but not
            // `services.location:on("didFail")`: two ways to listen that disagreed.
            if let dot = name.firstIndex(of: "."), let entry = self.services.first(where: { $0.name == name[..<dot] }) {
                let prefix = name[..<dot], event = String(name[name.index(after: dot)...])
                // Only a name the service has is called its event: `http.done` is not one (http
                // has none), but its prefix is still the service's.
                let interface = self.currentInterface(of: entry)
                let what = interface.event(event) != nil ? "'\(name)' is an event of the \(prefix) service, which only the service posts"
                    : "'\(prefix).' is the prefix of the \(prefix) service's events (\(NameSuggestion.listing("events", interface.events.map(\.name), suggesting: nil))), "
                        + "which only the service posts, so the script's own names must not start with it"
                throw LuaRaise.badArgument(1, to: "post", what + "; post a name of the script's own (\"refreshed\"), or fake the service in a spec "
                                           + "(fake.service)")
            }
            try ExtraArguments.check(stack, takes: 2, signature: "post(name[, payload])", arity: "a name and a payload (optional)")
            if self.ownEventCandidates.contains(name) { self.postedOwnEvents.insert(name) }
            stack.pushValue(at: 2)
            let payload = PostedPayload(self.vm.ref(from: stack))
            self.registry.post(name, payload: .opaque(payload))
            return .none
        }
        vm.register("subscriptions") { [unowned self] stack in
            guard stack.top == 0 else {
                throw LuaRaise("subscriptions() takes no arguments, got \(stack.top): it lists every subscription; "
                               + "pick from the list it returns (each has owner, target, site, deliveries, errors and sub)")
            }
            let all = self.registry.subscriptions
            stack.newTable(arrayCount: Int32(clamping: all.count))
            for (index, subscription) in all.enumerated() {
                stack.newTable(fieldCount: 7)
                stack.push(subscription.ownerName)
                stack.rawSet(-2, "owner")
                stack.push(subscription.targetDescription)
                stack.rawSet(-2, "target")
                stack.push(subscription.site)
                stack.rawSet(-2, "site")
                stack.push(subscription.deliveries)
                stack.rawSet(-2, "deliveries")
                stack.push(Int(subscription.errors))
                stack.rawSet(-2, "errors")
                self.pushHandle(of: subscription, onto: stack)
                stack.rawSet(-2, "sub")
                stack.rawSet(-2, index: Int64(index + 1))
            }
            return .one
        }
    }

    /// `obj:observe(key, handler[, opts])`, `obj:on(event, handler[, opts])`,
    /// `obj:addObserver(delegate)`, `obj:removeObserver(delegate)`.
    func observationMethods(owner: String, type: @escaping () -> LuaObjectType<ObjectBox>?) -> [String: LuaFunctionBody] {
        [
            "observe": { [unowned self] stack in
                let signature = "\(owner):observe(key, handler[, options])"
                let box = try self.checkSelf(stack, type(), signature: signature)
                try ExtraArguments.check(stack, takes: 4, signature: signature, arity: "a key, a handler and options (optional)", isMethod: true)
                return try self.observe(box, keyAt: 2, handlerAt: 3, optionsAt: 4, stack, site: .method("observe", signature))
            },
            "on": { [unowned self] stack in
                let signature = "\(owner):on(event, handler[, options])"
                let site = CallSite.method("on", signature)
                let box = try self.checkSelf(stack, type(), signature: signature)
                let event = try site.string(stack, 2)
                guard box.interface.event(event) != nil else {
                    throw site.invalid(2, Self.undeclaredEvent(event, of: box.interface))
                }
                try ExtraArguments.check(stack, takes: 4, signature: signature, arity: "an event, a handler and options (optional)", isMethod: true)
                return try self.on("\(box.name).\(event)", object: box.handle, event: event, handlerAt: 3, optionsAt: 4, stack, site: site)
            },
            "addObserver": { [unowned self] stack in
                let signature = "\(owner):addObserver(observer)"
                let box = try self.checkSelf(stack, type(), signature: signature)
                guard stack.type(at: 2) == .table || stack.type(at: 2) == .userdata, let identity = lua_topointer(stack.state, 2) else {
                    throw CallSite.method("addObserver", signature).mismatch(stack, 2, expected: "an object with event methods (a table)")
                }
                if self.delegate(identity, of: box) != nil { return .none }
                if let warning = Self.delegateWarning(at: 2, events: box.interface.events.map(\.name), signature: signature, of: box.name, stack) {
                    luaL_where(stack.state, 1)
                    let place = stack.text(at: -1) ?? ""
                    stack.pop()
                    self.host.warn("\(place)\(warning)")
                }
                let subscription = self.subscribe(stack, handlerAt: 2) { token in
                    self.registry.onAllEvents(of: box.handle, site: self.location(stack), owner: self.running.currentScope,
                                              token: token, handler: .dispatched)
                }
                self.delegates[subscription.id] = Delegate(observer: identity, object: ObjectIdentifier(box.object), subscription: subscription)
                return .none
            },
            "removeObserver": { [unowned self] stack in
                let box = try self.checkSelf(stack, type(), signature: "\(owner):removeObserver(observer)")
                guard let identity = lua_topointer(stack.state, 2) else { return .none }
                self.delegate(identity, of: box)?.subscription.cancel()
                return .none
            },
        ]
    }

    /// An observer with no method named after any of `events` is never called until it gets one
    /// (methods are looked up at each event): a warning names the events, and the closest one to
    /// a method it has (`didUpdateLocation`). Beside a right one, a method a few letters from an
    /// event it lacks (`didfail`) is named too: that event would be skipped in silence. Nil when
    /// neither, or the object has no events.
    private static func delegateWarning(at index: Int32, events: [String], signature: String, of name: String,
                                        _ stack: LuaStack) -> String? {
        guard !events.isEmpty else { return nil }
        let handled = events.filter { hasMethod($0, at: index, stack) }
        var closest: (method: String, event: String)?
        // Beside a right method, only a function one letter from an event it does not handle
        // (`didfail` beside `didUpdateLocations`) is a misspelling, not a helper.
        for (key, isFunction) in fieldNames(at: index, stack) where closest == nil && !events.contains(key) {
            if handled.isEmpty || isFunction,
               let event = NameSuggestion.closest(to: key, among: events, prefixes: handled.isEmpty), !handled.contains(event) {
                closest = (key, event)
            }
        }
        guard handled.isEmpty else {
            guard let closest else { return nil }
            return "\(signature): the observer's method '\(closest.method)' is named after no event of \(name), so it is never called "
                + "(events: \(events.joined(separator: ", ")); did you mean '\(closest.event)'?)"
        }
        let hint = closest.map { "; did you mean '\($0.event)' for '\($0.method)'?" } ?? ""
        return "\(signature): the observer has no method named after an event of \(name), so it is not called until it has one (events: \(events.joined(separator: ", "))\(hint))"
    }

    /// Whether the value at `index` has a function at `name`, read raw along its metatables'
    /// `__index` tables (a class's methods), at most 16 deep: no script code runs (a hostile
    /// `__index` function must not raise inside Swift), and an `__index` function counts as
    /// having it, since it may answer any name.
    /// A metatable marked `__watchOnly` (the controllers' base) has an `__index` function that
    /// answers no name: the walk ends there.
    private static func hasMethod(_ name: String, at index: Int32, _ stack: LuaStack) -> Bool {
        let base = stack.top
        defer { stack.setTop(base) }
        stack.pushValue(at: index)                                   // v
        for _ in 0..<16 {
            if stack.type(at: -1) == .table {
                let found = stack.rawGet(-1, name)                   // v field
                stack.pop()                                          // v
                if found == .function { return true }
            }
            guard lua_getmetatable(stack.state, -1) != 0 else { return false }   // v mt
            if stack.rawGet(-1, "__watchOnly") == .boolean { return false }      // v mt flag
            stack.pop()                                              // v mt
            let next = stack.rawGet(-1, "__index")                   // v mt next
            if next == .function { return true }
            guard next == .table else { return false }
            lua_rotate(stack.state, -3, 1)                           // next v mt
            stack.pop(2)                                             // next
        }
        return false
    }

    /// The string keys of the value at `index` and of the `__index` tables along its metatables
    /// (a controller's classes; not the controllers' base, whose helpers are no events), each
    /// with whether it holds a function, read raw as ``hasMethod(_:at:_:)`` reads: a delegate's
    /// misspelled event method is on its class, not on the instance.
    private static func fieldNames(at index: Int32, _ stack: LuaStack) -> [(String, Bool)] {
        let base = stack.top
        defer { stack.setTop(base) }
        var names: [(String, Bool)] = []
        stack.pushValue(at: index)                                   // t
        for _ in 0..<16 {
            guard stack.type(at: -1) == .table else { break }
            let table = stack.top
            if lua_getmetatable(stack.state, table) != 0 {           // t mt
                let watchOnly = stack.rawGet(-1, "__watchOnly") == .boolean        // t mt flag
                stack.setTop(table)                                  // t
                if watchOnly { break }
            }
            stack.pushNil()                                          // t key
            while lua_next(stack.state, table) != 0 {                // t key value
                if stack.type(at: -2) == .string, let key = stack.text(at: -2), !key.hasPrefix("__") {
                    names.append((key, stack.type(at: -1) == .function))
                }
                stack.pop()                                          // t key
            }
            guard lua_getmetatable(stack.state, table) != 0 else { break }       // t mt
            guard stack.rawGet(-1, "__index") == .table, lua_rawequal(stack.state, -1, table) == 0 else { break }  // t mt next
            lua_rotate(stack.state, table, 1)                        // next t mt
            stack.setTop(table)                                      // next
        }
        return names
    }

    /// `on(services.location, "didFail", f)`: the global `on` takes a name; the object's own
    /// `on` (or the name `location.didFail`) is what was meant.
    private static func objectGivenToOn(_ box: ObjectBox, _ stack: LuaStack) -> LuaRaise {
        let event = stack.type(at: 2) == .string ? stack.text(at: 2) ?? "EVENT" : "EVENT"
        let receiver = box.object.isService ? "services.\(box.name)" : box.name
        var forms = "\(receiver):on(\"\(event)\", handler)"
        if box.object.isService { forms += " or on(\"\(box.name).\(event)\", handler)" }
        return CallSite.global("on").invalid(1, "an event name string expected, got \(box.name): write \(forms)")
    }

    /// `'didUpdate' is not an event of location (events: …; did you mean 'didUpdateLocations'?)`.
    static func undeclaredEvent(_ event: String, of interface: AnyInterface) -> String {
        let names = interface.events.map(\.name)
        let listing = NameSuggestion.listing("events", names, suggesting: NameSuggestion.closest(to: event, among: names))
        return "'\(event)' is not an event of \(interface.name) (\(listing))"
    }

    /// The registration of `observer` as a delegate of `box`, if any.
    private func delegate(_ observer: UnsafeRawPointer, of box: ObjectBox) -> Delegate? {
        let object = ObjectIdentifier(box.object)
        return delegates.values.first { $0.observer == observer && $0.object == object }
    }

    // MARK: Subscribing

    private func observe(_ box: ObjectBox, keyAt keyIndex: Int32, handlerAt handlerIndex: Int32, optionsAt optionsIndex: Int32,
                         _ stack: LuaStack, site: CallSite) throws -> LuaReturn {
        let key = try site.string(stack, keyIndex)
        guard box.interface.property(key) != nil else {
            let names = box.interface.properties.map(\.name)
            let listing = NameSuggestion.listing("properties", names, suggesting: NameSuggestion.closest(to: key, among: names))
            throw site.invalid(keyIndex, "'\(key)' is not a property of \(box.name) (\(listing))")
        }
        try site.function(stack, handlerIndex)
        let options = try readOptions(optionsIndex, stack, site: site, allowed: ["initial", "coalesce", "once", "latest"])
        if options["latest"] == true {
            try wrapLatest(handlerAt: handlerIndex, context: "\(box.handle.typeName).\(key)", stack)
        }
        // The registry reads the initial value now: the reports of the changes it may show go
        // first, so they are not delivered to this subscription as changes (see read(_:of:)).
        if !box.reports.isEmpty { applyReports(of: box) }
        let subscription = subscribe(stack, handlerAt: handlerIndex, property: (box, key)) { token in
            registry.observe(box.handle, key: key, initial: options["initial"] ?? true, coalesce: options["coalesce"] ?? true,
                             once: options["once"] ?? false, site: location(stack), owner: running.currentScope, token: token,
                             handler: .dispatched)
        }
        _ = crescent_getref(stack.state, subscription.token)
        return .one
    }

    private func on(_ name: String, object: ObjectHandle?, event: String, handlerAt handlerIndex: Int32, optionsAt optionsIndex: Int32,
                    _ stack: LuaStack, site: CallSite) throws -> LuaReturn {
        try site.function(stack, handlerIndex)
        let options = try readOptions(optionsIndex, stack, site: site, allowed: ["once", "latest"])
        if options["latest"] == true { try wrapLatest(handlerAt: handlerIndex, context: "on \(name)", stack) }
        let subscription = subscribe(stack, handlerAt: handlerIndex) { token in
            registry.on(name, object: object, once: options["once"] ?? false, site: location(stack),
                        owner: running.currentScope, token: token, handler: .dispatched)
        }
        _ = crescent_getref(stack.state, subscription.token)
        return .one
    }

    /// `{ latest = true }`: replaces the handler at `handlerIndex` with one that runs it as a task
    /// per delivery and cancels the task of the delivery before when it is still running (waiting
    /// on a service), so only the newest delivery's work reaches the view. Its errors name the
    /// subscription (`target`: `collection.count`, `on name`) and its site, as a plain handler's.
    private func wrapLatest(handlerAt handlerIndex: Int32, context target: String, _ stack: LuaStack) throws {
        if latestWrapper == nil {
            try Prelude.latest.load(into: vm)
            vm.pushFunction(host.taskFunction(ownsSpawns: true, contextFirst: true)) // chunk task
            try vm.call(arguments: 1, results: 1)                    // wrap
            latestWrapper = vm.ref()
        }
        latestWrapper?.push(onto: stack)                             // wrap
        stack.pushValue(at: handlerIndex)                            // wrap handler
        stack.push("error in \(target) handler (subscribed at \(location(stack)))") // wrap handler context
        try vm.call(arguments: 2, results: 1)                        // latest
        crescent_replace(stack.state, handlerIndex)
    }

    /// Makes a subscription whose handle userdata is pinned (its slot is the token) and holds the
    /// handler (a function or a delegate) as its user value; for a property, the subscription's
    /// `detail` is the reference of the prototype of its change tables, shared by every
    /// subscription of that property (kept apart from the handle, whose every user value slot
    /// costs 16 bytes per subscription).
    private func subscribe(_ stack: LuaStack, handlerAt handlerIndex: Int32, property: (ObjectBox, String)? = nil,
                           _ make: (Int32) -> Subscription) -> Subscription {
        let subscription = make(0)
        tables.subscriptionType.push(subscription, onto: stack, userValues: 1) // ... handle
        stack.pushValue(at: handlerIndex)
        _ = lua_setiuservalue(stack.state, -2, 1)
        if let (box, key) = property {
            subscription.detail = changePrototype(box, key, stack).id
        }
        subscription.token = vm.refID(from: stack)                   // ...
        return subscription
    }

    /// The prototype shared by the change tables of property `key` of `box`: `object` and `key`
    /// are the same for every delivery, so each change table holds only three fields. It stays
    /// while the property has a subscription (see ``subscriptionEnded(_:)``).
    private func changePrototype(_ box: ObjectBox, _ key: String, _ stack: LuaStack) -> LuaRef {
        let id = ChangePrototypeKey(object: ObjectIdentifier(box.object), key: key)
        if let known = changePrototypes[id] { return known }
        _ = stack.ensure(5)
        stack.newTable(fieldCount: 4)                                // prototype
        stack.newTable(fieldCount: 2)                                // prototype shared
        pushObject(box.object, onto: stack)
        stack.rawSet(-2, "object")
        stack.push(key)
        stack.rawSet(-2, "key")
        // A name a change table does not have (`change.intial`) is an error naming the five.
        tables.changeMetamethods.push(onto: stack)                   // prototype shared metamethods
        stack.rawGet(-1, "sharedMetatable")                          // prototype shared metamethods mt
        lua_setmetatable(stack.state, -3)                            // prototype shared metamethods
        stack.pop()                                                  // prototype shared
        stack.rawSet(-2, "__index")                                  // prototype
        tables.changeMetamethods.push(onto: stack)                   // prototype metamethods
        for name in ["__pairs", "__tostring"] {
            stack.rawGet(-1, name)
            stack.rawSet(-3, name)
        }
        stack.pop()
        let prototype = vm.ref(from: stack)                          // (popped)
        changePrototypes[id] = prototype
        return prototype
    }

    /// Pushes the one handle of a live subscription (a new one for a cancelled subscription).
    func pushHandle(of subscription: Subscription, onto stack: LuaStack) {
        if subscription.token != 0 {
            _ = crescent_getref(stack.state, subscription.token)
        } else {
            tables.subscriptionType.push(subscription, onto: stack)
        }
    }

    /// `file.lua:12`: where the running Lua code called us.
    func location(_ stack: LuaStack) -> String {
        luaL_where(stack.state, 1)
        defer { stack.pop() }
        var text = stack.text(at: -1) ?? ""
        // Reached through a controller helper (self:observe, self:on) the caller is the prelude's
        // or a C frame: the site is the script's line that called the helper.
        if text.isEmpty || text.hasPrefix("[crescent"), let place = stack.innermostFilePlace(levels: 12) { text = place }
        if text.hasSuffix(": ") { text.removeLast(2) }
        return text.isEmpty ? "?" : text
    }

    private func readOptions(_ index: Int32, _ stack: LuaStack, site: CallSite, allowed: [String]) throws -> [String: Bool] {
        guard !stack.isNoneOrNil(index) else { return [:] }
        guard stack.type(at: index) == .table else { throw site.mismatch(stack, index, expected: "an options table") }
        var options: [String: Bool] = [:]
        stack.pushNil()
        while lua_next(stack.state, index) != 0 {
            guard let name = stack.text(at: -2), allowed.contains(name) else {
                let key = stack.describe(at: -2)
                stack.pop(2)
                let closest = NameSuggestion.closest(to: key, among: allowed)
                throw site.invalid(index, "unknown option '\(key)' (\(NameSuggestion.listing("options", allowed, suggesting: closest)))")
            }
            guard stack.type(at: -1) == .boolean else {
                let got = stack.typeName(at: -1)
                stack.pop(2)
                throw site.invalid(index, "option '\(name)' must be a boolean, got \(got)")
            }
            options[name] = stack.boolean(at: -1)
            stack.pop()
        }
        return options
    }
}
