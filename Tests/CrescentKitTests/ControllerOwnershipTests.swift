import CrescentKit
import LuaBridge
import Testing

/// DESIGN.md "Ownership": what a controller starts ends with it, and a controller that is gone
/// never receives anything.
@Suite struct ControllerOwnershipTests {
    static let script = """
        keepalive = timer.every(1000, function() end)
        delivered, pinged, appeared = 0, 0, 0
        local C = controller("C")
        function C:viewDidLoad()
          self:observe(services.thermostat, "temperature", "changed", { initial = false })
          self:after(500, function() print("never") end)
        end
        function C:viewWillAppear()
          self:every(0.5, function() end)
          self:on("ping", "pinged")
          self:observe(services.thermostat, "label", function() end)
        end
        function C:viewDidAppear()
          local result = services.thermostat:echo(1)
          appeared = appeared + result
        end
        function C:changed() delivered = delivered + 1 end
        function C:pinged() pinged = pinged + 1 end
        function cycle() app.push(C) app.pop() end
        """

    private func call(_ test: TestHost, _ name: String) throws {
        _ = test.host.vm.getGlobal(name)
        try test.host.vm.call(arguments: 0, results: 0)
    }

    private func global(_ test: TestHost, _ name: String) -> Int64? {
        _ = test.host.vm.getGlobal(name)
        defer { test.host.vm.stack.pop() }
        return test.host.vm.stack.integer(at: -1)
    }

    @Test func tenThousandPushPopCyclesLeaveNothingBehind() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run(Self.script)
        test.run("local _ = services.thermostat")   // made on first use: its one reference is not a leak
        test.settle()
        let before = test.host.census
        for _ in 0..<10_000 {
            try call(test, "cycle")
            test.settle(rounds: 3)
        }
        #expect(global(test, "appeared") == 10_000, "every viewDidAppear awaited its request")
        #expect(test.host.census == before)
        test.run("""
            services.thermostat:set(30, function() end)
            post("ping")
            """)
        test.settle()
        #expect(global(test, "delivered") == 0, "a deallocated controller receives nothing")
        #expect(global(test, "pinged") == 0)
        #expect(!test.stdout.contains("never"))
        #expect(test.stderr.isEmpty, "\(test.stderr)")
    }

    @Test func appearanceSubscriptionsEndAfterDisappearLifetimeOnesAtDealloc() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run(Self.script + "\n" + """
            local Cover = controller("Cover")
            function report(label) print(label, #subscriptions()) end
            report("start")
            app.push(C)
            timer.after(1, function() report("C visible") app.push(Cover) end)
            timer.after(2, function() report("C covered") post("ping") end)
            timer.after(3, function() print("pinged while covered", pinged) app.pop() end)
            timer.after(4, function() report("C visible again") post("ping") end)
            timer.after(4.5, function() app.pop() end)
            timer.after(5, function() report("C gone") print("pinged", pinged) end)
            """)
        for _ in 0..<6 {
            test.advance(seconds: 1)
            test.settle()
        }
        #expect(test.lines == [
            "start\t0", "C visible\t3", "C covered\t1", "pinged while covered\t0", "C visible again\t3", "C gone\t0", "pinged\t1",
        ])
    }
}
