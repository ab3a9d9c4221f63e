import Model

extension ModelBinding {
    /// For a run that ended on its own: the subscriptions still live to a service that runs only
    /// once started and was never started (`observe(services.location, "location", f)` without
    /// `services.location:start()`). A subscription keeps nothing running, so the run ended at
    /// once with no update, and nothing said why. One note per service, at its first
    /// subscription's site. A service the script called (`location:current()`) may post events
    /// unstarted (its `didFail`): its subscriptions are not noted.
    func unstartedServiceNotes() -> [String] {
        let called = Set(objects.values.filter { $0.box.object.isService && $0.box.wasCalled }.map(\.box.name))
        var found: [(service: String, count: Int, site: String)] = []
        for subscription in registry.subscriptions {
            guard let name = Self.serviceName(of: subscription.target), !startedServices.contains(name), !called.contains(name),
                  services.first(where: { $0.name == name })?.isStartable == true else { continue }
            if let index = found.firstIndex(where: { $0.service == name }) {
                found[index].count += 1
            } else {
                found.append((name, 1, subscription.site))
            }
        }
        return found.map { name, count, site in
            let subscriptions = count == 1 ? "1 subscription to \(name) was" : "\(count) subscriptions to \(name) were"
            return "\(site): \(subscriptions) live when the run ended, but \(name) was never started, so no update came: "
                + "services.\(name):start() starts it (a subscription alone keeps nothing running)"
        }
    }

    /// The service a subscription listens to: the object's, or the prefix of an event name
    /// (`on("location.didUpdateLocations", f)`); nil for anything else.
    private static func serviceName(of target: Subscription.Target) -> String? {
        switch target {
        case .property(let handle, _), .allEvents(let handle), .event(_, let handle?):
            return handle.object.isService ? handle.typeName : nil
        case .event(let name, nil):
            return name.firstIndex(of: ".").map { String(name[..<$0]) }
        }
    }
}
