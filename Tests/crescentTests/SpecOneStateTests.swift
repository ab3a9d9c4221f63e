import Foundation
import Testing

/// `crescent test` runs a spec file in one Lua state, as busted does (its chunk and describe
/// bodies once, then each test in that state), while each test gets a fresh model: new services,
/// store, clock and fakes, nothing left of the test before. Issue 32 #19: a file of N tests cost N².
@Suite struct SpecOneStateTests {
    /// A spec file of `count` tests whose last writes the process's CPU seconds to `cpu.txt`.
    static func manyTests(_ count: Int) -> String {
        var lines = ["local count = 0", "describe(\"many\", function()"]
        for index in 0..<(count - 1) {
            lines.append("  it(\"test \(index)\", function() count = count + 1; assert.equals(1, 1) end)")
        }
        lines.append("  it(\"last\", function() local f = io.open(\"cpu.txt\", \"w\"); f:write(os.clock()); f:close() end)")
        lines.append("end)")
        return lines.joined(separator: "\n") + "\n"
    }

    static func cpuSeconds(tests: Int) async throws -> Double {
        let (result, sandbox) = try await TestCommandTests.run(["many_spec.lua": manyTests(tests)], timeLimit: 600)
        #expect(result.status == 0 && result.stdoutLines.last == "\(tests) passed, 0 failed", "\(result.stdoutLines.suffix(3))")
        let text = try String(contentsOfFile: sandbox.path + "/cpu.txt", encoding: .utf8)
        return try #require(Double(text))
    }

    /// Twice the tests in one file cost about twice the CPU time, not four times (main: 2.8×).
    @Test func aFileOfManyTestsCostsLinearTime() async throws {
        let small = try await Self.cpuSeconds(tests: 3000)
        let large = try await Self.cpuSeconds(tests: 6000)
        #expect(large / small <= 2.4, "3,000 tests: \(small) s of CPU, 6,000: \(large) s")
    }

    /// As under busted: an upvalue, a global set through _G and a module's state carry from one
    /// test of a file to the next.
    @Test func testsOfAFileShareTheirLuaState() async throws {
        let (result, _) = try await TestCommandTests.run(["shared_spec.lua": """
            local count = 0
            local counter = setmetatable({}, { __index = { n = 0 } })
            package.loaded.counter = counter
            describe("shared", function()
              it("first", function()
                count = count + 1
                _G.seen = "first"
                require("counter").n = 1
              end)
              it("second", function()
                count = count + 1
                assert.equals(2, count)
                assert.equals("first", seen)
                assert.equals(1, require("counter").n)
              end)
            end)
            """])
        #expect(result.status == 0 && result.stdoutLines.last == "2 passed, 0 failed", "\(result)")
    }

    /// What a test made of the model (a record, a timer, a subscription, a fake and its property,
    /// a controller) is gone for the next, which starts on a clock at 0.
    @Test func eachTestGetsAFreshModel() async throws {
        let (result, _) = try await TestCommandTests.run(["fresh_spec.lua": """
            local fired = 0
            it("leaves a record, a timer, a handler, a fake and a controller behind", function()
              services.store:collection("notes"):add({ text = "hi" })
              timer.after(5, function() fired = fired + 1 end)
              on("ping", function() fired = fired + 100 end)
              fake.service("weather", { properties = { temp = 1 } }):set("temp", 5)
              assert.equals(5, services.weather.temp)
              local Hello = controller("Hello")
              function Hello:loadView() return view.text("Hello") end
              app.push(Hello)
              assert.equals("Hello", view_text())
              clock.advance(1)
            end)
            it("sees none of them", function()
              assert.equals(0, services.store:collection("notes").count)
              assert.equals(0, clock.now())
              post("ping")
              clock.advance(10)
              assert.equals(0, fired)
              assert.has_error(function() return services.weather end)
              assert.is_nil(app.top)
              assert.has_error(function() view_text() end)
            end)
            """])
        #expect(result.status == 0 && result.stdoutLines.last == "2 passed, 0 failed", "\(result)")
    }

    /// A service object kept from an earlier test (an upvalue) is refused with a clear error,
    /// reaching neither its own torn-down service nor the new test's.
    @Test func aServiceKeptFromAnEarlierTestIsRefused() async throws {
        let (result, _) = try await TestCommandTests.run(["stale_spec.lua": """
            local kept
            it("keeps the store", function()
              kept = services.store
              kept:collection("notes"):add({ text = "hi" })
            end)
            it("uses it", function()
              kept:collection("notes")
            end)
            it("reads it", function()
              return kept.name
            end)
            it("the store of this test is empty", function()
              assert.equals(0, services.store:collection("notes").count)
            end)
            """])
        #expect(result.status == 1 && result.stdoutLines.last == "2 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("spec/stale_spec.lua:7: store:collection(name): services.store was read in an earlier test, "
                                       + "whose services were torn down when it ended (each test gets fresh services): read "
                                       + "services.store again inside the test or a before_each"), "\(result)")
        #expect(result.stdout.contains("services.store.name: services.store was read in an earlier test"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// os.exit, an error in after_each, the time limit and a memory error fail their own test;
    /// the file's next tests run, in the same state.
    @Test func aTestThatFailsBadlyLeavesTheNextRunning() async throws {
        let (result, _) = try await TestCommandTests.run(["bad_spec.lua": """
            local count = 0
            describe("bad", function()
              after_each(function() if count == 2 then error("after boom") end end)
              it("exits", function() count = count + 1; os.exit(3) end)
              it("errs after", function() count = count + 1 end)
              it("loops", function() count = count + 1; while true do end end)
              it("eats memory", function() count = count + 1; local t = {} for i = 1, 1e9 do t[i] = ("x"):rep(1 << 20) .. i end end)
              it("still counts", function() count = count + 1; assert.equals(5, count) end)
            end)
            """], ["--timeout", "10", "--memory-limit", "64"], timeLimit: 180)
        #expect(result.stdout.contains("FAIL    bad exits"), "\(result)")
        #expect(result.stdout.contains("FAIL    bad after_each") && result.stdout.contains("after boom"), "\(result)")
        #expect(result.stdout.contains("FAIL    bad loops") && result.stdout.contains("its time limit of 10 s"), "\(result)")
        #expect(result.stdout.contains("FAIL    bad eats memory") && result.stdout.contains("not enough memory"), "\(result)")
        #expect(result.stdout.contains("ok      bad still counts"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// insulate undoes the globals its block set, for the blocks after it.
    @Test func insulateSeparatesGlobals() async throws {
        let (result, _) = try await TestCommandTests.run(["insulate_spec.lua": """
            insulate("inside", function()
              _G.leak = "set"
              it("sees it", function() assert.equals("set", leak) end)
            end)
            describe("after", function()
              it("does not", function() assert.is_nil(leak) end)
            end)
            """])
        #expect(result.status == 0 && result.stdoutLines.last == "2 passed, 0 failed", "\(result)")
    }
}
