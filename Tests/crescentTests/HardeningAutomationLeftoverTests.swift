import Foundation
import Glibc
import Testing

/// What was left of the second attack on automation (issue 38), end to end through the binary:
/// cancelling many schedules held the loop for a time that grew with their square, and names
/// that are not UTF-8 were listed and watched as other names.
@Suite struct HardeningAutomationLeftoverTests {
    /// N12: each cancel searched NIO's scheduler from the start; 40,000 crons due at the same
    /// time took ~65 s of the loop to cancel, against ~2 s to make. Measured in the process's
    /// CPU time (`os.clock`), so a loaded machine slows both sides alike.
    @Test func cancellingManySchedulesCostsNoMoreThanMakingThem() async throws {
        let result = try await runScript("""
            local N = 40000
            local made = {}
            local t0 = os.clock()
            for i = 1, N do made[i] = timer.cron("0 0 * * *", function() end) end
            for i = 1, N do made[N + i] = timer.after(3600 + i % 7, function() end) end
            local t1 = os.clock()
            for i = 1, 2 * N do made[i]:cancel() end
            local t2 = os.clock()
            print(string.format("made %.2f cancelled %.2f", t1 - t0, t2 - t1))
            """, timeLimit: 240)
        #expect(result.status == 0, "\(result)")
        let figures = result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
        try #require(figures.count == 2, "\(result)")
        #expect(figures[1] <= max(figures[0], 1), "80,000 cancels took \(figures[1]) s of CPU, making them \(figures[0]) s")
        #expect(result.stderr.isEmpty, "\(result)")
    }

    /// N2: a name that is not UTF-8 was listed as U+FFFD (four files listed as two names twice,
    /// and reading a listed name read another file), could not be read, written or stat'ed by
    /// its name, and a watch reported it as a path that does not exist. Names are their bytes.
    @Test func namesThatAreNotUTF8RoundTripThroughListReadWriteStatAndWatch() async throws {
        let sandbox = try Sandbox()
        try HardeningAutomationRecheckTests.shell("""
            mkdir h2; printf real > h2/$(printf '\\377\\376'); printf decoy > h2/$(printf '\\357\\277\\275\\357\\277\\275')
            printf a > h2/$(printf '\\377'); printf b > h2/$(printf '\\376')
            """, in: sandbox.path)
        try sandbox.write("script.lua", #"""
            local function hex(s) return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end)) end
            task(function()
              local F = services.files
              local out = {}
              for _, n in ipairs(F:list("h2")) do out[#out + 1] = hex(n) .. "=" .. tostring(F:read("h2/" .. n)) end
              table.sort(out)
              print(table.concat(out, " "))
              print(F:write("h2/\xff", "new"), F:read("h2/\xff"), F:read("h2/\xef\xbf\xbd\xef\xbf\xbd"), F:stat("h2/\xfe").path == "h2/\xfe")
              -- One burst (the file's creation and its write), its first delivery only.
              local w = F:watch("h2", { debounce = 0.5 })
              w:on("didChange", function(c)
                if not w.active then return end
                for _, ch in ipairs(c.changes) do print("changed", hex(ch.path), ch.kind) end
                w:cancel()
              end)
              timer.after(0.3, function() os.execute("printf x > h2/$(printf '\\375')") end)
            end)
            """#)
        let result = try await crescent(["script.lua"], in: sandbox, timeLimit: 30)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["efbfbdefbfbd=decoy fe=b ff=a fffe=real", "true\tnew\tdecoy\ttrue", "changed\t68322ffd\tcreated"], "\(result)")
    }

    /// M15: a `cwd` the user may not enter was blamed on the program ("program 'pwd' is not
    /// executable"). Run as `nobody` (needs root to switch to it).
    @Test func aCwdTheUserCannotEnterIsNamed() async throws {
        guard getuid() == 0 else { return }
        let sandbox = try Sandbox()
        chmod(sandbox.path, 0o755)
        try FileManager.default.createDirectory(atPath: sandbox.path + "/locked", withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        try sandbox.write("script.lua", """
            task(function()
              local r, e = services.process:run({ "pwd" }, { cwd = "locked" })
              print(tostring(e))
            end)
            """)
        let result = try await crescent(["--reuid=65534", "--regid=65534", "--clear-groups", CrescentProcess.binaryPath, "script.lua"],
                                        executable: "/usr/bin/setpriv", in: sandbox, environment: ["HOME": "/tmp"], timeLimit: 30)
        #expect(result.stdoutLines == ["process.run: permission: cwd 'locked' cannot be entered: permission denied"], "\(result)")
    }

    /// M4: with a POSIX `TZ` (`JST-9`) os.date showed local time but timer.at's default zone
    /// was UTC, so "09:00" fired at 18:00 local. A fixed offset is that zone now; a rule with
    /// daylight saving is an error asking for a zone.
    @Test func aPosixTZIsTheDefaultZoneOrAClearError() async throws {
        let script = "print(pcall(function() return timer.at('09:00', function() end).schedule end)) app.exit(0)"
        let fixed = try await crescent(["-e", script], environment: ["TZ": "JST-9"], timeLimit: 30)
        #expect(fixed.stdoutLines == ["true\tat 09:00 GMT+0900"], "\(fixed)")
        let ruled = try await crescent(["-e", script], environment: ["TZ": "CET-1CEST,M3.5.0,M10.5.0/3"], timeLimit: 30)
        #expect(ruled.stdout.contains("TZ 'CET-1CEST,M3.5.0,M10.5.0/3' is not an IANA time zone but a POSIX rule"), "\(ruled)")
        let named = try await crescent(["-e", script], environment: ["TZ": "Asia/Tokyo"], timeLimit: 30)
        #expect(named.stdoutLines == ["true\tat 09:00 Asia/Tokyo"], "\(named)")
    }
}
