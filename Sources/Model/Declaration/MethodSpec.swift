/// A declared method.
public struct MethodSpec<Object: AnyObject>: Sendable {
    /// How a method does its work.
    public enum Body: Sendable {
        /// Runs on the loop at once and returns (or throws) right away.
        case immediate(@Sendable (Object, Arguments) throws(ServiceError) -> Value)
        /// Runs as a Swift task; the result hops back to the loop.
        case async(@Sendable (Object, Arguments) async throws(ServiceError) -> Value)
        /// Starts on the loop and answers through the ``Reply``, at once or later from any thread.
        case replying(@Sendable (Object, Arguments, Reply) -> Void)
    }

    public let name: String
    public let arguments: [ArgumentSpec]
    /// What the method produces, in words (through the completion, or returned at once by a
    /// `function`); nil for actions, which produce nothing.
    public let result: String?
    public let summary: String
    /// True when the result arrives through a completion (`function`s and actions return at once).
    public let hasCompletion: Bool
    public let body: Body

    /// The same method for any object type (the host binds objects it only knows as AnyObject).
    var erased: AnyMethodSpec {
        let body: AnyMethodSpec.Body = switch self.body {
        case .immediate(let run):
            .immediate { object, arguments throws(ServiceError) in try run(unsafeDowncast(object, to: Object.self), arguments) }
        case .async(let run):
            .async { object, arguments throws(ServiceError) in try await run(unsafeDowncast(object, to: Object.self), arguments) }
        case .replying(let run):
            .replying { object, arguments, reply in run(unsafeDowncast(object, to: Object.self), arguments, reply) }
        }
        return AnyMethodSpec(name: name, arguments: arguments, result: result, summary: summary,
                             hasCompletion: hasCompletion, body: body)
    }

    /// `reverse(location[, options], completion)`.
    public func signature(owner: String, separator: String = ":") -> String {
        var text = ""
        var optionalDepth = 0
        for (index, argument) in arguments.enumerated() {
            if argument.isOptional {
                text += index == 0 ? "[" : "[, "
                optionalDepth += 1
            } else if index > 0 {
                text += ", "
            }
            text += argument.name
        }
        text += String(repeating: "]", count: optionalDepth)
        if hasCompletion { text += arguments.isEmpty ? "completion" : ", completion" }
        return "\(owner)\(separator)\(name)(\(text))"
    }
}

/// A declared method, for any object type.
public typealias AnyMethodSpec = MethodSpec<AnyObject>

/// A declared property, for any object type.
public typealias AnyPropertySpec = PropertySpec<AnyObject>

/// An interface for any object type: what the host binds and documents.
public struct AnyInterface: Sendable {
    public let name: String
    public let summary: String
    public let properties: [AnyPropertySpec]
    public let methods: [AnyMethodSpec]
    public let events: [EventSpec]

    /// An interface assembled from parts: a run-time plugin's declarations, which exist only once
    /// the plugin has started (a Swift service declares an ``Interface`` and erases it).
    public init(name: String, summary: String, properties: [AnyPropertySpec], methods: [AnyMethodSpec], events: [EventSpec]) {
        self.name = name
        self.summary = summary
        self.properties = properties
        self.methods = methods
        self.events = events
    }

    public func property(_ name: String) -> AnyPropertySpec? { properties.first { $0.name == name } }
    public func method(_ name: String) -> AnyMethodSpec? { methods.first { $0.name == name } }
    public func event(_ name: String) -> EventSpec? { events.first { $0.name == name } }
}
