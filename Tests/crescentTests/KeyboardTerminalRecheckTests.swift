import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal attack's (new25k) last findings, checked again on a real pseudo-terminal: keys
/// typed behind a looping handler were dropped without the note (D4); a `complete` function that
/// loops was not named while it ran (D6); an error in `viewDidLoad` never reached the status line,
/// and a very long error line swallowed the errors printed after it (D8); a word with bytes that
/// are not UTF-8 vanished and shifted the arguments (D10); `kill -PIPE` ended the app and left
/// the terminal raw on the alternate screen (N1).
@Suite struct KeyboardTerminalRecheckTests {
    /// The attack suite's script: `L` loops, `j` changes the view, `add ITEM`, and `spin`
    /// completes with a function that loops.
    private func start(_ source: String = KeyboardTerminalAttackTests.source,
                       showing: String = "pressed: none") async throws -> (InteractiveTerminal, Sandbox) {
        try await InteractiveTerminal.app(source, file: "recheck.lua", showing: showing)
    }

    /// D4: keys typed while a handler loops come as turns behind it, not into the queue a stop
    /// empties: they were dropped without the "typed meanwhile dropped" note a handler that
    /// waits gets.
    @Test func keysTypedBehindALoopAreCountedWhenCtrlCStopsIt() async throws {
        let (terminal, sandbox) = try await start()
        terminal.type("L")
        await terminal.waitUntilStarted(sandbox)
        await terminal.waitFor("the loop named") { lines in lines.last?.hasPrefix("key 'L' running") == true }
        terminal.type("j")
        terminal.type("j")
        try await Task.sleep(for: .milliseconds(300))
        terminal.type("\u{3}")
        await terminal.waitFor(line: "ctrl-c stopped key 'L' after")
        #expect(terminal.screen.lines.last?.contains("; 2 keys typed meanwhile dropped") == true, "\(terminal.screen.lines)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(terminal.screen.lines.first == "pressed: none", "the dropped keys did not run: \(terminal.screen.lines)")
        terminal.type("j")
        await terminal.waitFor(line: "pressed: j")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// D6: a `complete` that loops is named beside the command line while it runs (the line
    /// showed `:` and nothing else), and one Ctrl-C stops it without quitting.
    @Test func aLoopingCompletionIsNamedBesideTheCommandLine() async throws {
        let (terminal, sandbox) = try await start()
        terminal.type(":spin \t")
        await terminal.waitUntilStarted(sandbox)
        await terminal.waitFor("the completion named") { lines in
            lines.last?.hasPrefix(":spin ") == true && lines.last?.contains("Tab completion of 'spin' running") == true
        }
        #expect(terminal.screen.lines.last?.contains("ctrl-c stops it") == true, "\(terminal.screen.lines)")
        terminal.type("\u{3}")
        await terminal.waitFor(line: "ctrl-c stopped Tab completion of 'spin' after")
        terminal.type("x\r")
        await terminal.waitFor(line: "added: x")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// D8: an error in the first controller's `viewDidLoad` was written to the main screen just
    /// before the alternate screen hid it: the status line showed only the hints. It shows there,
    /// and is on the screen again after the terminal is given back.
    @Test func aViewDidLoadErrorShowsOnTheStatusLine() async throws {
        let source = """
            local C = controller("Broken")
            function C:loadView() return view.text { text = "hello" } end
            function C:viewDidLoad() self:key("r", "r", "r") error("viewDidLoad boom") end
            function C:r() end
            app.push(C)
            """
        let (terminal, _) = try await start(source, showing: "hello")
        await terminal.waitFor("the error on the status line") { lines in lines.last?.contains("error in Broken:viewDidLoad") == true }
        terminal.type("q")
        #expect(await terminal.finish() == 1)
        terminal.expectRestored()
        #expect(terminal.screen.transcript.contains { $0.contains("error in Broken:viewDidLoad") && $0.contains("viewDidLoad boom") },
                "\(terminal.screen.transcript)")
    }

    /// D8: a 1 MB error line went past the 64 KiB the run keeps of what it printed, and took
    /// the errors printed after it with it (and its own traceback). The long line is cut with a
    /// note; what follows it is written out whole.
    @Test func aHugeErrorLineIsCutAndTheErrorsAfterItAreKept() async throws {
        let source = """
            local C = controller("Recheck")
            function C:loadView() return view.text { text = "ready" } end
            function C:viewDidLoad()
              self:key("b", "big", "big error")
              self:key("x", "short", "short error")
            end
            function C:big() error("BIG" .. string.rep("E", 1000000)) end
            function C:short() error("short boom") end
            app.push(C)
            """
        let (terminal, _) = try await start(source, showing: "ready")
        terminal.type("b")
        await terminal.waitFor(line: "error in Recheck:big")
        terminal.type("x")
        await terminal.waitFor(line: "error in Recheck:short")
        terminal.type("q")
        #expect(await terminal.finish() == 1)
        terminal.expectRestored()
        let after = terminal.writtenAfterRestore
        #expect(after.contains("error in Recheck:big: "), "\(after.prefix(300).debugDescription)")
        #expect(after.contains("more bytes of this line were dropped)"), "\(after.suffix(1500).debugDescription)")
        #expect(after.contains("error in Recheck:short: "), "\(after.suffix(1500).debugDescription)")
        #expect(after.contains("short boom"), "\(after.suffix(1500).debugDescription)")
        #expect(after.components(separatedBy: "stack traceback:").count == 3, "both tracebacks: \(after.suffix(1500).debugDescription)")
        #expect(after.utf8.count < 80 * 1024, "bounded: \(after.utf8.count) bytes")
    }

    /// D10: a word with bytes that are not UTF-8 vanished and the words after it shifted
    /// (`add \\xFF\\xFE 7` ran `add("7")`). The line shows the bytes, is not run, and says which
    /// argument holds them; fixed, it runs.
    @Test func aWordWithBytesThatAreNotUTF8IsRefusedNamingTheArgument() async throws {
        let (terminal, _) = try await start()
        terminal.type(bytes: Array(":add ".utf8) + [0xFF, 0xFE] + Array(" 7\r".utf8))
        await terminal.waitFor(line: "is not UTF-8 text")
        let status = terminal.screen.lines.last ?? ""
        #expect(status.hasPrefix(#":add \xFF\xFE 7"#), "the line shows the bytes and stays: \(status)")
        #expect(status.contains(#"argument #1 'item' '\xFF\xFE'"#), "\(status)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(terminal.screen.lines.first == "pressed: none", "not run: \(terminal.screen.lines)")
        // Backspace deletes the 7 and the space, then the two bytes; the word is typed again.
        terminal.type("\u{7F}\u{7F}\u{7F}\u{7F}ok\r")
        await terminal.waitFor(line: "added: ok")
        terminal.type(bytes: Array(":add caf".utf8) + [0xC3] + Array("\r".utf8))
        await terminal.waitFor(line: #"argument #1 'item' 'caf\xC3'"#)
        terminal.type("\u{1B}")
        await terminal.waitFor("the command line closed") { lines in lines.last?.hasPrefix(":") == false }
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// N1: SIGPIPE is not ignored by a shell's child: `kill -PIPE` ended the app (status 141)
    /// with the terminal raw, on the alternate screen, mouse reporting on. A terminal session
    /// ignores it: its output is the terminal, and the ways to end it from outside are SIGTERM,
    /// SIGHUP and SIGINT.
    @Test func sigpipeFromOutsideNeitherEndsTheAppNorBreaksTheTerminal() async throws {
        let (terminal, _) = try await start()
        kill(terminal.pid, SIGPIPE)
        try await Task.sleep(for: .milliseconds(500))
        terminal.type("j")
        await terminal.waitFor(line: "pressed: j")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }
}
