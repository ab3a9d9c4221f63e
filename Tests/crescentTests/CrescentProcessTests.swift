import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The harness itself: a process a test starts that dies by a signal fails that test, unless the
/// test sent that signal to end it. Each death here is real (a process killed by the kernel's
/// delivery of the signal), and `withKnownIssue` fails if the harness records nothing.
@Suite struct CrescentProcessTests {
    /// A crescent that kills itself with `signal` (through a shell: `$PPID` is crescent).
    static func selfKilling(_ signal: String) -> [String] {
        ["-e", #"os.execute("kill -\#(signal) $PPID"); while true do end"#]
    }

    @Test func aRunThatDiesByASignalFailsItsTest() async throws {
        try await withKnownIssue {
            // Without Swift's backtracer, which would catch the signal to print a crash report.
            let result = try await crescent(Self.selfKilling("SEGV"), environment: ["SWIFT_BACKTRACE": "enable=no"])
            #expect(result.killedBySignal && result.status == SIGSEGV, "\(result)")
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("died by signal \(SIGSEGV)") }
        }
    }

    @Test func aSignalTheTestSaidCrescentHandlesStillFailsWhenItKills() async throws {
        // A shell does not catch SIGTERM: sent as `.handled`, its death is a failure.
        let sandbox = try Sandbox()
        let script = try sandbox.write("stubborn.sh", "#!/bin/sh\necho ready\nexec sleep 30\n", executable: true)
        try await withKnownIssue {
            let process = CrescentProcess([], executable: script, directory: sandbox.path)
            try process.start()
            #expect(await process.waitForOutput("ready"))
            process.send(SIGTERM, expecting: .handled)
            _ = await process.finish()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("died by signal \(SIGTERM)") }
        }
    }

    @Test func aSignalSentToEndTheProcessIsNoFailure() async throws {
        let sandbox = try Sandbox()
        let process = try startScript(#"print("ready"); io.stdout:flush(); while true do end"#, in: sandbox)
        #expect(await process.waitForOutput("ready"))
        process.send(SIGKILL, expecting: .death)
        let result = await process.finish()
        #expect(result.killedBySignal && result.status == SIGKILL, "\(result)")
    }

    @Test func aProcessNeverFinishedIsCheckedWhenItGoesAway() async throws {
        let sandbox = try Sandbox()
        try await withKnownIssue {
            let process = CrescentProcess(Self.selfKilling("ABRT"), directory: sandbox.path,
                                          environment: ["SWIFT_BACKTRACE": "enable=no"])
            try process.start()
            let deadline = Date().addingTimeInterval(20)
            while process.process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
            // Bounded: a process that outlives the wait is killed, and its SIGKILL does not match.
            if process.process.isRunning { kill(process.process.processIdentifier, SIGKILL) }
            // The test drops the process without finishing it: its deinit records the death.
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("died by signal \(SIGABRT)") }
        }
    }

    @Test func aRunOnAPseudoTerminalThatDiesByASignalFailsItsTest() async throws {
        let sandbox = try Sandbox()
        try withKnownIssue {
            // SIGUSR1, not a crash signal: on a terminal, Swift's backtracer waits for a key after one.
            _ = try runOnPseudoTerminal(Self.selfKilling("USR1"), directory: sandbox.path)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("died by signal \(SIGUSR1)") }
        }
    }
}
