import Model
@testable import Services
import Testing

/// Property-based: random sequences of writes, here and by "another process" (a second store on
/// the same file), and every change set replayed on the list before it gives the list after it.
@Suite struct StoreChangeSetTests {
    /// A small reproducible generator (SplitMix64), so a failing seed can be replayed.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func replayingEveryChangeSetGivesTheNewItems(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let folder = try TemporaryFolder()
        let store = try Store(path: folder.databasePath)
        let other = try Store(path: folder.databasePath)
        let list = try store.collection(named: "list")
        let otherList = try other.collection(named: "list")
        let log = ChangeLog(list)
        var operations: [String] = []
        for step in 0..<150 {
            // Writes by the other store reach `list` when it next writes (it catches up first).
            let target = Int.random(in: 0..<5, using: &random) == 0 ? otherList : list
            try (target === list ? store : other).catchUpWithOtherProcesses()
            let ids = target.items.map(\.id)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40:
                let count = Int.random(in: 1...4, using: &random)
                let records: [Value] = (0..<count).map { _ in ["step": .integer(Int64(step)), "v": .integer(Int64.random(in: 0..<5, using: &random))] }
                _ = try target.add(count == 1 ? records[0] : .array(records))
                operations.append("add \(count)")
            case 40..<65 where !ids.isEmpty:
                let id = ids.randomElement(using: &random) ?? 0
                _ = try target.update(id, fields: ["v": .integer(Int64.random(in: 0..<5, using: &random))])
                operations.append("update \(id)")
            case 65..<95 where !ids.isEmpty:
                let chosen = Set((0..<Int.random(in: 1...3, using: &random)).compactMap { _ in ids.randomElement(using: &random) })
                _ = try target.remove(.array(chosen.map { .integer($0) }))
                operations.append("remove \(chosen.sorted())")
            case 95..<100:
                _ = try target.clear()
                operations.append("clear")
            default:
                _ = try target.add(["step": .integer(Int64(step))])
                operations.append("add 1")
            }
            if target === otherList { operations[operations.count - 1] += " (other)" }
        }
        _ = try list.add(["last": true])              // catches up with the other store's last writes

        var previous: [Value] = []
        var entries = log.all[...]
        var replayed = 0
        while let first = entries.popFirst() {
            guard case .property("items", .array(let items)) = first,
                  case .property("count", .integer(let count)) = entries.popFirst(),
                  case .event("didChange", let payload) = entries.popFirst(),
                  let change = ChangeSet(payload) else {
                Issue.record("seed \(seed): reports out of order after \(replayed) change sets")
                return
            }
            #expect(count == Int64(items.count))
            #expect(!change.isEmpty)
            let result = change.replay(on: previous, new: items)
            #expect(result == items, "seed \(seed), change set \(replayed + 1) \(change): replay differs; operations: \(operations)")
            previous = items
            replayed += 1
        }
        #expect(previous == list.items)
        let stored = try Store(path: folder.databasePath).collection(named: "list").items
        #expect(stored == list.items, "memory and database agree")
        try other.catchUpWithOtherProcesses()
        #expect(otherList.items == stored)
    }
}
