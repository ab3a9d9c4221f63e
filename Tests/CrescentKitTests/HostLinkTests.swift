@testable import CrescentKit
import Model
import Testing

/// What tasks, timers and requests hold of the host, its binding and their scopes: links that
/// read the object while the run is on and nil once it has finished, as weak references did.
@Suite struct HostLinkTests {
    @Test func theHostsLinkReadsTheHostUntilItFinishes() throws {
        let test = try TestHost()
        let link = test.host.weakLink
        #expect(link.object === test.host)
        test.run("keep = timer.after(100, function() end)")
        test.settle()
        let timer = try #require(test.host.timers.first)
        #expect(timer.host === test.host && timer.owner === test.host.scriptScope)
        test.host.finish(status: 0)
        #expect(link.object == nil)
        #expect(timer.host == nil)
        timer.cancel()                                   // reaches no host: nothing happens
        #expect(test.exitStatus == 0)
    }

    @Test func anAwaitedRequestKnowsItsOwnerAndBindingWhileItRuns() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            task(function() services.thermostat:hold(true) end)
            """)
        let request = try #require(test.host.binding.requests.first)
        #expect(request.binding === test.host.binding)
        #expect(request.owner === test.host.scriptScope)
        test.settle()
        #expect(test.host.binding.requests.isEmpty)
        #expect(test.stderr == "")
    }
}
