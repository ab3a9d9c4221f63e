import Testing

/// `{ latest = true }`: a new delivery cancels the handler task of an earlier one that is still
/// waiting on a service, so only the newest delivery's work reaches the view. Real loop: the
/// thermostat's `slow` answers from a Swift task.
@Suite struct LatestTests {
    /// Three changes 0.05 s apart, each handled by a lookup that takes 0.4 s.
    static func script(subscribe: String) -> String {
        """
        local started, finished, answers = {}, {}, {}
        local function handle(t)
          started[#started + 1] = t
          local answer, err = services.thermostat:slow(0.4)
          finished[#finished + 1] = t
          answers[#answers + 1] = tostring(answer)
        end
        \(subscribe)
        for i = 1, 3 do timer.after(0.05 * i, function() services.thermostat:set(i, function() end) end) end
        timer.after(2, function()
          print("started", table.concat(started, ","))
          print("finished", table.concat(finished, ","))
          print("answers", table.concat(answers, ","))
          app.exit(0)
        end)
        """
    }

    @Test func aNewChangeCancelsExactlyTheStaleHandlerTask() async {
        let run = await RealLoopRun.run(Self.script(subscribe: """
            observe(services.thermostat, "temperature", handle, { initial = false, latest = true })
            """))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["started\t1.0,2.0,3.0", "finished\t3.0", "answers\tdone"], "\(run.lines)")
    }

    @Test func withoutItEveryHandlerFinishes() async {
        let run = await RealLoopRun.run(Self.script(subscribe: """
            observe(services.thermostat, "temperature", function(t) task(handle, t) end, { initial = false })
            """))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["started\t1.0,2.0,3.0", "finished\t1.0,2.0,3.0", "answers\tdone,done,done"], "\(run.lines)")
    }

    @Test func eventsAndControllerMethodsTakeItToo() async {
        let run = await RealLoopRun.run("""
            local finished = {}
            on("tick", function(n) services.thermostat:slow(0.4); finished[#finished + 1] = "on" .. n end, { latest = true })
            local Watcher = controller("Watcher")
            function Watcher:viewWillAppear()
              self:observe(services.thermostat, "temperature", "changed", { initial = false, latest = true })
            end
            function Watcher:changed(t)
              services.thermostat:slow(0.4)
              finished[#finished + 1] = "ctl" .. t
            end
            app.push(Watcher)
            for i = 1, 3 do timer.after(0.05 * i, function() post("tick", i); services.thermostat:set(i, function() end) end) end
            timer.after(2, function() table.sort(finished); print(table.concat(finished, ",")); app.exit(0) end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.last == "ctl3.0,on3", "\(run.lines)")
    }

    @Test func latestMustBeABoolean() async {
        let run = await RealLoopRun.run("""
            print(pcall(observe, services.thermostat, "temperature", function() end, { latest = "yes" }))
            """)
        #expect(run.lines.first?.contains("option 'latest' must be a boolean, got string") == true, "\(run.lines)")
    }
}
