import ChildTestSupport
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
            while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
            // Bounded: a process that outlives the wait is killed, and its SIGKILL does not match.
            if process.isRunning { process.send(SIGKILL, expecting: .death) }
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

    /// A child's end is read by its pid, at once: an exit status, a signal, and a run that
    /// ended while nobody was waiting (Foundation's `Process.isRunning` once missed an exit for
    /// 30 s, holding `finish` that long).
    @Test func aChildsEndIsSeenByItsPidAtOnce() async throws {
        let exits = try TestChild("/bin/sh", ["-c", "exit 7"])
        #expect(exits.wait(seconds: 5) == .exited(7))
        let crashes = try TestChild("/bin/sh", ["-c", "kill -SEGV $$"])
        #expect(crashes.wait(seconds: 5) == .signaled(SIGSEGV))
        let sleeper = try TestChild("/bin/sleep", ["30"], processGroup: true)
        #expect(sleeper.wait(seconds: 0.05) == nil && sleeper.isRunning)
        sleeper.signal(SIGTERM, group: true)
        #expect(sleeper.wait(seconds: 5) == .signaled(SIGTERM))
        // A signal after the reap goes nowhere (the pid may be another process's by then).
        sleeper.signal(SIGKILL)
        #expect(sleeper.end == .signaled(SIGTERM))
        // The child starts with nothing blocked, though this test's thread blocks signals.
        let mask = try TestChild("/bin/sh", ["-c", "grep -q '^SigBlk:[[:space:]]*0*$' /proc/self/status"])
        #expect(mask.wait(seconds: 5) == .exited(0))
        let started = Date()
        for _ in 0..<20 {
            let result = try await crescent(["-e", ""], timeLimit: 20)
            #expect(result.status == 0 && !result.timedOut, "\(result)")
        }
        #expect(Date().timeIntervalSince(started) < 30, "20 runs of an empty script")
    }
}

