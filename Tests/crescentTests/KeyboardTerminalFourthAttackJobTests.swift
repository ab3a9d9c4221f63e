import ChildTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// D3: a job stopped with ctrl-z, or put in the background with `bg`, never ended on SIGTERM,
/// SIGINT or SIGHUP: continued in the background, it stopped again (SIGTTOU) as it set the
/// terminal's modes, which were the shell's by then. On an interactive bash (tmux), as a person
/// does it.
@Suite(.serialized) struct KeyboardTerminalFourthAttackJobTests {
    /// Runs the ticker app under bash, suspends it with ctrl-z, optionally `bg`s it, then runs
    /// `ending` (bash's `kill`, which continues a stopped job after SIGTERM and SIGHUP, not after
    /// SIGINT) and waits for it to end, and returns its status, or nil when it did not end.
    private func endStoppedJob(with ending: String, inBackground: Bool) async throws -> (status: String?, screen: [String]) {
        let sandbox = try Sandbox()
        _ = try sandbox.write("app.lua", BackgroundHostTests.script(seconds: 60))
        let shell = try TmuxShell(folder: sandbox.path)
        defer {
            // Whatever happens, the app does not outlive the test (stopped, it ignores the hang-up).
            if let pid = (try? String(contentsOfFile: sandbox.path + "/pid", encoding: .utf8)).flatMap({ pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                kill(pid, SIGKILL)
            }
            shell.end()
        }
        shell.type("\(CrescentProcess.binaryPath) --no-plugins --data-dir data app.lua\r")
        #expect(await shell.waitFor { $0.last?.contains("x leave 7") == true }, "the app runs: \(shell.screen)")
        shell.type("\u{1A}")
        #expect(await shell.waitFor { $0.contains { $0.contains("Stopped") } }, "ctrl-z stopped it: \(shell.screen)")
        shell.type("jobs -p > pid\r")
        if inBackground { shell.type("bg\r") }
        // `wait -f`: until the job ends (a plain `wait` answers 148, stopped, while bash has not
        // yet seen the job continue after its `kill`). A job stopped again never ends.
        shell.type("\(ending); wait -f %1; echo status=$?\r")
        // `status=` and digits: the command line typed says `status=$?` (and a job that wrote to
        // the terminal from the background could move the cursor into that line).
        _ = await shell.waitFor(within: 20) { $0.contains { $0.contains(/status=\d/) } }
        let screen = shell.screen
        let status = screen.lazy.compactMap { $0.firstMatch(of: /status=(\d+)/) }.last.map { String($0.1) }
        return (status, screen)
    }

    @Test func sigtermEndsAStoppedJob() async throws {
        let (status, screen) = try await endStoppedJob(with: "kill -TERM %1", inBackground: false)
        #expect(status == "143", "\(screen)")
        #expect(!screen.contains { $0.contains("ticker view") }, "no frame over the shell: \(screen)")
    }

    /// A stopped job keeps a SIGINT pending until it is continued: `bg` does it, in the
    /// background, and the app ends as SIGINT ends it.
    @Test func sigintEndsAStoppedJobOnceItIsContinuedInTheBackground() async throws {
        let (status, screen) = try await endStoppedJob(with: "kill -INT %1; bg %1", inBackground: false)
        #expect(status == "130", "\(screen)")
    }

    @Test func sighupEndsAJobInTheBackground() async throws {
        let (status, screen) = try await endStoppedJob(with: "kill -HUP %1", inBackground: true)
        #expect(status == "129", "\(screen)")
    }

    @Test func sigtermEndsAJobInTheBackground() async throws {
        let (status, screen) = try await endStoppedJob(with: "kill -TERM %1", inBackground: true)
        #expect(status == "143", "\(screen)")
    }
}
