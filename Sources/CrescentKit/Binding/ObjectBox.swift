import Model

/// What a model object's Lua userdata holds: the object and its interface, looked up once.
final class ObjectBox {
    let object: any ModelObject
    let interface: AnyInterface
    /// The sink id on the object's publisher, detached when the host ends.
    var sinkID: Int?
    /// Its reports on their way to the loop.
    let reports = ReportMailbox()
    /// The values of the property reports applied on the loop since its last event: what its
    /// next event carries for its handlers (``ReportedEvent``).
    var reported: [String: Value] = [:]
    /// While a handler of one of its events runs, the properties as that event left them: reads
    /// give these instead of the object's newer state (see ``ReportedEvent``).
    var pinned: [String: Value]?
    /// A declared method was called on it: a service the script used (`location:current()`),
    /// whose events may come without `start()` (``ModelBinding/unstartedServiceNotes()``).
    var wasCalled = false
    /// It lives in another VM (a plugin's service): values sent to it must have a model form, so
    /// a table with a metatable is refused like a function.
    let crossesVMs: Bool

    /// The binding's model generation it was made in: a spec file's host gives each test a new
    /// model, and a box of an earlier one refuses to be used (``ModelBinding/checkCurrent(_:_:)``).
    let generation: Int

    init(_ object: any ModelObject, generation: Int = 0, crossesVMs: Bool = false) {
        self.object = object
        interface = object.interface
        self.generation = generation
        self.crossesVMs = crossesVMs
    }

    var handle: ObjectHandle { ObjectHandle(object) }
    var name: String { interface.name }
}
