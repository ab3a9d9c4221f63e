import Model
import Synchronization

/// A service a run-time plugin provides: its interface built from the plugin's declaration, its
/// properties held here (the plugin sets them), its methods forwarded to the plugin.
///
/// To scripts it is a service like the Swift ones: the binding checks arguments against the
/// declaration, keeps the completion contract and delivers observation and events.
final class PluginService: Service {
    /// Runs one method call in the plugin: the method as declared, the checked arguments and the
    /// one reply.
    typealias Call = @Sendable (_ method: ServiceDeclaration.Method, _ arguments: Arguments, _ reply: Reply) -> Void

    let interface: AnyInterface
    let changes = ChangePublisher()
    private let values: Mutex<[String: Value]>

    init(_ declaration: ServiceDeclaration, call: @escaping Call) {
        values = Mutex(Dictionary(declaration.properties.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last }))
        interface = Self.interface(declaration, call: call)
    }

    /// The interface `declaration` describes, its methods forwarded to `call`.
    static func interface(_ declaration: ServiceDeclaration, call: @escaping Call) -> AnyInterface {
        AnyInterface(
            name: declaration.name, summary: declaration.summary,
            properties: declaration.properties.map { property in
                AnyPropertySpec(name: property.name, type: property.type, summary: property.doc) { object in
                    // Invariant: the binding reads properties only of the object this interface belongs to.
                    unsafeDowncast(object, to: PluginService.self).value(of: property.name)
                }
            },
            methods: declaration.methods.map { method in
                AnyMethodSpec(name: method.name, arguments: method.arguments, result: method.returns, summary: method.doc) { _, arguments, reply in
                    call(method, arguments, reply)
                }
            },
            events: declaration.events
        )
    }

    /// The current value of property `key` (nil before the plugin sets it).
    func value(of key: String) -> Value {
        values.withLock { $0[key] ?? .null }
    }

    /// Sets property `key` and reports the change; false when no such property is declared.
    @discardableResult
    func set(_ key: String, to value: Value) -> Bool {
        guard interface.property(key) != nil else { return false }
        // Reported under the lock, so reports arrive in the order the changes were made.
        values.withLock { values in
            values[key] = value
            changes.propertyChanged(key, to: value)
        }
        return true
    }

    /// The warning for a `set` of a value whose type is not the property's: it is dropped.
    static func wrongType(set property: String, to value: Value, declared: String) -> String {
        "set '\(property)' to \(value.typeName), which is not its type \(declared); dropped"
    }

    /// The payload to deliver for an `emit` (nil when it is dropped) and the warning to give,
    /// if any: a payload of the wrong type is dropped, a field a `{ a, b }` payload does not list
    /// is left out of it.
    static func checkEmit(_ event: String, payload: Value, declared: String) -> (payload: Value?, warning: String?) {
        switch ServiceDeclaration.checkPayload(payload, declared: declared) {
        case .fits: (payload, nil)
        case .trimmed(let trimmed, let warning): (trimmed, "emitted '\(event)' with \(warning)")
        case .dropped(let warning): (nil, "emitted '\(event)' with \(warning); dropped")
        }
    }

    /// Emits event `name`; false when no such event is declared.
    @discardableResult
    func emit(_ name: String, _ payload: Value) -> Bool {
        guard interface.event(name) != nil else { return false }
        changes.emit(name, payload)
        return true
    }
}
