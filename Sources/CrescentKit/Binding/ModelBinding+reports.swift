import CLua
import LuaBridge
import Model
import NIOCore

/// Reports from the model: how each object's changes reach the loop, in order and in step with
/// what scripts read, and the delivery rounds they start.
extension ModelBinding {
    // MARK: Changes from the model

    /// Carries the object's reports to the loop in the order they were made: directly when made
    /// on it with none from another thread still waiting in its mailbox (they are queued for the
    /// next delivery round, never delivered inside the setter), else through the mailbox, behind
    /// those, taken out by a loop job or by a read that comes first (``read(_:of:)``).
    func attachSink(to box: ObjectBox) {
        let link = self.link
        let bound = NIOLoopBound(self, eventLoop: link.eventLoop)
        let boundBox = NIOLoopBound(box, eventLoop: link.eventLoop)
        let mailbox = box.reports
        box.object.changes.setBacklogProbe { mailbox.waiting }
        box.sinkID = box.object.changes.attach { change in
            if bound.eventLoop.inEventLoop, mailbox.isEmpty {
                // The common case, a setter run by a method inside a turn, allocates nothing.
                if bound.value.running.inTurn {
                    bound.value.applyOnLoop(change, to: boundBox.value)
                } else {
                    link.turn { binding in binding.applyOnLoop(change, to: boundBox.value) }
                }
                return
            }
            guard mailbox.post(change) else { return }
            let queued = link.later { binding in binding.applyReports(of: boundBox.value) }
            if !queued { _ = mailbox.take() }
        }
    }

    /// Applies the reports waiting in `box`'s mailbox up to number `last` (all by default).
    func applyReports(of box: ObjectBox, through last: UInt64 = .max) {
        for change in box.reports.take(through: last) { apply(change, to: box) }
    }

    /// Reads `property` of `box` for a script: the reports of every change the value shows are
    /// applied first (queued for delivery ahead of any subscription made after this read), so a
    /// script that reads and then subscribes hears each later change once and no earlier one.
    /// The value and the reports agree when no report was posted while it was read (an object
    /// whose every change reports under the lock its reads take, like ``ObservableCollection``,
    /// posts its report before a read can see the change); otherwise it is read again.
    func read(_ property: AnyPropertySpec, of box: ObjectBox) -> Value {
        if let pinned = box.pinned?[property.name] { return pinned }
        let mailbox = box.reports
        var attempts = 0
        while true {
            let before = mailbox.lastPosted
            let value = property.read(box.object)
            attempts += 1
            // Bounded: an object changing faster than it can be read keeps the last value read.
            if mailbox.lastPosted == before || attempts == 8 {
                if !mailbox.isEmpty { applyReports(of: box, through: before) }
                return value
            }
        }
    }

    /// Applies a report made on the loop, at once: a change the running code made itself, which
    /// it sees at once even inside a handler of the object's events (see ``ReportedEvent``).
    func applyOnLoop(_ change: ModelChange, to box: ObjectBox) {
        if case .property(let key, let value) = change, box.pinned != nil { box.pinned?[key] = value }
        apply(change, to: box)
    }

    /// Applies one report: clears the cached property value and queues deliveries. An event
    /// carries the properties reported before it (``ReportedEvent``).
    func apply(_ change: ModelChange, to box: ObjectBox) {
        switch change {
        case .property(let key, let value):
            box.reported[key] = value
            forgetCachedValue(of: key, in: box)
            registry.propertyChanged(box.handle, key: key, to: value)
        case .event(let name, let payload):
            let fullName = "\(box.name).\(name)"
            // Let go of the reported values either way: held, a collection's `items` would make
            // its next change copy the whole list.
            let properties = box.reported
            box.reported = [:]
            guard registry.hasSubscribers(to: fullName, of: box.handle) else {
                if name == "didFail" { warnOfUnheardFailure(payload, of: box) }
                break
            }
            let posted: EventPayload = properties.isEmpty ? .value(payload) : .opaque(ReportedEvent(payload, properties: properties))
            registry.post(fullName, event: name, object: box.handle, payload: posted)
        case .events(let name, let payloads):
            guard let first = payloads.first else { break }
            // The properties reported before the batch go with its first event, as they would
            // one by one.
            guard box.reported.isEmpty else {
                apply(.event(name: name, payload: first), to: box)
                apply(.events(name: name, payloads: Array(payloads.dropFirst())), to: box)
                return
            }
            registry.post("\(box.name).\(name)", event: name, object: box.handle, payloads: payloads)
        }
        scheduleDelivery()
    }

    /// A started service's first `didFail` that nothing listens for is written as a warning: a
    /// tracker started without gpsd would otherwise wait in silence for a fix that never comes.
    /// Once per service; a script that handles `didFail` hears every failure itself.
    private func warnOfUnheardFailure(_ payload: Value, of box: ObjectBox) {
        guard box.object.isService, startedServices.contains(box.name), !unheardFailureWarned.contains(box.name) else { return }
        unheardFailureWarned.insert(box.name)
        let message = payload["message"].stringValue.map {
            ServiceError.describe(code: payload["code"].stringValue ?? "", message: $0,
                                  service: payload["service"].stringValue ?? "", method: payload["method"].stringValue ?? "")
        } ?? payload.jsonText
        host.warn("\(box.name) failed and nothing listens for "
                  + "on(\"\(box.name).didFail\", handler), so this is said once: \(message)")
    }

    /// Drops the cached value of property `key` of `box`'s userdata, so the next read asks again.
    func forgetCachedValue(of key: String, in box: ObjectBox) {
        guard let userdata = objects[ObjectIdentifier(box.object)]?.userdata else { return }
        let stack = vm.stack
        userdata.push(onto: stack)                                   // userdata
        for slot: Int32 in 1...2 {
            if lua_getiuservalue(stack.state, -1, slot) == LUA_TTABLE { // userdata cache
                stack.push(key)
                stack.pushNil()
                lua_rawset(stack.state, -3)
            }
            stack.pop()                                              // userdata
        }
        stack.pop()
    }

    /// Runs `body` (a handler of an event of `object`) with reads of `object`'s properties
    /// pinned to `reported` (see ``ReportedEvent``); without a reported event, just runs it.
    func withReportedProperties(_ payload: EventPayload, of object: ObjectHandle?, _ body: () throws -> Void) rethrows {
        guard case .opaque(let posted) = payload, let reported = posted as? ReportedEvent, let object,
              let box = objects[ObjectIdentifier(object.object)]?.box else { return try body() }
        let outer = box.pinned
        // Cached values are newer than the event: forgotten while pinned and again after.
        for key in reported.properties.keys { forgetCachedValue(of: key, in: box) }
        box.pinned = reported.properties
        defer {
            box.pinned = outer
            for key in reported.properties.keys { forgetCachedValue(of: key, in: box) }
        }
        try body()
    }

    // MARK: Delivery

    /// Schedules a delivery round on a later turn when the registry has something queued (one
    /// at a time; none once the run is ending).
    func scheduleDelivery() {
        guard registry.hasPending, !deliveryScheduled, host.isRunning else { return }
        deliveryScheduled = true
        host.enqueue {
            self.deliveryScheduled = false
            self.registry.deliverPending()
        }
    }
}
