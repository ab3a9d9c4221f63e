import Foundation
import Model
@testable import Services
import Synchronization

/// A temporary folder for one test's database, removed when the value goes away.
final class TemporaryFolder: Sendable {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("crescent-store-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `<folder>/store.sqlite`.
    var databasePath: String { path + "/store.sqlite" }

    /// A context whose data folder is this one, with `sections` as the config file.
    func context(_ sections: [String: Value] = [:], clock: any ServiceClock = SystemClock.shared) -> PluginContext {
        PluginContext(sections: sections, dataDirectory: path, clock: clock)
    }
}

/// Everything a model object reports, in order.
final class ChangeLog: Sendable {
    private let changes = Mutex<[(change: ModelChange, arrived: Date)]>([])

    init(_ object: any ModelObject) {
        object.changes.attach { change in self.changes.withLock { $0.append((change, Date())) } }
    }

    var all: [ModelChange] { changes.withLock { $0.map(\.change) } }

    /// When each `didChange` was reported (on the thread that reported it).
    var changeSetTimes: [Date] {
        changes.withLock { entries in
            entries.compactMap { entry in
                guard case .event("didChange", _) = entry.change else { return nil }
                return entry.arrived
            }
        }
    }

    /// The `didChange` payloads as change sets.
    var changeSets: [ChangeSet] {
        all.compactMap { change in
            guard case .event("didChange", let payload) = change else { return nil }
            return ChangeSet(payload)
        }
    }

    /// The names of events and properties reported, in order (`items`, `count`, `didChange`).
    var names: [String] {
        all.map { change in
            switch change {
            case .property(let key, _): key
            case .event(let name, _): name
            }
        }
    }

    /// Waits up to `seconds` for `condition` over the log.
    func wait(seconds: Double, until condition: (ChangeLog) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(self) { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return condition(self)
    }
}

extension ChangeSet {
    /// The change set in a `didChange` payload.
    init?(_ payload: Value) {
        func positions(_ key: String) -> [Int] { payload[key].arrayValue?.compactMap { $0.integerValue.map(Int.init) } ?? [] }
        guard case .object = payload else { return nil }
        self.init(inserted: positions("inserted"), deleted: positions("deleted"), updated: positions("updated"),
                  reload: payload["reload"].boolValue ?? false)
    }

    /// `old` changed as this change set says, taking inserted and updated records from `new`
    /// (what a view does with it); nil when a position is out of range or repeated.
    func replay(on old: [Value], new: [Value]) -> [Value]? {
        if reload { return new }
        var list = old
        guard Set(deleted).count == deleted.count, Set(inserted).count == inserted.count else { return nil }
        for position in deleted.sorted(by: >) {
            guard position >= 1, position <= list.count else { return nil }
            list.remove(at: position - 1)
        }
        for position in inserted.sorted() {
            guard position >= 1, position <= new.count, position <= list.count + 1 else { return nil }
            list.insert(new[position - 1], at: position - 1)
        }
        for position in updated {
            guard position >= 1, position <= list.count, position <= new.count else { return nil }
            list[position - 1] = new[position - 1]
        }
        return list
    }
}

extension Value {
    /// A record's id.
    var id: Int64 { self["id"].integerValue ?? -1 }
}

/// Runs a store method's body the way the host does: in a Swift task.
func awaitStore<Output: Sendable>(_ work: @Sendable @escaping () throws(ServiceError) -> Output) async throws(ServiceError) -> Output {
    try await StoreWork.run(work)
}
