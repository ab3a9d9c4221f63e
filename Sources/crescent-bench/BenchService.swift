import Model

/// The service the model rows measure: one integer property and two trivial methods (`echo`
/// with a completion, `mirror` without).
final class BenchService: Service {
    let changes = ChangePublisher()
    let value: Property<Int>

    init() { value = Property("value", 0, changes) }

    var interface: AnyInterface { Self.declaration }

    static let declaration: AnyInterface = Interface<BenchService>(name: "bench", summary: "Benchmark service.") { d in
        d.property("value", type: "integer", "A number the benchmark changes.") { .integer(Int64($0.value.value)) }
        d.method("echo", [.init("value", .any, "Anything.")], returns: "the value", "Answers its argument at once.",
                 immediate: { _, arguments throws(ServiceError) in arguments[0] })
        d.function("mirror", [.init("value", .any, "Anything.")], returns: "the value", "Answers its argument at once, without a completion.") {
            _, arguments throws(ServiceError) in arguments[0]
        }
    }.erased
}

/// Registers one BenchService as `services.bench`.
struct BenchPlugin: Plugin {
    let name = "bench"
    let service: BenchService

    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { [service] }
}

/// `services.bench` and `services.benchclock`, for rows that run a script on the real loop.
struct RealLoopBenchPlugin: Plugin {
    let name = "bench"

    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { [BenchService(), BenchClock()] }
}
