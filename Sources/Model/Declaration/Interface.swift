/// The one declaration of what an object shows its consumers: properties, methods and events.
///
/// It drives everything derived from it: the Lua binding, argument checking and its messages,
/// `help()`, `crescent services`, completion and editor stubs. A service author writes plain Swift
/// and this declaration; no Lua.
///
/// ```swift
/// static let interface = Interface<Counter>(name: "counter", summary: "Counts ticks.") { d in
///     d.property("count", type: "integer", "Ticks so far.") { $0.count.value.value }
///     d.method("add", [.init("n", .integer, "How many to add.")], returns: "the new count",
///              "Adds n ticks.") { counter, arguments throws(ServiceError) in try counter.add(arguments[0]) }
///     d.event("didReset", payload: "nil", "The count went back to zero.")
/// }
/// ```
public struct Interface<Object: AnyObject & Sendable>: Sendable {
    public let name: String
    public let summary: String
    public private(set) var properties: [PropertySpec<Object>] = []
    public private(set) var methods: [MethodSpec<Object>] = []
    public private(set) var events: [EventSpec] = []

    public init(name: String, summary: String, _ build: (inout Interface) -> Void = { _ in }) {
        self.name = name
        self.summary = summary
        build(&self)
    }

    /// Declares a read-only property; `read` returns its current value.
    public mutating func property(_ name: String, type: String, _ summary: String,
                                  read: @escaping @Sendable (Object) -> Value) {
        properties.append(PropertySpec(name: name, type: type, summary: summary, read: read))
    }

    /// Declares a method with a completion whose implementation runs on the loop at once (it must
    /// be quick); the completion still runs on a later turn.
    public mutating func method(_ name: String, _ arguments: [ArgumentSpec], returns result: String, _ summary: String,
                                immediate body: @escaping @Sendable (Object, Arguments) throws(ServiceError) -> Value) {
        methods.append(MethodSpec(name: name, arguments: arguments, result: result, summary: summary,
                                  hasCompletion: true, body: .immediate(body)))
    }

    /// Declares a method with a completion whose implementation is asynchronous (I/O, waiting).
    /// Cancelling the request cancels the Swift task running it.
    public mutating func method(_ name: String, _ arguments: [ArgumentSpec], returns result: String, _ summary: String,
                                body: @escaping @Sendable (Object, Arguments) async throws(ServiceError) -> Value) {
        methods.append(MethodSpec(name: name, arguments: arguments, result: result, summary: summary,
                                  hasCompletion: true, body: .async(body)))
    }

    /// Declares a method with a completion that starts on the loop and answers through `reply`,
    /// at once or later from any thread: for a service with a queue of its own, whose quick calls
    /// finish right there and whose others continue on that queue (see ``Reply``).
    public mutating func method(_ name: String, _ arguments: [ArgumentSpec], returns result: String, _ summary: String,
                                replying body: @escaping @Sendable (Object, Arguments, Reply) -> Void) {
        methods.append(MethodSpec(name: name, arguments: arguments, result: result, summary: summary,
                                  hasCompletion: true, body: .replying(body)))
    }

    /// Declares a method that answers at once, without a completion (`store:collection(name)`):
    /// it must be quick and should return something the caller needs right away (an object);
    /// an error it throws is raised at the call site.
    public mutating func function(_ name: String, _ arguments: [ArgumentSpec], returns result: String, _ summary: String,
                                  body: @escaping @Sendable (Object, Arguments) throws(ServiceError) -> Value) {
        methods.append(MethodSpec(name: name, arguments: arguments, result: result, summary: summary,
                                  hasCompletion: false, body: .immediate(body)))
    }

    /// Declares a method without a completion (`stop()`, `remove(url)`): it runs at once and
    /// returns nothing; an error it throws is raised at the call site.
    public mutating func action(_ name: String, _ arguments: [ArgumentSpec], _ summary: String,
                                body: @escaping @Sendable (Object, Arguments) throws(ServiceError) -> Void) {
        methods.append(MethodSpec(name: name, arguments: arguments, result: nil, summary: summary, hasCompletion: false,
                                  body: .immediate { object, arguments throws(ServiceError) in
                                      try body(object, arguments)
                                      return .null
                                  }))
    }

    /// Declares an event the object emits, and what its payload is.
    public mutating func event(_ name: String, payload: String, _ summary: String) {
        events.append(EventSpec(name: name, payload: payload, summary: summary))
    }

    /// The type-erased form the host binds.
    public var erased: AnyInterface {
        AnyInterface(
            name: name, summary: summary,
            properties: properties.map { spec in
                AnyPropertySpec(name: spec.name, type: spec.type, summary: spec.summary) { (object: AnyObject) in
                    // Invariant: the host only passes objects registered with this interface.
                    spec.read(unsafeDowncast(object, to: Object.self))
                }
            },
            methods: methods.map { $0.erased },
            events: events
        )
    }
}

/// A declared property.
public struct PropertySpec<Object>: Sendable {
    public let name: String
    /// What the value is, in words (`location or nil`).
    public let type: String
    public let summary: String
    public let read: @Sendable (Object) -> Value

    /// A property whose value `read` answers.
    public init(name: String, type: String, summary: String, read: @escaping @Sendable (Object) -> Value) {
        self.name = name
        self.type = type
        self.summary = summary
        self.read = read
    }
}

/// A declared event.
public struct EventSpec: Sendable {
    public let name: String
    /// What the payload is, in words.
    public let payload: String
    public let summary: String

    public init(name: String, payload: String, summary: String) {
        self.name = name
        self.payload = payload
        self.summary = summary
    }
}

/// A declared method argument.
public struct ArgumentSpec: Sendable {
    public let name: String
    public let type: ArgumentType
    public let summary: String
    /// Optional arguments may be left out (they come last, before the completion).
    public let isOptional: Bool
    /// For a table of named options (`{ timeout = 5 }`): the options the method takes. A key
    /// that is none of them is a misspelled name, raised at the call with the closest one
    /// (``OptionTable/unknownKey(in:_:)``); the values are the method's to check.
    public let options: [OptionTable.Option]?
    /// For an argument that may be an array (a batch): the most items it may have. A longer
    /// array is refused with `invalid_argument` before it is converted, which would cost time
    /// and memory in proportion to it.
    public let maximumItems: Int?

    public init(_ name: String, _ type: ArgumentType, _ summary: String, optional: Bool = false,
                options: [OptionTable.Option]? = nil, maximumItems: Int? = nil) {
        self.name = name
        self.type = type
        self.summary = summary
        self.isOptional = optional
        self.options = options
        self.maximumItems = maximumItems
    }
}

/// The arguments of one call, checked against the declaration. Missing optional ones are `.null`.
public struct Arguments: Sendable {
    public let values: [Value]

    public init(_ values: [Value]) { self.values = values }

    public subscript(position: Int) -> Value { position < values.count ? values[position] : .null }
}
