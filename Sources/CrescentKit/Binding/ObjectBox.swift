import Model

/// What a model object's Lua userdata holds: the object and its interface, looked up once.
final class ObjectBox {
    let object: any ModelObject
    let interface: AnyInterface
    /// The sink id on the object's publisher, detached when the host ends.
    var sinkID: Int?
    /// Its reports on their way to the loop.
    let reports = ReportMailbox()

    init(_ object: any ModelObject) {
        self.object = object
        interface = object.interface
    }

    var handle: ObjectHandle { ObjectHandle(object) }
    var name: String { interface.name }
}
