import Model
import Synchronization
import Testing

// Shared fixtures for the Model tests: a tiny service, a bridge from its publisher to a registry,
// recorders, a seeded random generator and a change-set applier.

/// A tiny service: an integer `count`, an optional string `label`, methods, an action and events.
final class Counter: Service {
    static let declaration = Interface<Counter>(name: "counter", summary: "Counts ticks.") { d in
        d.property("count", type: "integer", "Ticks so far.") { $0.count.value.value }
        d.property("label", type: "string or nil", "An optional label.") { $0.label.value.value }
        d.method("add", [ArgumentSpec("n", .integer, "How many to add.")], returns: "the new count",
                 "Adds n ticks.", immediate: { counter, arguments throws(ServiceError) -> Value in
                     guard let n = Int(value: arguments[0]) else {
                         throw ServiceError(.invalidArgument, "n must be an integer, got \(arguments[0].typeName)")
                     }
                     return counter.count.update { count in
                         count += n
                         return count
                     }.value
                 })
        d.method("rename", [ArgumentSpec("label", .string, "The new label.", optional: true)],
                 returns: "the old label", "Renames the counter.",
                 body: { counter, arguments async throws(ServiceError) -> Value in
                     await Task.yield()
                     let old = counter.label.value
                     counter.label.set(arguments[0].stringValue)
                     return old.value
                 })
        d.method("fail", [], returns: "nothing ever", "Always fails.",
                 body: { _, _ async throws(ServiceError) -> Value in
                     throw ServiceError(.unavailable, "never works")
                 })
        d.action("reset", [], "Sets the count back to zero.", body: { counter, _ throws(ServiceError) in
            counter.count.set(0)
            counter.changes.emit("didReset")
        })
        d.event("didReset", payload: "nil", "The count went back to zero.")
        d.event("didTick", payload: "integer", "One tick, with the new count.")
    }
    static let erasedInterface = declaration.erased

    let changes = ChangePublisher()
    var interface: AnyInterface { Self.erasedInterface }
    let count: Property<Int>
    let label: Property<String?>

    init(count: Int = 0, label: String? = nil) {
        self.count = Property("count", count, changes)
        self.label = Property("label", label, changes)
    }

    var handle: ObjectHandle { ObjectHandle(self) }

    func tick() {
        let now = count.update { count in
            count += 1
            return count
        }
        changes.emit("didTick", now.value)
    }
}

/// Collects what a publisher reports, on any thread.
final class ChangeLog: Sendable {
    private final class Entries: Sendable { let list = Mutex<[ModelChange]>([]) }
    private let entries = Entries()
    let handle: ObjectHandle
    let sinkID: Int

    init(_ object: any ModelObject) {
        handle = ObjectHandle(object)
        let entries = entries
        sinkID = object.changes.attach { change in entries.list.withLock { $0.append(change) } }
    }

    /// Takes what arrived so far.
    func take() -> [ModelChange] { entries.list.withLock { items in defer { items = [] }; return items } }

    /// Forwards what arrived so far to `registry`, as a host does on its loop: property changes
    /// by key, events under `<interface name>.<event>`.
    func forward(to registry: ObserverRegistry) {
        for change in take() {
            switch change {
            case .property(let key, let value):
                registry.propertyChanged(handle, key: key, to: value)
            case .event(let name, let payload):
                registry.post("\(handle.typeName).\(name)", event: name, object: handle, payload: .value(payload))
            case .events(let name, let payloads):
                registry.post("\(handle.typeName).\(name)", event: name, object: handle, payloads: payloads)
            }
        }
    }
}

extension ModelChange {
    /// `count=3` or `didTick(3)`, for compact expectations.
    var text: String {
        switch self {
        case .property(let key, let value): "\(key)=\(value.text)"
        case .event(let name, let payload): "\(name)(\(payload.text))"
        case .events(let name, let payloads): payloads.map { "\(name)(\($0.text))" }.joined(separator: " ")
        }
    }
}

extension Value {
    /// A compact rendering for expectations.
    var text: String {
        switch self {
        case .null: "nil"
        case .bool(let flag): "\(flag)"
        case .integer(let integer): "\(integer)"
        case .number(let number): "\(number)"
        case .string(let string): string
        case .bytes(let bytes): "bytes\(bytes)"
        case .array(let items): "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let fields): "{" + fields.keys.sorted().map { "\($0)=\(fields[$0]!.text)" }.joined(separator: ",") + "}"
        case .model(let model): model.typeName
        case .handle(let handle): "<\(handle.typeName)>"
        case .packed(let models): Value.array(models.values).text
        }
    }
}

extension EventPayload {
    var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }
}

/// Everything the registry reported.
final class Reports {
    var all: [ObserverRegistry.Report] = []

    var failures: [Subscription] {
        all.compactMap { if case .handlerFailed(let subscription, _) = $0 { subscription } else { nil } }
    }
    var autoCancelled: [Subscription] {
        all.compactMap { if case .autoCancelled(let subscription) = $0 { subscription } else { nil } }
    }
    var cycles: [String] {
        all.compactMap { if case .cycle(let text) = $0 { text } else { nil } }
    }
}

/// A registry with its reports, the way tests use it.
func makeRegistry(maxFailures: Int32 = 10, maxChainedRounds: Int = 100) -> (ObserverRegistry, Reports) {
    let reports = Reports()
    let registry = ObserverRegistry(maxFailures: maxFailures, maxChainedRounds: maxChainedRounds) { reports.all.append($0) }
    return (registry, reports)
}

/// A list of lines handlers write to, to check order.
final class Lines {
    var all: [String] = []
    func callAsFunction(_ line: String) { all.append(line) }
}

struct TestFailure: Error {}

extension ObserverRegistry {
    /// `observe` with test defaults.
    @discardableResult
    func watch(_ object: any ModelObject, _ key: String, initial: Bool = true, coalesce: Bool = true, once: Bool = false,
               owner: Scope? = nil, site: String = "test.lua:1",
               _ body: @escaping (PropertyChange) throws -> Void) -> Subscription {
        observe(ObjectHandle(object), key: key, initial: initial, coalesce: coalesce, once: once, site: site,
                owner: owner, handler: .property(body))
    }

    /// `on` with test defaults.
    @discardableResult
    func listen(_ name: String, object: (any ModelObject)? = nil, once: Bool = false, owner: Scope? = nil,
                site: String = "test.lua:2", _ body: @escaping (EventDelivery) throws -> Void) -> Subscription {
        on(name, object: object.map(ObjectHandle.init), once: once, site: site, owner: owner, handler: .event(body))
    }

    /// Posts a script event with a value payload.
    func post(_ name: String, _ payload: Value = .null) {
        post(name, payload: .value(payload))
    }

    /// Delivers rounds until nothing is pending; returns how many rounds ran.
    @discardableResult
    func drain(maxRounds: Int = 10_000) -> Int {
        var rounds = 0
        while hasPending && rounds < maxRounds {
            deliverPending()
            rounds += 1
        }
        return rounds
    }
}

/// SplitMix64: a small seeded generator so random tests replay exactly.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The change set an event payload carries.
func changeSet(from payload: Value) -> ChangeSet? { try? ChangeSet(value: payload) }
