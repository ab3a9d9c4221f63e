import ChildTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An interactive bash on a new pseudo-terminal that is its controlling terminal, so it has job
/// control as a person's shell does: a program it runs is the terminal's foreground process
/// group, `ctrl-z` makes it a stopped job, and a job that sets the terminal's mode from the
/// background is stopped by SIGTTOU. (``InteractiveTerminal``'s terminal is no controlling
/// terminal: none of that happens there.)
///
/// Every wait is bounded; the shell is killed when the value goes away.
final class JobControlShell: @unchecked Sendable {
    // @unchecked: `output` is locked; the other stored properties are set in init and only read.
    private let master: Int32
    private let shell: TestChild
    private let output = TerminalLockedBytes()

    /// Starts `bash --norc --noprofile -i` (prompt `$ `) in `directory` with `environment` added.
    init(directory: String, environment: [String: String] = [:], columns: Int = 100, rows: Int = 12) throws {
        let slave: Int32
        (master, slave) = try openPseudoTerminal(columns: columns, rows: rows)
        var variables = ProcessInfo.processInfo.environment
        for name in CrescentProcess.scrubbedVariables + ["COLUMNS", "LINES", "PROMPT_COMMAND", "BASH_ENV", "ENV"] { variables[name] = nil }
        variables["TERM"] = "xterm-256color"
        variables["PS1"] = "$ "
        for (name, value) in environment { variables[name] = value }
        do {
            // setsid --ctty: a session of its own whose controlling terminal is this one.
            shell = try TestChild("/usr/bin/setsid", ["--ctty", "/bin/bash", "--norc", "--noprofile", "-i"], environment: variables,
                                  directory: directory, stdin: .descriptor(slave), stdout: .descriptor(slave), stderr: .descriptor(slave))
        } catch {
            close(slave)
            close(master)
            throw error
        }
        close(slave)
        let master = self.master
        let output = self.output
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(master, &buffer, buffer.count)
                if count > 0 {
                    output.append(Array(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            output.finish()
        }.start()
    }

    deinit {
        if shell.isRunning { shell.signal(SIGKILL) }
        _ = shell.waitUntilEnded()
        close(master)
    }

    /// Whether this machine has what the shell needs.
    static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid") && FileManager.default.isExecutableFile(atPath: "/bin/bash")
    }

    /// Types `text` ("\r" is Enter, "\u{1A}" is ctrl-z).
    func type(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(master, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// Everything written to the terminal so far.
    var text: String { String(decoding: output.bytes, as: UTF8.self) }

    /// Waits until the terminal's text holds `fragment` after `offset` bytes; false, recorded as
    /// an issue with the text, when `seconds` pass first.
    @discardableResult
    func waitFor(_ fragment: String, after offset: Int = 0, within seconds: Double = 15,
                 sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if String(decoding: output.bytes.dropFirst(offset), as: UTF8.self).contains(fragment) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("waited \(seconds) s for '\(fragment)'; the terminal:\n\(TerminalRun.escaped(text))", sourceLocation: sourceLocation)
        return false
    }

    /// How many bytes were written so far.
    var count: Int { output.bytes.count }

    /// Ends the shell (and a job it left stopped) and waits for it, at most 5 s.
    func end() async {
        type("kill -KILL %1 2>/dev/null; exit\r")
        let deadline = Date().addingTimeInterval(5)
        while shell.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if shell.isRunning { shell.signal(SIGKILL) }
    }
}
