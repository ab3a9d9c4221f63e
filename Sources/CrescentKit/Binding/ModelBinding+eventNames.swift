import LuaBridge
import Model
import Services

/// The names given to `on` (the script's and a remote client's) against the services' events: a
/// service's event that does not exist is refused, a name of the script's own that is a
/// service's event is warned about at the end of the turn.
extension ModelBinding {
    /// What a name given to `on` says about a service's event, for the script's `on` and a remote
    /// client's: fine, a warning (a name of the script's own that looks like a service's event),
    /// or refused (a service's prefix with an event it does not have).
    enum EventNameCheck: Equatable {
        case fine
        case warning(String)
        case refused(String)
    }

    /// `on("location.didUpdate", f)`: a name whose prefix is a service's name must be one of
    /// its events, which a subscription that could never fire would otherwise hide. Any other
    /// name is one a script posts itself. Reads the service's interface when it is made, else
    /// its declaration; a plugin's service that declares nothing before it runs is started.
    func checkServiceEvent(_ name: String, _ stack: LuaStack) throws {
        // A name of the script's own that is a service's event: warned at the end of the turn,
        // unless the script posts it (``warnIfServiceEvent(_:_:)``).
        if !name.isEmpty, !name.contains(".") { return warnIfServiceEvent(name, stack) }
        switch eventNameCheck(name, stack) {
        case .fine: return
        case .warning(let message): host.warnAtCaller(message, stack)
        case .refused(let message): throw CallSite.global("on").invalid(1, message)
        }
    }

    /// The check of ``checkServiceEvent(_:_:)``, as a value; `stack` is left as it was.
    func eventNameCheck(_ name: String, _ stack: LuaStack) -> EventNameCheck {
        guard !name.isEmpty else {
            return .refused("the name is empty: give a service's event (\"location.didUpdateLocations\") or a name the script posts")
        }
        guard let dot = name.firstIndex(of: ".") else {
            return serviceEventWarning(name).map(EventNameCheck.warning) ?? .fine
        }
        let prefix = String(name[..<dot])
        let objectTypes = objectInterfaces
        guard let entry = services.first(where: { $0.name == prefix }) else {
            let event = String(name[name.index(after: dot)...])
            // `on("collection.didChnage", f)`: an object type's events (every collection's
            // `didChange`) are as fixed as a service's.
            if let type = objectTypes.first(where: { $0.name == prefix }) {
                return type.event(event) == nil ? .refused(Self.undeclaredEvent(event, of: type)) : .fine
            }
            // `on("locaton.didUpdateLocations", f)`: a script's own name, one letter from a service's
            // (or an object type's). Only when the rest is (close to) an event of it: `file.saved` is a
            // name of the script's own, not a misspelled event of `files`, which has no `saved`.
            let owners = services.map(\.name) + objectTypes.map(\.name)
            if let closest = NameSuggestion.closest(to: prefix, among: owners) {
                guard let interface = services.first(where: { $0.name == closest }).map(currentInterface(of:))
                        ?? objectTypes.first(where: { $0.name == closest }) else { return .fine }
                // A plugin's service not started yet declares nothing to compare with: warned.
                let declaresNothing = interface.events.isEmpty && interface.methods.isEmpty && interface.properties.isEmpty
                let events = interface.events.map(\.name)
                let closestEvent = events.contains(event) ? event : NameSuggestion.closest(to: event, among: events)
                guard declaresNothing || closestEvent != nil else { return .fine }
                // The form proposed names an event the service has (`locator.didUpdate` gives
                // `location.didUpdateLocations`): the script's own spelling of it would raise.
                let owner = services.contains { $0.name == closest } ? "service" : "service or object type"
                return .warning("on(\"\(name)\", handler) listens for the script's own event '\(name)': no \(owner) is named '\(prefix)'; "
                                + "did you mean '\(closest)' (on(\"\(closest).\(closestEvent ?? event)\", handler))?")
            }
            return .fine
        }
        var made = objects.values.first { $0.box.object.isService && $0.box.name == entry.name }
        var interface = made?.box.interface ?? entry.interface
        if made == nil, interface.events.isEmpty, interface.methods.isEmpty, interface.properties.isEmpty {
            // A plugin's service declares its events as the plugin starts, and a plugin that has
            // not started posts nothing: listening to one starts it (as `observe` does), and the
            // name is checked against what it declared. One that cannot start now is not checked.
            let base = stack.top
            guard pushService(named: prefix, onto: stack) else { return .fine }
            stack.setTop(base)
            made = objects.values.first { $0.box.object.isService && $0.box.name == entry.name }
            guard let declared = made?.box.interface else { return .fine }
            interface = declared
        }
        let event = String(name[name.index(after: dot)...])
        guard interface.event(event) == nil else { return .fine }
        return .refused(Self.undeclaredEvent(event, of: interface) + Self.objectEventHint(event, serviceEvents: interface.events.map(\.name)))
    }

    /// `on("process.didExt", f)`: the event (or one close to it) is an object's a service hands
    /// out (a spawned process's `didExit`), which the object's own `on` listens to; empty when
    /// the service has an event close to it, or no such object has one.
    private static func objectEventHint(_ event: String, serviceEvents: [String]) -> String {
        guard NameSuggestion.closest(to: event, among: serviceEvents) == nil else { return "" }
        for object in ObjectInterfaces.standard {
            let names = object.events.map(\.name)
            guard let meant = names.contains(event) ? event : NameSuggestion.closest(to: event, among: names) else { continue }
            return "; did you mean \(object.name)'s '\(meant)'? An object's events are its own: obj:on(\"\(meant)\", handler) "
                + "(\(object.name) events: \(names.joined(separator: ", ")))"
        }
        return ""
    }

    /// `on("didFail", f)` listens for the script's own event (`post("didFail", ...)`), which
    /// is right for a name the script posts; when the name is an event of a service, the script
    /// most likely meant that event (`on("location.didFail", f)`): a warning at its line says
    /// how to write it, and the subscription stays.
    private func serviceEventWarning(_ name: String) -> String? {
        let owners = services.filter { currentInterface(of: $0).event(name) != nil }.map(\.name)
        guard !owners.isEmpty else { return nil }
        let forms = owners.map { "on(\"\($0).\(name)\", handler)" }.joined(separator: " or ")
        let named = owners.count == 1 ? owners[0] : owners.dropLast().joined(separator: ", ") + " and " + (owners.last ?? "")
        return "on(\"\(name)\", handler) listens for the script's own event '\(name)' (post(\"\(name)\", ...)); '\(name)' is an event of "
            + "\(named): \(forms) listens to it"
    }

    /// The script's `on("didFail", f)`: ``serviceEventWarning(_:)``'s warning at its line waits for
    /// the end of the turn, and is dropped when the script posts the name (then it is the script's
    /// own event).
    private func warnIfServiceEvent(_ name: String, _ stack: LuaStack) {
        guard !postedOwnEvents.contains(name), let message = serviceEventWarning(name) else { return }
        let line = host.warningAtCaller(message, stack)
        ownEventCandidates.insert(name)
        pendingOwnEventWarnings.append((name, line))
    }

    /// Writes the `on("didFail", f)` warnings of the turn whose name the script has not posted.
    func flushOwnEventWarnings() {
        guard !pendingOwnEventWarnings.isEmpty else { return }
        let pending = pendingOwnEventWarnings
        pendingOwnEventWarnings.removeAll()
        for (name, line) in pending where !postedOwnEvents.contains(name) { host.writeError(line) }
    }

    /// The interfaces of the objects services hand out (`collection`, `childProcess`, ...),
    /// whose events a script may listen to as `on("collection.didChange", f)`: the standard
    /// ones and any other kind made so far (a plugin's).
    private var objectInterfaces: [AnyInterface] {
        var interfaces = ObjectInterfaces.standard
        for made in objects.values where !made.box.object.isService && !interfaces.contains(where: { $0.name == made.box.interface.name }) {
            interfaces.append(made.box.interface)
        }
        return interfaces
    }

    /// The interface of `entry`'s service as made (a plugin's, with what it declared as it
    /// started), else as declared.
    func currentInterface(of entry: ServiceEntry) -> AnyInterface {
        let made = objects.values.first { $0.box.object.isService && $0.box.name == entry.name }
        return made?.box.interface ?? entry.interface
    }
}
