import Model
import Testing

/// `WeakLink` reads as `weak` would, for the objects that hand one out instead.
@Suite struct WeakLinkTests {
    final class Owner {
        let weakLink = WeakLink<Owner>()
        init() { weakLink.attach(self) }
        deinit { weakLink.clear() }
    }

    @Test func readsTheObjectWhileItLivesAndNilOnceItIsGone() {
        var owner: Owner? = Owner()
        let link = owner?.weakLink
        #expect(link?.object === owner)
        owner = nil
        #expect(link?.object == nil)
    }

    @Test func anEmptyLinkReadsNil() {
        #expect(WeakLink<Owner>().object == nil)
    }

    /// A scope dropped without `end()` still cancels what it owns, and they no longer see it:
    /// as with a weak reference, nothing it owns calls back into a scope being torn down.
    @Test func whatAScopeOwnsSeesItGoneWhenTheScopeIsDropped() {
        final class Item: Cancellable {
            var ownerSlot: Int32 = -1
            let owner: WeakLink<Scope>
            var ownerSeenWhenCancelled: Bool?
            init(owner: Scope) { self.owner = owner.weakLink }
            func cancel() { ownerSeenWhenCancelled = owner.object != nil }
        }
        var scope: Scope? = Scope(name: "Tracker")
        let item = scope.map { Item(owner: $0) }
        if let item { scope?.adopt(item) }
        #expect(item?.owner.object === scope)
        scope = nil
        #expect(item?.ownerSeenWhenCancelled == false)
        #expect(item?.owner.object == nil)
    }

    /// A subscription reads its registry through the registry's link: the site while the
    /// registry lives, a placeholder once it is gone.
    @Test func aSubscriptionOutlivingItsRegistryNoLongerReachesIt() {
        var made: (ObserverRegistry, Reports)? = makeRegistry()
        let counter = Counter()
        let subscription = made?.0.watch(counter, "count", site: "main.lua:3") { _ in }
        #expect(subscription?.site == "main.lua:3")
        made = nil
        #expect(subscription?.site == "?")
        subscription?.cancel()
        #expect(subscription?.isActive == false)
    }
}

/// `WeakLink`'s invariant (the object clears its link before it goes) under many objects made
/// and dropped while links to them are read: under `make sanitize` a read of a freed object
/// would be a heap-use-after-free, and in debug builds stops at the link's own check.
@Suite struct WeakLinkInvariantTests {
    final class Owner {
        let weakLink = WeakLink<Owner>()
        let number: Int
        init(number: Int) {
            self.number = number
            weakLink.attach(self)
        }
        deinit { weakLink.clear() }
    }

    @Test func linksOutlivingTheirObjectsReadNilNeverAFreedObject() {
        var links: [WeakLink<Owner>] = []
        var owners: [Owner] = []
        for number in 0..<1_000 {
            let owner = Owner(number: number)
            owners.append(owner)
            links.append(owner.weakLink)
            // Every third owner goes at once; its link must read nil from then on.
            if number % 3 == 0 { owners.removeLast() }
        }
        let live = links.compactMap { $0.object?.number }
        #expect(live == (0..<1_000).filter { $0 % 3 != 0 })
        owners.removeAll()
        #expect(links.allSatisfy { $0.object == nil })
    }

    @Test func aLinkClearedEarlyReadsNilWhileItsObjectStillLives() {
        let owner = Owner(number: 1)
        #expect(owner.weakLink.object === owner)
        owner.weakLink.clear()
        #expect(owner.weakLink.object == nil)
    }
}
