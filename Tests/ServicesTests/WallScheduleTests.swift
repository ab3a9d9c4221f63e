import Foundation
import Model
@testable import Services
import Testing

/// Daily times and cron expressions: the next instant they are due, across daylight-saving
/// changes in a given zone, and the messages for expressions that are not valid.
@Suite struct WallScheduleTests {
    /// Seconds since 1970 of a UTC time written `2026-03-29 01:00`.
    private func utc(_ text: String) -> Double {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.date(from: text)?.timeIntervalSince1970 ?? .nan
    }

    private func show(_ seconds: Double?) -> String {
        guard let seconds else { return "never" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    /// The first `count` instants (UTC) from `start`.
    private func firings(_ schedule: WallSchedule, from start: String, count: Int) -> [String] {
        var now = utc(start)
        var seen: [String] = []
        for _ in 0..<count {
            guard let next = schedule.next(after: now) else { break }
            seen.append(show(next))
            now = next
        }
        return seen
    }

    @Test func dailyAtFollowsTheZonesOffsetAcrossSpringForward() throws {
        let schedule = try WallSchedule(at: "09:30", zone: "Europe/Paris")
        #expect(firings(schedule, from: "2026-03-27 12:00", count: 3) == [
            "2026-03-28 08:30:00", "2026-03-29 07:30:00", "2026-03-30 07:30:00",
        ])
    }

    @Test func aTimeTheClocksSkipIsDueOnceAtTheChange() throws {
        let schedule = try WallSchedule(at: "02:30", zone: "Europe/Paris")
        #expect(firings(schedule, from: "2026-03-27 12:00", count: 3) == [
            "2026-03-28 01:30:00", "2026-03-29 01:00:00", "2026-03-30 00:30:00",
        ])
    }

    @Test func aTimeThatHappensTwiceIsDueOnceTheFirstTime() throws {
        let schedule = try WallSchedule(at: "02:30", zone: "Europe/Paris")
        #expect(firings(schedule, from: "2026-10-23 12:00", count: 3) == [
            "2026-10-24 00:30:00", "2026-10-25 00:30:00", "2026-10-26 01:30:00",
        ])
    }

    @Test func cronInNewYorkAcrossBothChanges() throws {
        // Every 30 minutes from 1 to 3 at night: on the night the clocks skip 02:00-03:00 the
        // skipped times are due once at the change; on the night 01:00-02:00 repeats, once each.
        let schedule = try WallSchedule(cron: "*/30 1-3 * * *", zone: "America/New_York")
        #expect(firings(schedule, from: "2026-03-08 05:00", count: 5) == [
            "2026-03-08 06:00:00", "2026-03-08 06:30:00", "2026-03-08 07:00:00", "2026-03-08 07:30:00", "2026-03-09 05:00:00",
        ])
        #expect(firings(schedule, from: "2026-11-01 04:00", count: 7) == [
            "2026-11-01 05:00:00", "2026-11-01 05:30:00", "2026-11-01 07:00:00", "2026-11-01 07:30:00",
            "2026-11-01 08:00:00", "2026-11-01 08:30:00", "2026-11-02 06:00:00",
        ])
    }

    @Test func weekdayRangesStepsListsAndNames() throws {
        // 2026-01-02 is a Friday.
        let schedule = try WallSchedule(cron: "*/20 8-9 * jan mon-fri", zone: "UTC")
        #expect(firings(schedule, from: "2026-01-02 09:30", count: 4) == [
            "2026-01-02 09:40:00", "2026-01-05 08:00:00", "2026-01-05 08:20:00", "2026-01-05 08:40:00",
        ])
        let lists = try WallSchedule(cron: "0 12 1,15 * *", zone: "UTC")
        #expect(firings(lists, from: "2026-01-01 13:00", count: 2) == ["2026-01-15 12:00:00", "2026-02-01 12:00:00"])
        // Both day fields restricted: either one makes the day due (Vixie cron).
        let either = try WallSchedule(cron: "0 0 13 * fri", zone: "UTC")
        #expect(firings(either, from: "2026-02-01 00:00", count: 3) == ["2026-02-06 00:00:00", "2026-02-13 00:00:00", "2026-02-20 00:00:00"])
        let sunday = try WallSchedule(cron: "0 6 * * 7", zone: "UTC")
        #expect(firings(sunday, from: "2026-01-01 00:00", count: 1) == ["2026-01-04 06:00:00"])
        let daily = try WallSchedule(cron: "@daily", zone: "UTC")
        #expect(firings(daily, from: "2026-01-01 00:00", count: 1) == ["2026-01-02 00:00:00"])
        let fromFive = try WallSchedule(cron: "5/20 * * * *", zone: "UTC")
        #expect(firings(fromFive, from: "2026-01-01 00:00", count: 4) == ["2026-01-01 00:05:00", "2026-01-01 00:25:00", "2026-01-01 00:45:00", "2026-01-01 01:05:00"])
    }

    @Test func aDayThatNeverComesIsNever() throws {
        #expect(try WallSchedule(cron: "0 0 30 feb *", zone: "UTC").next(after: 0) == nil)
        #expect(try WallSchedule(cron: "0 0 29 2 *", zone: "UTC").next(after: utc("2026-01-01 00:00")).map(show) == "2028-02-29 00:00:00")
    }

    @Test(arguments: [
        ("* * * *", "'* * * *' has 4 fields; a cron expression has five"),
        ("60 * * * *", "the minute field '60' is not valid: '60' is not a number in 0-59"),
        ("* 5-2 * * *", "the hour field '5-2' is not valid: the range '5-2' goes backwards"),
        ("*/0 * * * *", "the minute field '*/0' is not valid: the step in '*/0' must be a whole number above 0"),
        ("* * * foo *", "the month field 'foo' is not valid: 'foo' is not a number in 1-12 or a name (jan-dec)"),
        ("* * * * mon-funday", "the day of week field 'mon-funday' is not valid"),
        ("-1 * * * *", "the minute field '-1' is not valid: '-1' is not a number in 0-59"),
        ("* 5- * * *", "the hour field '5-' is not valid: '5-' is not a number in 0-23"),
        ("* * * * *\0", "the day of week field '*\\0' is not valid: '*\\0' is not a number in 0-7"),
        ("\u{1B}[31m * * * *", "the minute field '\\u{1B}[31m' is not valid"),
        // Issue 38, M5: `Int` took a sign, so "+5" was minute 5 (cron refuses it).
        ("+5 * * * *", "the minute field '+5' is not valid: '+5' is not a number in 0-59"),
        ("*/+15 * * * *", "the minute field '*/+15' is not valid: the step in '*/+15' must be a whole number above 0"),
        // A misspelled day or month name gets the closest name (it was only "… or a name (sun-sat)").
        ("0 9 * * mon-fry", "the day of week field 'mon-fry' is not valid: 'fry' is not a number in 0-7 or a name (sun-sat); did you mean 'fri'?"),
        ("0 9 1 jun-agu *", "the month field 'jun-agu' is not valid: 'agu' is not a number in 1-12 or a name (jan-dec); did you mean 'aug'?"),
    ])
    func badCronIsNamed(expression: String, message: String) {
        do {
            _ = try WallSchedule(cron: expression, zone: "UTC")
            Issue.record("accepted \(expression)")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
    }

    @Test func badTimesAndZonesAreNamed() {
        for time in ["9h30", "24:00", "12:60", "12:00:99", "", "12"] {
            #expect(throws: ServiceError.self, "\(time)") { try WallSchedule(at: time, zone: "UTC") }
        }
        do {
            _ = try WallSchedule(at: "09:30", zone: "Mars/Olympus")
        } catch {
            #expect(error.message.hasPrefix("zone 'Mars/Olympus' is not an IANA time zone"))
        }
        #expect((try? WallSchedule(at: "9:05:07", zone: "UTC"))?.next(after: 0).map(show) == "1970-01-01 09:05:07")
        // Issue 38, M5: "GMT+2" was UTC+2 while the IANA "Etc/GMT+2" is UTC-2.
        for zone in ["GMT+2", "utc-05:00"] {
            do {
                _ = try WallSchedule(at: "09:30", zone: zone)
                Issue.record("accepted the zone \(zone)")
            } catch {
                #expect(error.message.hasPrefix("zone '\(zone)' is ambiguous"), "\(error.message)")
            }
        }
        #expect(throws: Never.self) { try WallSchedule(at: "09:30", zone: "Etc/GMT+2") }
    }

    @Test func theZoneIsShownAsTheScriptNamedIt() throws {
        #expect(try WallSchedule(at: "02:30", zone: "UTC").description == "at 02:30 UTC", "not GMT, as Foundation calls it")
        #expect(try WallSchedule(cron: "0 9 * * *", zone: "UTC").description == "cron 0 9 * * * UTC")
        #expect(try WallSchedule(at: "02:30", zone: "Europe/Paris").description == "at 02:30 Europe/Paris")
        #expect(try WallSchedule(at: "02:30").description == "at 02:30 \(TimeZone.current.identifier)")
    }
}
