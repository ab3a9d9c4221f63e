import Model
import Synchronization

/// A service made by a spec (`fake.service(name, { properties, methods, events })`): scripts see
/// it as `services.<name>`, with read-only properties the spec sets, methods the spec's Lua
/// functions answer (the completion contract, await and argument checks hold as for any
/// service) and events the spec emits.
///
/// When a service of that name is declared (a standard one, a plugin's), the fake keeps its
/// declaration: the same arguments are checked, `help()` reads the same; the spec only answers.
/// A name no one declares gets methods taking up to ``looseArity`` arguments of any type.
final class FakeService: Service {
    let changes = ChangePublisher()
    let interface: AnyInterface
    private let values: PropertyValues

    /// Arguments a method of an undeclared fake takes.
    static let looseArity = 8

    /// Answers a call on the loop: the method's name and its arguments.
    typealias Dispatch = @Sendable (String, Arguments) -> Result<Value, ServiceError>

    /// A fake named `name` over `declared` (nil when nothing of that name is declared).
    init(name: String, summary: String?, declared: AnyInterface?, properties: [String: Value], methods: [String],
         events: [String], dispatch: @escaping Dispatch) {
        let values = PropertyValues(properties)
        self.values = values
        var interface = Interface<FakeService>(name: name, summary: summary ?? declared?.summary ?? "A fake service (crescent test).")
        var propertyNames = declared?.properties.map(\.name) ?? []
        propertyNames += properties.keys.sorted().filter { !propertyNames.contains($0) }
        for property in propertyNames {
            let spec = declared?.property(property)
            interface.property(property, type: spec?.type ?? "value", spec?.summary ?? "Set by the spec.") { _ in
                values.state.withLock { $0[property] ?? .null }
            }
        }
        var methodNames = declared?.methods.map(\.name) ?? []
        methodNames += methods.filter { !methodNames.contains($0) }
        let loose = (1...Self.looseArity).map { ArgumentSpec("a\($0)", .any, "Any value.", optional: true) }
        for method in methodNames {
            let spec = declared?.method(method)
            let arguments = spec?.arguments ?? loose
            let doc = spec?.summary ?? "Answered by the spec."
            if spec.map({ !$0.hasCompletion }) ?? false {
                if spec?.result == nil {
                    interface.action(method, arguments, doc) { _, arguments throws(ServiceError) in
                        _ = try dispatch(method, arguments).get()
                    }
                } else {
                    interface.function(method, arguments, returns: spec?.result ?? "value", doc) { _, arguments throws(ServiceError) in
                        try dispatch(method, arguments).get()
                    }
                }
            } else {
                interface.method(method, arguments, returns: spec?.result ?? "value", doc, replying: { _, arguments, reply in
                    reply(dispatch(method, arguments))
                })
            }
        }
        var eventNames = declared?.events.map(\.name) ?? []
        eventNames += events.filter { !eventNames.contains($0) }
        for event in eventNames {
            let spec = declared?.event(event)
            interface.event(event, payload: spec?.payload ?? "value", spec?.summary ?? "Emitted by the spec.")
        }
        self.interface = interface.erased
    }

    /// Sets property `key`; observers hear of it as of any service's change.
    func set(_ key: String, _ value: Value) {
        values.state.withLock { $0[key] = value }
        changes.propertyChanged(key, to: value)
    }

    /// Emits `event` with `payload`.
    func emit(_ event: String, _ payload: Value) {
        changes.emit(event, payload)
    }
}

/// A fake's property values, shared by the fake and its declaration's getters.
private final class PropertyValues: Sendable {
    let state: Mutex<[String: Value]>

    init(_ values: [String: Value]) { state = Mutex(values) }
}
