import Model
@testable import Services
import Testing

/// A date that does not exist (February 30, February 29 of a common year, April 31) is refused
/// wherever dates are read, instead of rolling over into the next month.
@Suite struct ImpossibleDateTests {
    @Test func feedDatesThatDoNotExistAreRefused() {
        #expect(CivilTime.parseISO8601("2020-02-29T10:00:00Z") == 1_582_970_400, "a leap day exists")
        for text in ["2020-02-30T10:00:00Z", "2021-02-29T10:00:00Z", "2024-04-31T00:00:00Z", "1900-02-29T00:00:00Z"] {
            #expect(CivilTime.parseISO8601(text) == nil, "\(text)")
            #expect(FeedDate.parse(text) == nil, "\(text)")
        }
        #expect(FeedDate.parse("2020-02-30") == nil)
        #expect(FeedDate.parse("Sun, 30 Feb 2020 10:00:00 GMT") == nil)
        #expect(FeedDate.parse("Sat, 29 Feb 2020 10:00:00 GMT") == 1_582_970_400)
    }

    @Test func anNMEADateThatDoesNotExistGivesNoFix() {
        var parser = NMEAParser(today: 0)
        var fixes = parser.feed(NMEAWriter.sentence("GPRMC,120000.00,A,4851.3960,N,00221.1320,E,10.0,90.0,290223,,,A"))
        fixes += parser.feed(NMEAWriter.sentence("GPRMC,120001.00,A,4851.3960,N,00221.1320,E,10.0,90.0,280223,,,A"))
        fixes += parser.finish()
        #expect(fixes.map(\.time) == [1_677_585_601], "only the fix of 2023-02-28 12:00:01, not one rolled into March")
    }
}
