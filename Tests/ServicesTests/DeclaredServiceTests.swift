import Model
@testable import Services
import Testing

/// A standard service's entry knows whether the host starts it from the conformance, without a
/// cast at run time; the answer must still follow the conformance.
@Suite struct DeclaredServiceTests {
    @Test func onlyTheStartableServicesSayTheyAre() {
        #expect(LocationService.isStartable)
        #expect(LocationService.self is any StartableService.Type)
        #expect(!GeocoderService.isStartable)
        #expect(!Store.isStartable)
        #expect(!Session.isStartable)
        #expect(!HTTPService.isStartable)
        #expect(!FeedsService.isStartable)
        #expect(!ProcessService.isStartable)
        #expect(!FilesService.isStartable)
    }
}
