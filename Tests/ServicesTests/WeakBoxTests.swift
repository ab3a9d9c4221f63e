import Dispatch
import Synchronization
import Testing
@testable import Services

/// `WeakBox`, the weak reference the process and files services hand to the callbacks that run
/// on the reactor thread and the clock's: filled on one thread, read on others, nil once its
/// object is gone. Under `make sanitize` a read racing the fill is a data race (thread) and a
/// read of a freed object a use after free (address).
@Suite struct WeakBoxTests {
    final class Target: Sendable {
        let number: Int
        init(number: Int) { self.number = number }
    }

    @Test func readsItsObjectWhileItLivesAndNilOnceItIsGone() {
        let box = WeakBox<Target>()
        #expect(box.object == nil)
        var target: Target? = Target(number: 7)
        box.object = target
        #expect(box.object?.number == 7)
        target = nil
        #expect(box.object == nil)
    }

    /// Threads read the box while another fills it and lets its object go: each read sees the
    /// object or nil.
    @Test func readsFromOtherThreadsWhileItIsFilledAndItsObjectGoes() {
        for round in 0..<20 {
            let box = WeakBox<Target>()
            let seen = Mutex<Set<Int>>([])
            DispatchQueue.concurrentPerform(iterations: 5) { worker in
                if worker == 0 {
                    let target = Target(number: round)
                    box.object = target
                    for _ in 0..<500 { _ = box.object }
                    withExtendedLifetime(target) {}
                } else {
                    var numbers = Set<Int>()
                    for _ in 0..<2_000 { numbers.insert(box.object?.number ?? -1) }
                    seen.withLock { $0.formUnion(numbers) }
                }
            }
            let numbers = seen.withLock { $0 }
            #expect(numbers.isSubset(of: [-1, round]), "round \(round): \(numbers)")
            #expect(box.object == nil)
        }
    }
}
