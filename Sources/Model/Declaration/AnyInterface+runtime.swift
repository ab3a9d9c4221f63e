/// Declarations made while the host runs: a plugin written in Lua or in another process states
/// its services only once it has started, so their interface is built from data rather than from
/// a Swift type.
extension AnyInterface {
    /// An interface assembled from parts (a run-time plugin's declarations).
    public init(name: String, summary: String, properties: [AnyPropertySpec], methods: [AnyMethodSpec],
                events: [EventSpec]) {
        self.name = name
        self.summary = summary
        self.properties = properties
        self.methods = methods
        self.events = events
    }
}

extension PropertySpec {
    /// A property whose value `read` answers.
    public init(name: String, type: String, summary: String, read: @escaping @Sendable (Object) -> Value) {
        self.name = name
        self.type = type
        self.summary = summary
        self.read = read
    }
}

extension EventSpec {
    public init(name: String, payload: String, summary: String) {
        self.name = name
        self.payload = payload
        self.summary = summary
    }
}

extension MethodSpec {
    /// A method with a completion that answers through a ``Reply`` (how a run-time plugin's
    /// methods run: in another VM or another process).
    public init(name: String, arguments: [ArgumentSpec], result: String, summary: String,
                replying body: @escaping @Sendable (Object, Arguments, Reply) -> Void) {
        self.init(name: name, arguments: arguments, result: result, summary: summary, hasCompletion: true,
                  body: .replying(body))
    }
}
