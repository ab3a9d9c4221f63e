import CrescentKit
import Testing

@Suite struct TaskTests {
    @Test func tasksSleepInVirtualTime() throws {
        let test = try TestHost()
        test.run("""
            local t = task(function(a, b)
              print("start", a, b)
              sleep(1)
              print("one second later")
              sleep(2)
              return "result"
            end, "x", 2)
            print("spawned", t.done)
            timer.after(4, function() print("done?", t.done, t.result, t.error) end)
            """)
        #expect(test.lines == ["start\tx\t2", "spawned\tfalse"])
        test.advance(seconds: 1)
        #expect(test.lines.last == "one second later")
        test.advance(seconds: 3)
        #expect(test.lines.last == "done?\ttrue\tresult\tnil")
        #expect(test.exitStatus == 0)
    }

    @Test func cancelStopsATaskAndClosesItsVariables() throws {
        let test = try TestHost()
        test.run("""
            local t = task(function()
              local guard <close> = setmetatable({}, { __close = function() print("closed") end })
              sleep(10)
              print("never")
            end)
            timer.after(1, function() t:cancel() print(t.done, t.error) end)
            """)
        test.advance(seconds: 20)
        #expect(test.lines == ["closed", "true\tcancelled"])
        #expect(test.exitStatus == 0)
    }

    @Test func aFailingTaskIsReported() throws {
        let test = try TestHost()
        test.run("""
            local t = task(function() sleep(1) error("task broke") end)
            timer.after(2, function() print(t.done, t.error ~= nil) end)
            """)
        test.advance(seconds: 3)
        #expect(test.stderr.contains("crescent: error in task: test.lua:1: task broke"))
        #expect(test.lines == ["true\ttrue"])
        #expect(test.exitStatus == 1)
    }

    @Test func sleepOutsideATaskSaysHowToFixIt() throws {
        let test = try TestHost()
        test.run("""
            print(select(2, pcall(sleep, 1)))
            task(function()
              local co = coroutine.wrap(function() sleep(1) end)
              print(select(2, pcall(co)))
            end)
            """)
        #expect(test.lines.count == 2)
        #expect(test.lines.allSatisfy { $0.contains("sleep: not inside a task; wrap the code in task(function() ... end)") })
    }

    @Test func tasksStartedInsideTasksRunToo() throws {
        let test = try TestHost()
        test.run("""
            task(function()
              print("outer")
              task(function() sleep(1) print("inner") end)
              sleep(2)
              print("outer again")
            end)
            """)
        test.advance(seconds: 3)
        #expect(test.lines == ["outer", "inner", "outer again"])
        #expect(test.exitStatus == 0)
    }

    /// A task that returned leaves its coroutine to the next tasks: each later task still runs
    /// its own function with its own arguments, sleeps and fails on its own, and the host holds
    /// no more than before.
    @Test func tasksRunOnReusedCoroutinesAsOnFreshOnes() throws {
        let test = try TestHost()
        test.run("keep = timer.every(1, function() end)")
        let before = test.host.census
        test.run("""
            local threads, results = {}, {}
            for i = 1, 40 do
              local t = task(function(n)
                threads[coroutine.running()] = true
                if n % 10 == 0 then sleep(n / 10) end
                if n == 25 then error("twenty-five") end
                return n * 2
              end, i)
              results[i] = t
            end
            timer.after(5, function()
              local sum, failed, distinct = 0, 0, 0
              for _, t in ipairs(results) do
                if t.error then failed = failed + 1 else sum = sum + t.result end
              end
              for _ in pairs(threads) do distinct = distinct + 1 end
              print(sum, failed, distinct < 40)
              threads, results = nil, nil
            end)
            """)
        test.advance(seconds: 5)
        #expect(test.lines.last == "\((1...40).reduce(0, +) * 2 - 50)\t1\ttrue", "\(test.lines)")
        #expect(test.stderr.contains("twenty-five"), "\(test.stderr)")
        test.run("collectgarbage('collect')")
        #expect(test.host.census == before, "\(test.host.census) after, \(before) before")
    }
}
