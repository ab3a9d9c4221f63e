import Foundation
import Testing
@testable import CrescentKit

/// What a plugin asks for beyond its grant is worked out at every load. With lists of tens of
/// thousands of entries (a manifest's `exec` of 60,000 programs took 84 s to load) it was
/// quadratic: each entry searched the whole granted list.
@Suite struct PluginPermissionsScaleTests {
    @Test func longListsAreComparedInLinearTime() {
        var asked = PluginPermissions()
        asked.exec = (0..<50_000).map { "program\($0)" }
        asked.env = (0..<50_000).map { "VARIABLE_\($0)" }
        var granted = asked
        granted.exec.removeLast()
        granted.env.reverse()
        let clock = ContinuousClock()
        var extra: [String] = []
        let took = clock.measure { extra = asked.beyond(granted) }
        #expect(extra == ["exec program49999"])
        // Quadratic, this is 5 billion string comparisons (minutes); linear, a few hundred
        // milliseconds in a debug build on a loaded machine.
        #expect(took < .seconds(10), "\(took)")
    }
}
