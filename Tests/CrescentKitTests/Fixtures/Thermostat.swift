import Model
import Synchronization

/// The test service: a property that changes, a collection, methods that succeed, fail, take time
/// and can be cancelled, events, and start/stop shares.
final class Thermostat: StartableService {
    let changes = ChangePublisher()
    let temperature: Property<Double>
    let label: Property<String?>
    let readings: Readings
    /// Every startUpdates/stopUpdates call, in order (`stop` for stopUpdates).
    let startLog = Mutex<[String]>([])
    /// The replies `hold(false)` kept, for the test to answer.
    let heldReplies = Mutex<[Reply]>([])

    var interface: AnyInterface { Self.declaration }

    init() {
        temperature = Property("temperature", 20.0, changes)
        label = Property("label", nil, changes)
        readings = Readings()
    }

    func startUpdates(shares: [Value]) {
        startLog.withLock { $0.append("start \(shares.count)") }
    }

    func stopUpdates() {
        startLog.withLock { $0.append("stop") }
    }

    static let location = ArgumentType.record("location", fields: [.init("lat", .number), .init("lon", .number)])

    static let declaration: AnyInterface = Interface<Thermostat>(name: "thermostat", summary: "A thermostat for tests.") { d in
        d.property("temperature", type: "number", "The current temperature.") { .number($0.temperature.value) }
        d.property("label", type: "string or nil", "A label, nil until set.") { $0.label.value.value }
        d.property("readings", type: "readings", "Recorded temperatures.") { .handle(ObjectHandle($0.readings)) }
        d.method("set", [.init("degrees", .number, "The new temperature.")], returns: "the temperature",
                 "Sets the temperature.", immediate: { thermostat, arguments throws(ServiceError) in
                     let degrees = arguments[0].doubleValue ?? 0
                     guard (-50...100).contains(degrees) else {
                         throw ServiceError(.invalidArgument, "temperature \(degrees) is outside [-50, 100]")
                     }
                     thermostat.temperature.set(degrees)
                     return .number(degrees)
                 })
        d.method("echo", [.init("value", .any, "Anything.")], returns: "the same value", "Answers its argument.",
                 immediate: { _, arguments throws(ServiceError) in arguments[0] })
        d.method("fail", [.init("code", .string, "The error code to fail with.")], returns: "nothing, ever",
                 "Always fails.", immediate: { _, arguments throws(ServiceError) in
                     throw ServiceError(ServiceError.Code(name: arguments[0].stringValue ?? "") ?? .internal, "asked to fail")
                 })
        d.method("slow", [.init("seconds", .number, "How long to take.")], returns: "\"done\"",
                 "Answers after a while (a Swift task).") { _, arguments async throws(ServiceError) -> Value in
            do {
                let seconds = arguments[0].doubleValue ?? 0
                guard seconds.isFinite, seconds >= 0, seconds < 3600 else {
                    throw ServiceError(.invalidArgument, "seconds must be in [0, 3600), got \(seconds)")
                }
                try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            } catch {
                throw ServiceError(.cancelled, "stopped")
            }
            return "done"
        }
        d.method("hold", [.init("now", .boolean, "Answer at once.")], returns: "\"now\"",
                 "Answers through a reply: at once, or when the test answers the kept reply.",
                 replying: { thermostat, arguments, reply in
                     if arguments[0].boolValue == true {
                         reply(.success("now"))
                     } else {
                         thermostat.heldReplies.withLock { $0.append(reply) }
                     }
                 })
        d.method("locate", [.init("place", location, "Where."), .init("options", .table, "{ name = }", optional: true)],
                 returns: "a placemark", "Makes a placemark.", immediate: { _, arguments throws(ServiceError) in
                     let place = arguments[0]
                     let name = arguments[1]["name"].stringValue ?? "somewhere"
                     return .model(DataModel("placemark", ["name": .string(name), "lat": place["lat"], "lon": place["lon"]]))
                 })
        d.action("rename", [.init("label", .string, "The new label.")], "Sets the label.") { thermostat, arguments throws(ServiceError) in
            guard let text = arguments[0].stringValue, !text.isEmpty else {
                throw ServiceError(.invalidArgument, "the label must not be empty")
            }
            thermostat.label.set(text)
        }
        d.action("alarm", [.init("level", .integer, "How bad.")], "Emits didAlarm.") { thermostat, arguments throws(ServiceError) in
            thermostat.changes.emit("didAlarm", .object(["level": arguments[0]]))
        }
        d.event("didAlarm", payload: "{ level }", "Something is wrong.")
        d.event("didReset", payload: "nil", "Back to defaults.")
    }.erased
}

/// Registers one Thermostat as `services.thermostat`.
struct ThermostatPlugin: Plugin {
    let name = "thermostat"
    let thermostat: Thermostat

    init(_ thermostat: Thermostat = Thermostat()) { self.thermostat = thermostat }

    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { [thermostat] }
}
