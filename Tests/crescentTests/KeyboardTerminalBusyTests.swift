import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What was left of issue 34 after the second attack (keys2), each on a real pseudo-terminal: a
/// handler that waits or loops is shown as busy and a Ctrl-C stops it (K6), `io.stderr:write` is
/// held back like `print` (the rest of K8), the command line's history never follows a planted
/// symbolic link (K9), the `--timeout` traceback shows the script's line (K7), and a `?` help
/// longer than the screen scrolls (K11).
@Suite struct KeyboardTerminalBusyTests {
    /// `w` waits 30 s, `s` loops, `b` blocks in a C call for 3 s, `a` changes the view; `s` and
    /// `b` first create the file `started` (the loop they hold cannot draw a frame to say so).
    static let source = """
        local C = controller("Busy")
        function C:loadView() return view.stack { view.text { id = "title", text = "pressed: none" } } end
        function C:viewDidLoad()
          self:key("w", "wait", "wait")
          self:key("s", "spin", "spin")
          self:key("b", "block", "block")
          self:key("a", "pressA", "say a")
        end
        function C:wait() sleep(30) self.view.title.text = "waited" end
        local function started() io.open("started", "w"):close() end
        function C:spin()
          started()
          local n = 0
          while true do n = n + 1 end
        end
        function C:block() started() os.execute("sleep 3") end
        function C:pressA() self.view.title.text = "pressed: a" end
        app.push(C)
        """

    /// Runs `source` as `file` in a new sandbox (the command line's history in it) on a 100 x 12
    /// terminal, and waits for a line with `showing`.
    private func start(_ source: String = source, file: String = "busy.lua", options: [String] = [],
                       showing: String = "pressed: none", sandbox: Sandbox? = nil,
                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> (InteractiveTerminal, Sandbox) {
        try await InteractiveTerminal.app(source, file: file, options: options, showing: showing, sandbox: sandbox,
                                          sourceLocation: sourceLocation)
    }

    /// A handler that waits (a slow service, `sleep`) is named on the status line after half a
    /// second, with how to stop it; Ctrl-C stops it and drops the key typed meanwhile, and the
    /// app answers its keys again (it was deaf to every key but Ctrl-C, which quit).
    @Test func aHandlerThatWaitsIsShownAsBusyAndCtrlCStopsIt() async throws {
        let (terminal, _) = try await start()
        terminal.type("w")
        await terminal.waitFor(line: "key 'w' running")
        #expect(terminal.screen.lines.last?.contains("ctrl-c stops it") == true, "\(terminal.screen.lines)")
        terminal.type("a")
        try await Task.sleep(for: .milliseconds(300))
        #expect(terminal.screen.lines.first == "pressed: none", "the key waits behind the handler")
        terminal.type("\u{3}")
        await terminal.waitFor(line: "ctrl-c stopped key 'w' after")
        #expect(terminal.screen.lines.last?.hasPrefix("ctrl-c stopped key 'w' after") == true, "\(terminal.screen.lines)")
        #expect(terminal.screen.lines.last?.contains("s; 1 key typed meanwhile dropped") == true, "\(terminal.screen.lines)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(terminal.screen.lines.first == "pressed: none", "the dropped key did not run")
        terminal.type("a")
        await terminal.waitFor(line: "pressed: a")
        await terminal.waitFor("the hints back") { lines in lines.last?.hasPrefix("w wait") == true }
        terminal.type("q")
        #expect(await terminal.finish() == 0, "a stop is no failure")
        terminal.expectRestored()
    }

    /// A handler that loops holds the loop: Ctrl-C interrupts its code where it runs, and the
    /// app runs on (it quit with 130).
    /// Waits until a handler has created `started` in `sandbox`, then past the busy delay.
    private func waitUntilBusy(_ terminal: InteractiveTerminal, _ sandbox: Sandbox,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        await terminal.waitUntilStarted(sandbox, sourceLocation: sourceLocation)
        try await Task.sleep(for: .milliseconds(700))
    }

    @Test func ctrlCStopsAHandlerThatLoopsAndTheAppRunsOn() async throws {
        let (terminal, sandbox) = try await start()
        terminal.type("s")
        try await waitUntilBusy(terminal, sandbox)
        terminal.type("\u{3}")
        await terminal.waitFor(line: "ctrl-c stopped key 's' after")
        terminal.type("a")
        await terminal.waitFor(line: "pressed: a")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// Where no interrupt reaches (a handler blocked in a C call), a second Ctrl-C quits: Ctrl-C
    /// still always gets out.
    @Test func aSecondCtrlCQuitsWhenTheStopCannotReachTheHandler() async throws {
        let (terminal, sandbox) = try await start()
        terminal.type("b")
        try await waitUntilBusy(terminal, sandbox)
        terminal.type("\u{3}")
        try await Task.sleep(for: .milliseconds(300))
        #expect(kill(terminal.pid, 0) == 0, "the first Ctrl-C did not quit")
        terminal.type("\u{3}")
        #expect(await terminal.finish() == 130)
        terminal.expectRestored()
    }

    /// A Ctrl-C while no handler runs quits at once, as before.
    @Test func ctrlCQuitsWhenNothingRuns() async throws {
        let (terminal, _) = try await start()
        terminal.type("a")
        await terminal.waitFor(line: "pressed: a")
        terminal.type("\u{3}")
        #expect(await terminal.finish() == 130)
        terminal.expectRestored()
    }

    /// `io.stderr:write` from a handler is held back with `print`'s output and written out after
    /// the terminal is given back (written raw, it scrolled the frame and was lost with the
    /// alternate screen).
    @Test func ioStderrWriteIsHeldBackLikePrint() async throws {
        let source = """
            local C = controller("Writer")
            function C:loadView() return view.text { text = "ready" } end
            function C:viewDidLoad() self:key("w", "writes", "write") end
            function C:writes() io.stderr:write("STDERR-WRITE", 1, "\\n") print("PRINTED") end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "writer.lua", showing: "ready")
        terminal.type("w")
        await terminal.waitFor(line: "PRINTED")
        #expect(terminal.screen.lines.first == "ready", "the frame did not scroll: \(terminal.screen.lines)")
        #expect(!terminal.screen.lines.contains { $0.contains("STDERR-WRITE") && !$0.contains("│") }, "\(terminal.screen.lines)")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
        let after = terminal.writtenAfterRestore
        #expect(after.contains("STDERR-WRITE1\r\n"), "\(after.debugDescription)")
    }

    /// A symbolic link planted where the command line's history goes is not followed: the file
    /// it points to is neither read nor appended to, the run says so once, and the command line
    /// works with its history in memory.
    @Test func aSymbolicLinkAsTheHistoryIsNeverFollowed() async throws {
        let source = """
            local C = controller("Shop")
            function C:loadView() return view.text { text = "the shop" } end
            function C:viewDidLoad()
              self:key("r", "refresh", "refresh")
              self:command("add", "add", "add ITEM", { args = { "item: string" } })
            end
            function C:refresh() end
            function C:add(item) print("added " .. item) end
            app.push(C)
            """
        let sandbox = try Sandbox()
        let target = try sandbox.write("target", "SECRET\n")
        #expect(symlink(target, sandbox.path + "/history.shop") == 0)
        let (terminal, _) = try await start(source, file: "shop.lua", showing: "the shop", sandbox: sandbox)
        terminal.type(":add h1\r")
        await terminal.waitFor(line: "│ added h1")
        terminal.type(":\u{1B}[A")
        await terminal.waitFor("the history in memory") { lines in lines.last?.hasPrefix(":add h1") == true }
        terminal.type("\u{1B}")
        await terminal.waitFor("the command line closed") { lines in lines.last?.hasPrefix("r refresh") == true }
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "SECRET\n", "the link's target is untouched")
        var status = stat()
        #expect(lstat(sandbox.path + "/history.shop", &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the link is still a link")
        let warnings = terminal.writtenAfterRestore.components(separatedBy: "as the command line's history: it is a symbolic link").count - 1
        #expect(warnings == 1, "said once: \(terminal.writtenAfterRestore.debugDescription)")
    }

    /// The time limit's traceback shows the script's line where it stopped, the host's frames
    /// folded after it (it showed one frame of the controller prelude and nothing of the script).
    @Test func theTimeLimitTracebackShowsTheScriptsLine() async throws {
        let (terminal, sandbox) = try await start(options: ["--timeout", "6"])
        defer { withExtendedLifetime(sandbox) {} }   // the handler writes a file in it
        terminal.type("s")
        #expect(await terminal.finish() == 1)
        terminal.expectRestored()
        let after = terminal.writtenAfterRestore
        #expect(after.contains("stopped after 6 s (--timeout): interrupted: time limit reached"), "\(after.debugDescription)")
        #expect(after.range(of: #"busy\.lua:14: in "#, options: .regularExpression) != nil, "the script's loop: \(after.debugDescription)")
        #expect(!after.contains(#/\t\[crescent controllers\w*\]:/#), "no host line of its own: \(after.debugDescription)")
    }

    /// `?` on a controller with more commands than rows: the help shows which lines it shows and
    /// scrolls with the keys it names (pagedown closed it and moved the selection instead).
    @Test func aHelpLongerThanTheScreenScrolls() async throws {
        let source = """
            local C = controller("Many")
            function C:loadView() return view.text { text = "many commands" } end
            function C:viewDidLoad()
              self:key("r", "refresh", "refresh")
              for i = 1, 40 do
                local name = string.format("cmd%02d", i)
                C[name] = function() end
                self:command(name, name, "command number " .. i)
              end
            end
            function C:refresh() end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "many.lua", showing: "many commands")
        terminal.type("?")
        await terminal.waitFor(line: "keys of Many:")
        #expect(terminal.screen.lines.contains { $0.hasPrefix("— lines 1–10 of ") }, "\(terminal.screen.lines)")
        terminal.type("\u{1B}[6~")   // pagedown
        await terminal.waitFor(line: "— lines 11–20 of ")
        #expect(!terminal.screen.lines.contains { $0.contains("keys of Many:") }, "scrolled: \(terminal.screen.lines)")
        terminal.type("\u{1B}[F")    // end
        await terminal.waitFor(line: "cmd40")
        terminal.type("j")           // past the end: stays
        try await Task.sleep(for: .milliseconds(200))
        #expect(terminal.screen.lines.contains { $0.contains("cmd40") }, "\(terminal.screen.lines)")
        terminal.type("x")           // any other key closes it
        await terminal.waitFor(line: "many commands")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }
}
