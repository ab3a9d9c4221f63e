import Foundation
import Model

/// The thermostat's collection: a plain list of numbers (``ValueList``) that publishes exact
/// change sets through an ``ObservableCollection``, as a plugin's list would.
final class Readings: ModelObject {
    let changes = ChangePublisher()
    let list: ObservableCollection<ValueList>

    var interface: AnyInterface { Self.declaration }

    init() {
        list = ObservableCollection(ValueList(), reportingTo: changes)
    }

    var items: [Value] { list.items }
    var count: Int { list.count }

    /// Inserts at a 0-based `index` (nil appends).
    func insert(_ items: [Value], at index: Int? = nil) { list.apply { $0.insert(items, at: index) } }
    /// Appends `value` on a thread of its own and waits until it is appended.
    func insertOnAnotherThread(_ value: Value) {
        let appended = DispatchSemaphore(value: 0)
        Thread {
            self.insert([value])
            appended.signal()
        }.start()
        appended.wait()
    }
    /// Removes the items at 0-based `indexes`.
    func remove(at indexes: [Int]) { list.apply { $0.remove(at: indexes) } }
    /// Replaces the item at 0-based `index`.
    func replace(at index: Int, with item: Value) { list.apply { $0.replace(at: index, with: item) } }
    /// Replaces every item.
    func reload(_ items: [Value]) { list.apply { $0.reload(items) } }

    static let declaration = Interface<Readings>(name: "readings", summary: "Recorded temperatures.") { d in
        d.property("items", type: "array", "The items, in order (a snapshot).") { .array($0.items) }
        d.property("count", type: "integer", "How many items there are.") { .integer(Int64($0.count)) }
        d.event("didChange", payload: "change set {inserted, deleted, updated, reload, insertedItems, updatedItems}",
                "The items changed; positions are 1-based (deleted: before the change, the others: after), with the inserted and updated items.")
        d.method("record", [.init("value", .number, "The temperature.")], returns: "the new count",
                 "Appends a reading.", immediate: { readings, arguments throws(ServiceError) in
                     readings.insert([arguments[0]])
                     return .integer(Int64(readings.count))
                 })
        d.method("recordApart", [.init("first", .number, "Appended on another thread."), .init("second", .number, "Appended here.")],
                 returns: "the new count",
                 "Appends `first` on a thread of its own and waits for it, then `second` on the caller's thread: two reports in that order from two threads.",
                 immediate: { readings, arguments throws(ServiceError) in
                     readings.insertOnAnotherThread(arguments[0])
                     readings.insert([arguments[1]])
                     return .integer(Int64(readings.count))
                 })
        d.action("recordElsewhere", [.init("value", .number, "Appended on another thread.")],
                 "Appends `value` on a thread of its own and waits for it: the change is made, its report still on the way to the loop.") { readings, arguments throws(ServiceError) in
            readings.insertOnAnotherThread(arguments[0])
        }
        d.action("drop", [.init("position", .integer, "1-based position.")], "Removes a reading.") { readings, arguments throws(ServiceError) in
            // Clamped, so positions far outside Int's range do not overflow.
            let position = Int(clamping: arguments[0].integerValue ?? 0)
            readings.remove(at: [position > Int.min ? position - 1 : -1])
        }
    }.erased
}
