/// One round's work item.
enum Pending {
    case initial(Subscription, Value)
    case property(PropertyKey, ObjectHandle)
    case event(EventPost)
}

/// Property `key` of one object.
struct PropertyKey: Hashable {
    let object: ObjectIdentifier
    let key: String
}

/// An event waiting for delivery.
struct EventPost {
    let name: String
    let event: String
    let object: ObjectHandle?
    let payload: EventPayload
    let sequence: UInt32
}
