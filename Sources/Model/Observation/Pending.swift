/// One round's work item.
enum Pending {
    case initial(Subscription, Value)
    case property(PropertyKey, ObjectHandle)
    case event(EventPost)
    case events(EventBatchPost)
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

/// Events of one name from one report, waiting for delivery: payload `i` is numbered
/// `firstSequence + i`, as if each had been posted alone.
struct EventBatchPost {
    let name: String
    let event: String
    let object: ObjectHandle?
    let payloads: [Value]
    let firstSequence: UInt32
}
