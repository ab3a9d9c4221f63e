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
    func context(_ sections: Fields = [:], clock: any ServiceClock = SystemClock.shared) -> PluginContext {
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
            case .event(let name, _), .events(let name, _): name
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
        guard let change = try? ChangeSet(value: payload) else { return nil }
        self = change
    }

    /// `old` changed as this change set says, with the records it carries (what a view does with
    /// it); nil when it does not fit `old` (a position out of range or repeated) or does not
    /// produce `new`.
    func replay(on old: [Value], new: [Value]) -> [Value]? {
        var list = old
        guard (try? apply(to: &list)) != nil, list == new else { return nil }
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
