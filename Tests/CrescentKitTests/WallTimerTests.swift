import CrescentKit
import Testing

/// `timer.at` and `timer.cron` in virtual time: they fire at wall-clock times in their zone,
/// across a daylight-saving change, keep the run alive until cancelled, and refuse bad input
/// at the call.
@Suite struct WallTimerTests {
    /// 2026-03-27 12:00 UTC, two days before Paris moves its clocks forward.
    static let beforeSpringForward = 1_774_612_800.0

    @Test func atFiresDailyAtTheLocalTimeAcrossSpringForward() throws {
        let test = try TestHost(wallTime: Self.beforeSpringForward)
        test.run("""
            local t
            t = timer.at("09:30", { zone = "Europe/Paris" }, function(timer)
              print(os.date("!%Y-%m-%d %H:%M", os.time()), timer == t, timer.firings)
              if timer.firings == 3 then timer:cancel() end
            end)
            print(t.schedule, t.active)
            """)
        test.advance(seconds: 4 * 86_400)
        #expect(test.lines == ["at 09:30 Europe/Paris\ttrue", "2026-03-28 08:30\ttrue\t1", "2026-03-29 07:30\ttrue\t2",
                               "2026-03-30 07:30\ttrue\t3"], "\(test.stderr)")
        #expect(test.exitStatus == 0, "a cancelled schedule no longer keeps the run alive")
    }

    @Test func cronFiresOnTheNamedMinutesOnly() throws {
        let test = try TestHost(wallTime: Self.beforeSpringForward)
        test.run("""
            local n = 0
            timer.cron("*/20 13 * * fri", { zone = "UTC" }, function(timer)
              n = n + 1
              print(os.date("!%a %H:%M", os.time()))
              if n == 4 then timer:cancel() end
            end)
            """)
        test.advance(seconds: 2 * 3600)
        #expect(test.lines == ["Fri 13:00", "Fri 13:20", "Fri 13:40"])
        #expect(test.exitStatus == nil, "the schedule keeps the run alive")
        test.advance(seconds: 7 * 86_400)
        #expect(test.lines == ["Fri 13:00", "Fri 13:20", "Fri 13:40", "Fri 13:00"])
        #expect(test.exitStatus == 0)
    }

    @Test func badSchedulesAreRaisedAtTheCall() throws {
        let test = try TestHost()
        test.run("""
            print(select(2, pcall(timer.at, "25:00", function() end)))
            print(select(2, pcall(timer.cron, "* * *", function() end)))
            print(select(2, pcall(timer.at, "09:30", { zone = "Nowhere/Here" }, function() end)))
            print(select(2, pcall(timer.at, "09:30", { zome = "UTC" }, function() end)))
            print(select(2, pcall(timer.cron, "* * * * *")))
            """)
        #expect(test.lines.count == 5, "\(test.stdout)\(test.stderr)")
        #expect(test.lines.first?.contains("bad argument #1 to 'timer.at' ('25:00' is not a time of day") == true, "\(test.lines)")
        #expect(test.lines.dropFirst().first?.contains("bad argument #1 to 'timer.cron' ('* * *' has 3 fields") == true)
        #expect(test.lines.dropFirst(2).first?.contains("bad argument #2 to 'timer.at' (zone 'Nowhere/Here' is not an IANA time zone") == true)
        #expect(test.lines.dropFirst(3).first?.contains("unknown option 'zome'") == true)
        #expect(test.lines.last?.contains("bad argument #2 to 'timer.cron'") == true)
    }
}
