import CLua
import LuaBridge
import Model

/// The registry's deliveries into Lua: a property's change (handler(new, old, change)), an
/// event (handler(payload, info), or a delegate's method), and a subscription's end. A handler's
/// first result is kept for one type test: a boolean is said to be ignored
/// (``noteIgnoredReturn(_:of:delegateMethod:of:)``).
extension ModelBinding: DeliveryDispatcher {
    func deliver(_ change: PropertyChange) throws {
        let stack = vm.stack
        let top = stack.top
        defer { stack.setTop(top) }
        _ = stack.ensure(8)
        let state = stack.state
        _ = crescent_getref(state, tables.changeKeys)                // keys
        _ = crescent_getref(state, change.subscription.token)        // keys handle
        _ = lua_getiuservalue(state, -1, 1)                          // keys handle handler
        _ = crescent_getref(state, change.subscription.detail)       // keys handle handler prototype
        push(change.new, onto: stack)                                // keys handle handler prototype new
        if let old = change.old { push(old, onto: stack) } else { stack.pushNil() }
        crescent_push_change(state, -6, -3, change.initial ? 1 : 0, lua_Integer(change.coalesced), -5)
                                                                     // keys handle handler prototype new old change
        lua_rotate(state, -4, -1)                                    // keys handle handler new old change prototype
        stack.pop()
        try running.withOwner(of: change.subscription) { try vm.call(arguments: 3, results: 1) }   // keys handle result
        if lua_type(state, -1) == LUA_TBOOLEAN { noteIgnoredReturn(stack.boolean(at: -1), of: change.subscription) }
    }

    func deliver(_ event: EventDelivery) throws {
        let stack = vm.stack
        let top = stack.top
        defer { stack.setTop(top) }
        _ = stack.ensure(8)
        _ = crescent_getref(stack.state, event.subscription.token)   // handle
        _ = crescent_getuservalue(stack.state, -1)                   // handle handler
        if case .allEvents = event.subscription.target {
            // A delegate: call delegate:<event>(payload) when it has such a method.
            let status = crescent_pgetfield(stack.state, -1, event.event)  // handle delegate method
            if status != LUA_OK { throw stack.popError(status) }
            guard stack.type(at: -1) == .function else { return }
            lua_rotate(stack.state, -2, 1)                           // handle method delegate
            pushPayload(event, onto: stack)
            try withReportedProperties(event.payload, of: event.object) {
                try running.withOwner(of: event.subscription) { try vm.call(arguments: 2, results: 1) }  // handle result
            }
            if lua_type(stack.state, -1) == LUA_TBOOLEAN {
                noteIgnoredReturn(stack.boolean(at: -1), of: event.subscription, delegateMethod: event.event, of: event.object)
            }
            return
        }
        lua_rotate(stack.state, -2, 1)                               // handler handle
        pushPayload(event, onto: stack)                              // handler handle payload
        stack.newTable(fieldCount: 4)                                // handler handle payload info
        tables.eventInfoMetatable.push(onto: stack)
        lua_setmetatable(stack.state, -2)
        stack.push(event.name)
        stack.rawSet(-2, "name")
        stack.push(event.event)
        stack.rawSet(-2, "event")
        if let object = event.object {
            pushObject(object.object, onto: stack)
            stack.rawSet(-2, "object")
        }
        stack.pushValue(at: -3)
        stack.rawSet(-2, "sub")
        lua_rotate(stack.state, -3, -1)                              // handler payload info handle
        stack.pop()
        try withReportedProperties(event.payload, of: event.object) {
            try running.withOwner(of: event.subscription) { try vm.call(arguments: 2, results: 1) }      // result
        }
        if lua_type(stack.state, -1) == LUA_TBOOLEAN { noteIgnoredReturn(stack.boolean(at: -1), of: event.subscription) }
    }

    /// Pushes an event's payload; a change set gets the shape that names a misspelled field
    /// (`cs.insertd`).
    private func pushPayload(_ event: EventDelivery, onto stack: LuaStack) {
        switch event.payload {
        case .value(let value): pushServicePayload(value, of: event, onto: stack)
        case .opaque(let object):
            if let posted = object as? PostedPayload {
                posted.value.push(onto: stack)
            } else if let reported = object as? ReportedEvent {
                pushServicePayload(reported.payload, of: event, onto: stack)
            } else {
                stack.pushNil()
            }
        }
    }

    private func pushServicePayload(_ value: Value, of event: EventDelivery, onto stack: LuaStack) {
        push(value, onto: stack)
        if event.event == "didChange", ChangeSet.isChangeSet(value) {
            tables.changeSetMetatable.push(onto: stack)
            lua_setmetatable(stack.state, -2)
        }
    }

    func subscriptionEnded(_ subscription: Subscription) {
        delegates[subscription.id] = nil
        if case .property(let object, let key) = subscription.target, !registry.isObserved(object, key: key) {
            changePrototypes[ChangePrototypeKey(object: object.id, key: key)] = nil
        }
        guard subscription.token != 0, vm.isOpen else { return }
        vm.unref(subscription.token)
        subscription.token = 0
    }
}
