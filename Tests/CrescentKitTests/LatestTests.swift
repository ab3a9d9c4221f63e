import Testing

/// `{ latest = true }`: a new delivery cancels the handler task of an earlier one that is still
/// waiting, so only the newest delivery's work reaches the view.
@Suite struct LatestTests {
    /// Three changes 0.1 s apart, each handled by work that waits 0.4 s; virtual time.
    static func script(subscribe: String) -> String {
        """
        started, finished = {}, {}
        function handle(t)
          started[#started + 1] = t
          sleep(0.4)
          finished[#finished + 1] = t
        end
        \(subscribe)
        for i = 1, 3 do timer.after(0.1 * i, function() services.thermostat:set(i, function() end) end) end
        timer.after(5, function()
          print("started", table.concat(started, ","))
          print("finished", table.concat(finished, ","))
        end)
        """
    }

    @Test func aNewChangeCancelsExactlyTheStaleHandlerTask() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run(Self.script(subscribe: """
            observe(services.thermostat, "temperature", handle, { initial = false, latest = true })
            """))
        test.advance(seconds: 6)
        #expect(test.lines == ["started\t1.0,2.0,3.0", "finished\t3.0"], "\(test.stderr)")
    }

    @Test func aTaskThatHasFinishedIsNotTouched() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            started, finished = {}, {}
            observe(services.thermostat, "temperature", function(t)
              started[#started + 1] = t
              sleep(0.4)
              finished[#finished + 1] = t
            end, { initial = false, latest = true })
            for i = 1, 3 do timer.after(i, function() services.thermostat:set(i, function() end) end) end
            timer.after(5, function() print(table.concat(finished, ",")) end)
            """)
        test.advance(seconds: 6)
        #expect(test.lines == ["1.0,2.0,3.0"], "changes 1 s apart: every handler finished before the next: \(test.stderr)")
    }

    @Test func withoutItEveryHandlerFinishes() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run(Self.script(subscribe: """
            observe(services.thermostat, "temperature", function(t) task(handle, t) end, { initial = false })
            """))
        test.advance(seconds: 6)
        #expect(test.lines == ["started\t1.0,2.0,3.0", "finished\t1.0,2.0,3.0"], "\(test.stderr)")
    }

    @Test func eventsAndControllerMethodsTakeItToo() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local finished = {}
            on("tick", function(n) sleep(0.4); finished[#finished + 1] = "on" .. n end, { latest = true })
            local Watcher = controller("Watcher")
            function Watcher:viewWillAppear()
              self:observe(services.thermostat, "temperature", "changed", { initial = false, latest = true })
            end
            function Watcher:changed(t)
              sleep(0.4)
              finished[#finished + 1] = "ctl" .. t
            end
            app.push(Watcher)
            for i = 1, 3 do timer.after(0.1 * i, function() post("tick", i); services.thermostat:set(i, function() end) end) end
            timer.after(5, function() table.sort(finished); print(table.concat(finished, ",")) end)
            """)
        test.advance(seconds: 6)
        #expect(test.lines.last == "ctl3.0,on3", "\(test.lines) \(test.stderr)")
    }

    /// On a real loop with a service call in flight: the stale call is cancelled at the service.
    @Test func theStaleServiceCallIsCancelled() async {
        let run = await RealLoopRun.run("""
            local finished, errors = {}, {}
            observe(services.thermostat, "temperature", function(t)
              local answer, err = services.thermostat:slow(0.3)
              finished[#finished + 1] = tostring(t) .. "=" .. tostring(answer)
            end, { initial = false, latest = true })
            services.thermostat:set(1, function()
              services.thermostat:set(2, function() end)
            end)
            timer.every(0.05, function(t)
              if #finished > 0 then print(table.concat(finished, ",")); t:cancel() end
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["2.0=done"], "\(run.lines)")
    }

    @Test func latestMustBeABoolean() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            print(select(2, pcall(observe, services.thermostat, "temperature", function() end, { latest = "yes" })))
            """)
        #expect(test.lines.first?.contains("option 'latest' must be a boolean, got string") == true, "\(test.lines)")
    }
}
