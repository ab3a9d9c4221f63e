import ChildTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A controller app started as a shell's background job (`crescent app.lua &`) on a real
/// terminal (tmux running an interactive bash with job control): while it is in the background
/// its live view leaves the shell's screen alone, and brought back with `fg` it shows the view
/// and takes the keys.
@Suite(.serialized) struct BackgroundHostTests {
    /// A view that changes every 0.2 s (so a host drawing over the shell would show within the
    /// waits below); `x` leaves with status 7, and the app ends by itself after `seconds`.
    static func script(seconds: Double) -> String {
        """
        local C = controller("Ticker")
        local n = 0
        function C:loadView() return view.stack { view.text { id = "tick", text = "tick 0" }, view.text { text = "ticker view" } } end
        function C:viewDidLoad()
          self:key("x", "leave", "leave 7")
          timer.every(0.2, function() n = n + 1; self.view.tick.text = "tick " .. n end)
        end
        function C:leave() app.exit(7) end
        app.push(C)
        timer.after(\(seconds), function() app.exit(0) end)
        """
    }

    @Test func aBackgroundJobLeavesTheShellAloneAndFgBringsTheViewAndKeysBack() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("app.lua", Self.script(seconds: 60))
        let shell = try TmuxShell(folder: sandbox.path)
        defer { shell.end() }
        let command = "\(CrescentProcess.binaryPath) --no-plugins --data-dir data app.lua"
        shell.type("\(command) & echo started-job\r")
        #expect(await shell.waitFor { $0.contains("started-job") }, "\(shell.screen)")
        // Long enough for several ticks of a host that drew.
        try await Task.sleep(for: .seconds(1.5))
        shell.type("echo typed-by-person\r")
        #expect(await shell.waitFor { $0.filter { $0 == "typed-by-person" }.count == 1 }, "\(shell.screen)")
        try await Task.sleep(for: .seconds(1))
        let background = shell.screen
        #expect(!background.contains { $0.contains("tick") || $0.contains("ticker view") }, "the view drew over the shell: \(background)")
        #expect(background.contains("$ echo typed-by-person"), "the person's command line is intact: \(background)")

        shell.type("fg\r")
        #expect(await shell.waitFor { $0.contains("ticker view") }, "fg shows the view: \(shell.screen)")
        #expect(await shell.waitFor { $0.last?.contains("x leave 7") == true }, "fg gives the app the keys (its status line): \(shell.screen)")
        shell.type("x")
        #expect(await shell.waitFor { $0.last == "$" }, "the shell's prompt is back: \(shell.screen)")
        shell.type("echo status=$?\r")
        #expect(await shell.waitFor { $0.contains("status=7") }, "x reached the app, which exited 7 (a death by a signal reads 128+): \(shell.screen)")
    }

    /// Issue 39: a remote command's error in a background host was written by the host into
    /// the shell's prompt, beside the one `crescent send` itself prints. The host holds it: `fg`
    /// shows it on the status line, and it is written out when the app gives the terminal back.
    @Test func aBackgroundJobHoldsItsErrorsUntilItIsBroughtBack() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("app.lua", Self.script(seconds: 60))
        let runtime = sandbox.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let shell = try TmuxShell(folder: sandbox.path)
        defer { shell.end() }
        shell.type("export XDG_RUNTIME_DIR=\(runtime)\r")
        shell.type("\(CrescentProcess.binaryPath) --no-plugins --data-dir data --listen=bgjob app.lua & echo started-job\r")
        #expect(await shell.waitFor { $0.contains("started-job") }, "\(shell.screen)")
        #expect(await shell.waitFor { _ in FileManager.default.fileExists(atPath: runtime + "/crescent/bgjob.sock") }, "the host listens")
        shell.type("\(CrescentProcess.binaryPath) send bgjob ad x; echo sent=$?\r")
        #expect(await shell.waitFor { $0.contains("sent=1") }, "\(shell.screen)")
        try await Task.sleep(for: .milliseconds(500))
        let background = shell.screen
        #expect(background.filter { $0.contains("unknown command 'ad'") }.count == 1, "only the client's own error: \(background)")
        #expect(background.contains { $0.hasPrefix("crescent: send: unknown command 'ad'") }, "\(background)")

        shell.type("fg\r")
        #expect(await shell.waitFor { $0.contains("ticker view") }, "fg shows the view: \(shell.screen)")
        #expect(await shell.waitFor { $0.last?.contains("unknown command 'ad'") == true }, "the held error on the status line: \(shell.screen)")
        shell.type("x")
        #expect(await shell.waitFor { $0.last == "$" }, "the shell's prompt is back: \(shell.screen)")
        #expect(shell.screen.contains { $0.hasPrefix("crescent: unknown command 'ad'") }, "written out after the app: \(shell.screen)")
    }

    @Test func aBackgroundJobThatEndsThereLeavesTheShellAlone() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("app.lua", Self.script(seconds: 2))
        let shell = try TmuxShell(folder: sandbox.path)
        defer { shell.end() }
        shell.type("\(CrescentProcess.binaryPath) --no-plugins --data-dir data app.lua & wait $!; echo status=$?\r")
        #expect(await shell.waitFor { $0.contains("status=0") }, "\(shell.screen)")
        let screen = shell.screen
        #expect(!screen.contains { $0.contains("tick") || $0.contains("ticker view") }, "\(screen)")
    }
}

/// An interactive bash on a tmux terminal of its own (a server on a socket in the test's folder),
/// typed into and read as a person would see it. Every wait is bounded.
final class TmuxShell: Sendable {
    private let socket: String
    private static let session = "crescent-test"

    init(folder: String, columns: Int = 80, rows: Int = 16) throws {
        socket = folder + "/tmux.sock"
        let started = Self.tmux(socket, ["new-session", "-d", "-s", Self.session, "-x", "\(columns)", "-y", "\(rows)", "-c", folder,
                                         "env -i HOME=\(folder) PATH=/usr/bin:/bin TERM=xterm-256color PS1='$ ' bash --norc --noprofile -i"])
        guard started.status == 0 else { throw TmuxError(message: "tmux new-session failed: \(started.output)") }
    }

    /// Types `text` as keys ("\r" is Enter).
    func type(_ text: String) {
        _ = Self.tmux(socket, ["send-keys", "-t", Self.session, "-l", text])
    }

    /// The lines on the screen, trailing blanks cut.
    var screen: [String] {
        let captured = Self.tmux(socket, ["capture-pane", "-p", "-t", Self.session]).output
        var lines = captured.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// Waits (up to `seconds`) until `condition` holds for the screen.
    func waitFor(within seconds: Double = 15, _ condition: ([String]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(screen) { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return condition(screen)
    }

    /// Ends the tmux server, the shell and whatever it still runs.
    func end() {
        _ = Self.tmux(socket, ["kill-server"])
    }

    /// Runs tmux with `arguments` and waits (10 s at most) for it; a tmux that dies by a signal
    /// fails the test. A ``TestChild`` rather than Foundation's Process: the server tmux starts
    /// keeps a pipe's end open for good (so the output goes to a file), and the server and the
    /// shell inherit the signal mask, which must block nothing for job control (a test's threads
    /// block most signals).
    private static func tmux(_ socket: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let logPath = socket + ".\(UUID().uuidString.prefix(8)).log"
        defer { unlink(logPath) }
        let child: TestChild
        do {
            child = try TestChild("/usr/bin/tmux", ["-S", socket] + arguments, stdout: .file(logPath), stderr: .descriptor(1))
        } catch {
            return (-1, "cannot run tmux: \(error)")
        }
        guard let ending = child.wait(seconds: 10) else {
            child.signal(SIGKILL)
            _ = child.waitUntilEnded()
            return (-1, "tmux \(arguments.joined(separator: " ")) did not end within 10 s")
        }
        let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        switch ending {
        case .exited(let status): return (status, output)
        case .signaled(let signal):
            Issue.record("tmux \(arguments.joined(separator: " ")) died by signal \(signal)\n\(output)")
            return (-1, output)
        }
    }
}

struct TmuxError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
