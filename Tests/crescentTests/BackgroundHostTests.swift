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

    /// Runs tmux with `arguments` and waits (10 s at most) for it. Spawned here rather than
    /// through Foundation's Process: the server tmux starts keeps a pipe's end open for good (so
    /// the output goes to a file), and the server and the shell inherit the signal mask, which
    /// must block nothing for job control (a test's threads block most signals).
    private static func tmux(_ socket: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let logPath = socket + ".\(UUID().uuidString.prefix(8)).log"
        defer { unlink(logPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = (["/usr/bin/tmux", "-S", socket] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/usr/bin/tmux", &actions, &attributes, argv, environ)
        guard spawned == 0 else { return (-1, "cannot run tmux: error \(spawned)") }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(10)
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid || (done < 0 && errno != EINTR) { break }
            if Date() > deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return (-1, "tmux \(arguments.joined(separator: " ")) did not end within 10 s")
            }
            usleep(10_000)
        }
        let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0
        return (exited ? (status >> 8) & 0xff : -1, output)
    }
}

struct TmuxError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
