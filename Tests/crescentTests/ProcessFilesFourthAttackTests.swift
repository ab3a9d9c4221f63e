import Foundation
import Testing

/// Issue 38's last attack (new29a), D6, D7, D8, D9, D11: a faked spawned program's pid, a cut
/// line's flag, a NUL in a schedule's zone, the one answer for an empty path, and a schedule's
/// zone named as `TZ` names it. Each through the `crescent` binary.
@Suite struct ProcessFilesFourthAttackTests {
    /// D6: a faked spawned program had `pid = nil`, where a real one has a number: code that logs
    /// or keys by pid behaved otherwise under test.
    @Test func aFakedSpawnedProgramHasAPid() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/pid_spec.lua", """
            describe("a faked program", function()
              it("has a pid no real process has", function()
                fake.process { cat = { stdout = "x\\n" } }
                local first = services.process:spawn({ "cat" })
                local second = services.process:spawn({ "cat" })
                assert.equals("integer", math.type(first.pid))
                assert.is_true(first.pid > 4194304)
                assert.are_not.equal(first.pid, second.pid)
              end)
            end)
            """)
        let result = try await crescent(["test", "spec/pid_spec.lua"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("1 passed, 0 failed"), "\(result)")
    }

    /// D7: a line cut at `maxBytes` says so; an uncut one says `false` (it read nil, and the
    /// record showed no such field).
    @Test func aCutLineSaysItWasCut() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("cut.lua", """
            local p = services.process:spawn({ "sh", "-c", "printf 'xxxxxxxxxxxxxxxxxxxx\\\\nshort\\\\n'" }, { maxBytes = 10 })
            p:on("didOutput", function(out) print(out.line, out.truncated) end)
            """)
        let result = try await crescent(["cut.lua"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "xxxxxxxxxx\ttrue\nshort\tfalse\n", "\(result)")
    }

    /// D8: a NUL in a schedule's zone was accepted (and shown in its name); NUL is refused
    /// everywhere else a name reaches the system.
    @Test func aNulInAZoneIsRefused() async throws {
        let result = try await crescent(["-e", #"timer.at("09:30", { zone = "Europe/Paris\0" }, function() end)"#])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("bad argument #2 to 'timer.at' (zone 'Europe/Paris\\0' contains a NUL character"), "\(result)")
    }

    /// D9: an empty path got three answers (`not_found`, "names no file", "path is empty").
    @Test func anEmptyPathIsOneError() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("empty.lua", """
            local files = services.files
            task(function()
              for _, call in ipairs({
                function() return files:read("") end, function() return files:write("", "x") end,
                function() return files:list("") end, function() return files:stat("") end,
                function() return files:watch("") end,
              }) do
                -- Awaited calls answer nil and the error; watch raises it.
                local ok, result, err = pcall(call)
                local e = ok and err or result
                print(e.code, e.message)
              end
            end)
            """)
        let result = try await crescent(["empty.lua"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let line = "invalid_argument\tpath is empty: give a file or a folder (\".\" for the current one)"
        #expect(result.stdout == Array(repeating: line + "\n", count: 5).joined(), "\(result)")
    }

    /// D11: under `TZ=UTC` a schedule named its zone GMT (Foundation's name); a bad `TZ` was
    /// blamed on argument #1, the time.
    @Test func theZoneIsNamedAsTZNamesIt() async throws {
        let utc = try await crescent(["-e", #"local t = timer.at("09:30", function() end) print(t.schedule) t:cancel()"#],
                                    environment: ["TZ": "UTC"])
        #expect(utc.stdout == "at 09:30 UTC\n", "\(utc)")
        let bad = try await crescent(["-e", #"timer.at("09:30", function() end)"#], environment: ["TZ": "garbage"])
        #expect(bad.status == 1, "\(bad)")
        #expect(bad.stderr.contains("timer.at: TZ 'garbage' is neither an IANA time zone"), "\(bad)")
        #expect(!bad.stderr.contains("argument #1"), "\(bad)")
    }
    /// D5: a faked program ended on the next turn, whatever it stood for: a spec could not
    /// test a timeout, a kill or a cancel against a program that takes time.
    @Test func aFakedProgramCanTakeTime() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/slow_spec.lua", """
            describe("a faked program that takes time", function()
              it("ends when the clock has moved by its duration", function()
                fake.process { build = { stdout = "done\\n", duration = 30 } }
                local result
                task(function() result = services.process:run({ "build" }) end)
                clock.advance(29)
                assert.is_nil(result)
                clock.advance(1)
                assert.equals("done\\n", result.stdout)
              end)
              it("is ended by its timeout as a real one is", function()
                fake.process { build = { duration = 30 } }
                local result
                task(function() result = services.process:run({ "build" }, { timeout = 5 }) end)
                clock.advance(5)
                assert.is_true(result.timedOut)
                assert.equals("SIGTERM", result.signal)
              end)
              it("ends when it is killed, or its run cancelled", function()
                fake.process { pull = { duration = 60 } }
                local p = services.process:spawn({ "pull" })
                local ended
                p:on("didExit", function(e) ended = e end)
                clock.advance(1)
                assert.is_nil(ended)
                p:kill()
                clock.advance(1)
                assert.equals("SIGTERM", ended.signal)
                local result, err
                local t = task(function() result, err = services.process:run({ "pull" }) end)
                clock.advance(1)
                t:cancel()
                clock.advance(1)
                assert.is_nil(result)
              end)
              it("refuses a duration no program can take", function()
                assert.has_error(function() fake.process { x = { duration = -1 } } end)
              end)
            end)
            """)
        let result = try await crescent(["test", "spec/slow_spec.lua"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("4 passed, 0 failed"), "\(result)")
    }
}
