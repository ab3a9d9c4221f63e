import Model

/// An object's event on its way to Lua handlers, with the object's properties as the change
/// that emitted it left them.
///
/// Reports reach the loop some time after the object changed, and another thread (a store's
/// catch-up with another process) may change it again meanwhile: a handler that read the object
/// itself would see changes whose events are still to come (a collection's `items` already
/// holding the records of the next `didChange`), and no change set could then turn what it read
/// last into what it reads now. So while a handler of this event runs, reads of the object's
/// reported properties give ``properties`` (``ModelBinding/withReportedProperties(_:of:_:)``), and
/// each handler sees the object exactly as its event describes it. A write the handler makes to
/// the object shows at once (``ModelBinding/applyOnLoop(_:to:)``).
final class ReportedEvent {
    let payload: Value
    let properties: [String: Value]

    init(_ payload: Value, properties: [String: Value]) {
        self.payload = payload
        self.properties = properties
    }
}
