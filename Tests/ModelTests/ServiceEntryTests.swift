import Model
import Synchronization
import Testing

/// A service entry makes its service on first use, once, and remembers a failure as it
/// remembers a service.
@Suite struct ServiceEntryTests {
    @Test func theServiceIsMadeOnceAndAnsweredAgain() throws {
        let makes = Mutex(0)
        let entry = ServiceEntry(Counter.erasedInterface) { () throws(ServiceError) in
            makes.withLock { $0 += 1 }
            return Counter()
        }
        #expect(entry.madeService == nil)
        let first = try entry.service()
        let again = try entry.service()
        #expect(first === again)
        #expect(entry.madeService === first)
        #expect(makes.withLock { $0 } == 1)
    }

    @Test func aFailureIsMadeOnceAndAnsweredAgain() {
        let makes = Mutex(0)
        let entry = ServiceEntry(Counter.erasedInterface) { () throws(ServiceError) -> any Service in
            makes.withLock { $0 += 1 }
            throw ServiceError(.unavailable, "no device")
        }
        for _ in 0..<2 {
            do throws(ServiceError) {
                _ = try entry.service()
                Issue.record("a service was made")
            } catch {
                #expect(error == ServiceError(.unavailable, "no device"))
            }
        }
        #expect(entry.madeService == nil)
        #expect(makes.withLock { $0 } == 1)
    }
}
