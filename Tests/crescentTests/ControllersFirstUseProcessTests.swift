import Foundation
import Testing

/// The controller prelude loads when a run first uses it, not at start (a third of `crescent -e
/// ''`): a run that makes no controller never runs it, and a first use when the address space
/// is full is a Lua error or a load, never a trap (the first attempt read `app.args` through the
/// load, and the process died of SIGABRT there).
@Suite struct ControllersFirstUseProcessTests {
    /// `-e` code that reads `app.args` and the stand-in finds the controllers unloaded: `app`
    /// has none of their functions, `controller` is the stand-in.
    @Test func aRunThatMakesNoControllerDoesNotLoadThem() async throws {
        let result = try await crescent(["-e", "print(#app.args, rawget(app, 'push'), debug.getinfo(controller, 'S').source)", "one"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["1\tnil\t=[crescent controllers_firstuse]"], "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    /// With the address space filled (``ThreadLimitTests/fill``), reading `app.args` loads
    /// nothing, and the first controller either loads or fails with a Lua error saying why;
    /// with memory back, the next one loads. No signal, no crash report.
    @Test func aFirstUseWithTheAddressSpaceFullIsNoTrap() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", ThreadLimitTests.fill + #"""
            print(app.args[1], rawget(app, "push"))
            local ok, message = pcall(function() local C = controller("C") end)
            print(ok or message:find("cannot load the controllers", 1, true) ~= nil)
            kept = nil
            collectgarbage()
            collectgarbage()
            local C = controller("C")
            function C:viewDidLoad() print("pushed") end
            app.push(C)
            app.pop()
            """#)
        let result = try await crescent(
            [ThreadLimitTests.addressSpace, CrescentProcess.binaryPath, "--data-dir", ":memory:", "script.lua", "one"],
            executable: "/usr/bin/prlimit", in: sandbox)
        #expect(!result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["filled", "one\tnil", "true", "pushed"], "\(result)")
    }
}
