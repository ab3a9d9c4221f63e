import Model
import Testing

/// The owner of an observable list, as a plugin or a store makes one: its publisher is the
/// list's.
final class ListOwner: ModelObject {
    let changes = ChangePublisher()
    let collection: ObservableCollection<ValueList>
    var interface: AnyInterface { Self.declaration }
    static let declaration = Interface<ListOwner>(name: "list", summary: "A list.") { _ in }.erased

    init(items: [Value] = []) {
        collection = ObservableCollection(ValueList(items), reportingTo: changes)
    }

    var items: [Value] { collection.items }
    var count: Int { collection.count }
    func insert(_ items: [Value], at index: Int? = nil) { collection.apply { $0.insert(items, at: index) } }
    func remove(at indexes: [Int]) { collection.apply { $0.remove(at: indexes) } }
    func replace(at index: Int, with item: Value) { collection.apply { $0.replace(at: index, with: item) } }
    func reload(_ items: [Value]) { collection.apply { $0.reload(items) } }
}

/// ``ObservableCollection`` over a ``ValueList``: every change reports `items`, `count` and an
/// exact change set, in the order the changes were made.
@Suite struct ObservableCollectionTests {
    /// Runs `mutate` and returns what the collection reported: the `items`, `count` and change set.
    func reports(_ collection: ListOwner, _ mutate: () -> Void) -> (texts: [String], changes: [ChangeSet]) {
        let log = ChangeLog(collection)
        mutate()
        let all = log.take()
        collection.changes.detach(log.sinkID)
        let changes = all.compactMap { change -> ChangeSet? in
            if case .event("didChange", let payload) = change { changeSet(from: payload) } else { nil }
        }
        return (all.map(\.text), changes)
    }

    @Test func aChangeThatChangesNothingReportsNothing() {
        let collection = ListOwner(items: ["a"])
        #expect(reports(collection) { collection.collection.apply { _ in ChangeSet() } }.texts.isEmpty)
        #expect(collection.collection.withLock { $0.records } == ["a"])
    }

    @Test func appendReportsItemsCountAndInsertedPositions() {
        let collection = ListOwner(items: ["a"])
        let result = reports(collection) { collection.insert(["b", "c"]) }
        #expect(result.texts == ["items=[a,b,c]", "count=3",
                                 "didChange({deleted=[],inserted=[2,3],insertedItems=[b,c],reload=false,updated=[],updatedItems=[]})"])
        #expect(result.changes == [ChangeSet(inserted: [2, 3], insertedItems: ["b", "c"])])
        #expect(collection.items == ["a", "b", "c"])
        #expect(collection.count == 3)
    }

    @Test func insertAtIndexIsOneBasedInTheReport() {
        let collection = ListOwner(items: ["a", "d"])
        #expect(reports(collection) { collection.insert(["b", "c"], at: 1) }.changes == [ChangeSet(inserted: [2, 3], insertedItems: ["b", "c"])])
        #expect(collection.items == ["a", "b", "c", "d"])
        #expect(reports(collection) { collection.insert(["z"], at: 0) }.changes == [ChangeSet(inserted: [1], insertedItems: ["z"])])
        #expect(collection.items == ["z", "a", "b", "c", "d"])
    }

    @Test func insertClampsItsIndexAndIgnoresNothing() {
        let collection = ListOwner(items: ["a"])
        #expect(reports(collection) { collection.insert(["b"], at: 99) }.changes == [ChangeSet(inserted: [2], insertedItems: ["b"])])
        #expect(reports(collection) { collection.insert(["z"], at: -5) }.changes == [ChangeSet(inserted: [1], insertedItems: ["z"])])
        #expect(collection.items == ["z", "a", "b"])
        #expect(reports(collection) { collection.insert([]) }.texts.isEmpty, "an empty insert reports nothing")
    }

    @Test func removeReportsPositionsBeforeTheChange() {
        let collection = ListOwner(items: ["a", "b", "c", "d", "e"])
        let result = reports(collection) { collection.remove(at: [3, 1, 3, 42, -1]) }
        #expect(result.changes == [ChangeSet(deleted: [2, 4])], "sorted, deduplicated, 1-based, out-of-range ignored")
        #expect(result.texts.prefix(2) == ["items=[a,c,e]", "count=3"])
        #expect(collection.items == ["a", "c", "e"])
        #expect(reports(collection) { collection.remove(at: [7]) }.texts.isEmpty, "nothing removed: nothing reported")
        #expect(reports(collection) { collection.remove(at: []) }.texts.isEmpty)
    }

    @Test func replaceReportsUpdatedPosition() {
        let collection = ListOwner(items: ["a", "b"])
        let result = reports(collection) { collection.replace(at: 1, with: "B") }
        #expect(result.changes == [ChangeSet(updated: [2], updatedItems: ["B"])])
        #expect(result.texts.prefix(2) == ["items=[a,B]", "count=2"])
        #expect(collection.items == ["a", "B"])
        #expect(reports(collection) { collection.replace(at: 2, with: "x") }.texts.isEmpty)
        #expect(reports(collection) { collection.replace(at: -1, with: "x") }.texts.isEmpty)
    }

    @Test func reloadReportsReload() {
        let collection = ListOwner(items: ["a", "b"])
        let result = reports(collection) { collection.reload(["x"]) }
        #expect(result.changes == [.reload(["x"])])
        #expect(result.texts == ["items=[x]", "count=1", "didChange({deleted=[],inserted=[],insertedItems=[],items=[x],reload=true,updated=[],updatedItems=[]})"])
        #expect(collection.items == ["x"])
        #expect(reports(collection) { collection.reload([]) }.changes == [.reload([])])
        #expect(collection.count == 0)
    }

    @Test func changeSetValueAndEmptiness() {
        #expect(ChangeSet().isEmpty)
        #expect(!ChangeSet.reloadAll.isEmpty)
        #expect(!ChangeSet(updated: [1]).isEmpty)
        let set = ChangeSet(inserted: [1], deleted: [2, 3], updated: [], reload: false, insertedItems: ["a"])
        #expect(set.value == ["inserted": [1], "deleted": [2, 3], "updated": [], "reload": false,
                              "insertedItems": ["a"], "updatedItems": []])
        #expect(changeSet(from: set.value) == set)
    }

    @Test func applyingTheChangeSetToTheOldListGivesTheNewOne() throws {
        let collection = ListOwner(items: ["a", "b", "c", "d"])
        var old = collection.items
        for mutate in [{ collection.insert(["x", "y"], at: 2) }, { collection.remove(at: [0, 3, 5]) },
                       { collection.replace(at: 1, with: "Y") }, { collection.reload(["q"]) }] {
            let changes = reports(collection, mutate).changes
            #expect(changes.count == 1)
            let new = collection.items
            // The change set alone rebuilds the list: it carries what was inserted and updated.
            try changes[0].apply(to: &old)
            #expect(old == new)
        }
    }

    /// Inserts from several tasks: `count` must be reported 1, 2, 3 … in order, and the last
    /// `items` report must be the final list; otherwise observers apply change sets out of order.
    @Test func concurrentMutationsReportInOrder() async {
        do {
            for round in 0..<100 {
                let collection = ListOwner()
                let log = ChangeLog(collection)
                await withTaskGroup(of: Void.self) { group in
                    for task in 0..<4 {
                        group.addTask { for i in 0..<100 { collection.insert([.integer(Int64(task * 1_000 + i))], at: 0) } }
                    }
                }
                var counts: [Int] = []
                var lastItems: Value = []
                for change in log.take() {
                    switch change {
                    case .property("items", let items): lastItems = items
                    case .property("count", let count): counts.append(Int(value: count) ?? -1)
                    default: break
                    }
                }
                if counts != Array(1...400) || lastItems != .array(collection.items) {
                    #expect(counts == Array(1...400), "round \(round): counts reported out of order")
                    #expect(lastItems == .array(collection.items), "round \(round): the last items report is stale")
                    break // one witness is enough
                }
            }
        }
    }

    /// Random insertions, removals, replacements and reloads: every change set turns the list
    /// before it into the list after it, and `count` always matches.
    @Test(arguments: [1, 2, 3, 42, 2024] as [UInt64])
    func randomOperationsKeepChangeSetsExact(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let collection = ListOwner()
        let log = ChangeLog(collection)
        var old: [Value] = []
        var next = 0
        for step in 0..<400 {
            let count = collection.count
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let items = (0..<Int.random(in: 0...3, using: &random)).map { _ -> Value in
                    next += 1
                    return .integer(Int64(next))
                }
                collection.insert(items, at: Bool.random(using: &random) ? nil : Int.random(in: -1...(count + 1), using: &random))
            case 4..<7:
                let indexes = (0..<Int.random(in: 0...4, using: &random)).map { _ in Int.random(in: -1...(count + 1), using: &random) }
                collection.remove(at: indexes)
            case 7..<9:
                next += 1
                collection.replace(at: Int.random(in: -1...count, using: &random), with: .integer(Int64(next)))
            default:
                collection.reload((0..<Int.random(in: 0...5, using: &random)).map { .integer(Int64($0 * 1_000 + step)) })
            }
            let new = collection.items
            let reported = log.take()
            guard !reported.isEmpty else {
                #expect(new == old, "step \(step): nothing reported, nothing changed")
                continue
            }
            guard reported.count == 3,
                  case .property("items", let items) = reported[0],
                  case .property("count", let reportedCount) = reported[1],
                  case .event("didChange", let payload) = reported[2],
                  let changes = changeSet(from: payload) else {
                Issue.record("step \(step): unexpected reports \(reported.map(\.text))")
                return
            }
            #expect(items == .array(new))
            #expect(reportedCount == .integer(Int64(new.count)))
            #expect(!changes.isEmpty)
            var rebuilt = old
            #expect((try? changes.apply(to: &rebuilt)) != nil && rebuilt == new, "step \(step): \(changes)")
            old = new
        }
    }
}
