@testable import CrescentKit
import LuaBridge
import Model
import Testing

/// After the binding has torn down, the VM is still open for a moment (its finalizers run as it
/// closes): Lua that runs then and reaches the binding gets a Lua error, never a crash, and the
/// binding's shared tables still serve what only reads.
@Suite struct BindingTeardownTests {
    /// A host whose script kept a service, a collection, a subscription and a request in globals,
    /// then had its binding torn down (as `finish` does before closing the VM).
    func tornDownHost() throws -> TestHost {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            keep = timer.after(100, function() end)
            T = services.thermostat
            R = T.readings
            S = T:observe("temperature", function() end)
            Q = T:hold(false, function() end)
            """)
        test.settle()
        #expect(test.stderr == "")
        test.host.binding.teardown()
        return test
    }

    /// Runs `source` on the host's VM as a chunk of its own; the error message, or nil.
    func failure(of source: String, in test: TestHost) -> String? {
        do {
            try test.host.vm.run(source)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func callsAfterTeardownAreLuaErrorsNamingTheFunction() throws {
        let test = try tornDownHost()
        let calls = [
            ("T:set(20, function() end)", "thermostat:set(degrees, completion): the run has ended"),
            ("T:echo(1, function() end)", "thermostat:echo(value, completion): the run has ended"),
            ("T:rename('x')", "thermostat:rename(label): the run has ended"),
            ("R:record(1, function() end)", "readings:record(value, completion): the run has ended"),
            ("T:observe('temperature', print)", "thermostat:observe(key, handler[, options]): the run has ended"),
            ("T:on('didAlarm', print)", "thermostat:on(event, handler[, options]): the run has ended"),
            ("T:start()", "thermostat:start([options]): the run has ended"),
            ("observe(T, 'temperature', print)", "observe: the run has ended"),
            ("on('x', print)", "on: the run has ended"),
            ("post('x', 1)", "post: the run has ended"),
        ]
        for (call, expected) in calls {
            let message = failure(of: call, in: test)
            #expect(message?.contains(expected) == true, "\(call): \(message ?? "no error")")
        }
    }

    @Test func whatOnlyReadsStillWorksAfterTeardown() throws {
        let test = try tornDownHost()
        // Reads use the shared tables (data models, handles, help), which live until the VM closes.
        #expect(failure(of: """
            assert(T.temperature == 20.0)
            assert(tostring(S):find("^Subscription%("), tostring(S))
            assert(S.active == false)
            S:cancel()
            assert(tostring(Q):find("^Request%(thermostat.hold"), tostring(Q))
            Q:cancel()
            help(T.set)
            """, in: test) == nil)
        test.host.console.flush()
        #expect(test.stdout.contains("Sets the temperature"), "\(test.stdout)")
    }
}
