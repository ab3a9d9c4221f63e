import Model
import Testing

@Suite struct ScopeTests {
    /// A cancellable that records when it is cancelled.
    final class Item: Cancellable {
        let name: String
        let lines: Lines
        var ownerSlot: Int32 = -1
        var cancelCount = 0
        var onCancel: (() -> Void)?
        init(_ name: String, _ lines: Lines) {
            self.name = name
            self.lines = lines
        }
        func cancel() {
            cancelCount += 1
            lines(name)
            onCancel?()
        }
    }

    @Test func adoptCountsAndAssignsSlots() {
        let scope = Scope(name: "script")
        let lines = Lines()
        let items = (0..<3).map { Item("\($0)", lines) }
        #expect(scope.count == 0)
        for item in items { scope.adopt(item) }
        #expect(scope.count == 3)
        #expect(items.map(\.ownerSlot) == [0, 1, 2])
        #expect(scope.name == "script")
        #expect(!scope.isEnded)
        #expect(lines.all.isEmpty)
    }

    @Test func forgetSwapsTheLastItemIntoTheHole() {
        let scope = Scope(name: "s")
        let lines = Lines()
        let items = (0..<4).map { Item("\($0)", lines) }
        for item in items { scope.adopt(item) }
        scope.forget(items[1])
        #expect(scope.count == 3)
        #expect(items[1].ownerSlot == -1)
        #expect(items[3].ownerSlot == 1, "the last item moves into the freed slot")
        #expect(items[0].ownerSlot == 0 && items[2].ownerSlot == 2)
        scope.forget(items[3])
        #expect(items[2].ownerSlot == 1)
        scope.forget(items[2]) // the last one: nothing to move
        #expect(scope.count == 1)
        #expect(items[0].ownerSlot == 0)
        #expect(lines.all.isEmpty, "forgetting does not cancel")
    }

    @Test func forgetIgnoresStrangersAndRepeats() {
        let scope = Scope(name: "s")
        let other = Scope(name: "other")
        let lines = Lines()
        let mine = Item("mine", lines)
        let theirs = Item("theirs", lines)
        scope.adopt(mine)
        other.adopt(theirs)
        scope.forget(theirs) // same slot number, different item
        #expect(scope.count == 1 && other.count == 1)
        #expect(theirs.ownerSlot == 0)
        scope.forget(mine)
        scope.forget(mine)
        #expect(scope.count == 0)
        let loose = Item("loose", lines)
        scope.forget(loose)
        loose.ownerSlot = 57
        scope.forget(loose)
        #expect(scope.count == 0)
    }

    @Test func endCancelsLastSlotFirst() {
        let scope = Scope(name: "s")
        let lines = Lines()
        let items = (0..<5).map { Item("\($0)", lines) }
        for item in items { scope.adopt(item) }
        scope.forget(items[1]) // items[4] moves to slot 1
        scope.end()
        #expect(lines.all == ["3", "2", "4", "0"], "slot order, last slot first")
        #expect(scope.isEnded)
        #expect(scope.count == 0)
        #expect(items.allSatisfy { $0.ownerSlot == -1 })
    }

    @Test func endCancelsInReverseAdoptionOrderWithoutForgets() {
        let scope = Scope(name: "s")
        let lines = Lines()
        for index in 0..<10 { scope.adopt(Item("\(index)", lines)) }
        scope.end()
        #expect(lines.all == (0..<10).reversed().map { "\($0)" })
    }

    @Test func endIsIdempotent() {
        let scope = Scope(name: "s")
        let lines = Lines()
        let item = Item("a", lines)
        scope.adopt(item)
        scope.end()
        scope.end()
        #expect(item.cancelCount == 1)
    }

    @Test func adoptAfterEndCancelsAtOnce() {
        let scope = Scope(name: "s")
        let lines = Lines()
        scope.end()
        let late = Item("late", lines)
        scope.adopt(late)
        #expect(late.cancelCount == 1)
        #expect(scope.count == 0)
        #expect(late.ownerSlot == -1)
    }

    @Test func itemsCancellingEachOtherWhileEnding() {
        let scope = Scope(name: "s")
        let lines = Lines()
        let items = (0..<4).map { Item("\($0)", lines) }
        for item in items { scope.adopt(item) }
        // Cancelling 3 forgets 1 (as a subscription cancelled by another's cancel would).
        items[3].onCancel = { scope.forget(items[1]) }
        // Cancelling 2 adopts a new item into the ended scope: it is cancelled at once.
        items[2].onCancel = { scope.adopt(Item("new", lines)) }
        scope.end()
        #expect(lines.all == ["3", "2", "new", "0"])
        #expect(items[1].cancelCount == 0, "forgotten before its turn")
        #expect(scope.count == 0)
        // Each handler holds `items`, and so its own item: let go of them.
        for item in items { item.onCancel = nil }
    }

    @Test func forgetIsConstantTimeWithManyItems() {
        let scope = Scope(name: "s")
        let lines = Lines()
        let items = (0..<100_000).map { Item("\($0)", lines) }
        for item in items { scope.adopt(item) }
        for item in items { scope.forget(item) } // front first: each swap moves the last
        #expect(scope.count == 0)
        for item in items { scope.adopt(item) }
        for item in items.reversed() { scope.forget(item) }
        #expect(scope.count == 0)
        #expect(items.allSatisfy { $0.ownerSlot == -1 })
    }
}
