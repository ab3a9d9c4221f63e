import CLua
import LineEditing
import LuaBridge
import Model
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Host {
    /// Adds the controller prelude's key primitives to its table (on top of the stack):
    /// `keyNames`, `showHelp(text)`, `helpKey(key)`, `showMessage(text)`, `redraw()`, `suspend()`,
    /// `openCommandLine(text)`, `typeIntoCommandLine(key)`, `commandLineOpen()` and `selectionKey(key)`.
    func installKeyPrimitives() {
        let stack = vm.stack
        stack.newTable(fieldCount: Int32(KeyName.named.count))          // P names
        for (index, name) in KeyName.named.enumerated() {
            stack.push(name)
            stack.rawSet(-2, index: Int64(index + 1))
        }
        stack.rawSet(-2, "keyNames")                                     // P
        vm.register(field: "showHelp") { [unowned self] stack in
            let text = try stack.checkString(1, function: "showHelp")
            self.presenter.showHelp(text)
            // Without the whole terminal there is no screen to show it on: printed instead.
            if self.terminalSession == nil { self.console.write(text + "\n") }
            return .none
        }
        vm.register(field: "helpKey") { [unowned self] stack in
            stack.push(self.presenter.helpKey(try stack.checkString(1, function: "helpKey")))
            return .one
        }
        vm.register(field: "showMessage") { [unowned self] stack in
            self.presenter.showMessage(try stack.checkString(1, function: "showMessage"))
            return .none
        }
        vm.register(field: "redraw") { [unowned self] _ in
            self.presenter.invalidate()
            return .none
        }
        vm.register(field: "openCommandLine") { [unowned self] stack in
            stack.push(self.openCommandLine(typing: try stack.checkString(1, function: "app.commandLine")))
            return .one
        }
        // typeIntoCommandLine(key): a key that comes while the terminal's command line is open
        // (the key before it opened it: groceries' `a` types "add ") is typed into the line, as
        // it is when it comes later; false when the line is closed.
        vm.register(field: "typeIntoCommandLine") { [unowned self] stack in
            let name = try stack.checkString(1, function: "typeIntoCommandLine")
            guard case .open = self.commandLine, let key = KeyName.key(named: name) else {
                stack.push(false)
                return .one
            }
            self.typeIntoCommandLine(key)
            stack.push(true)
            return .one
        }
        // commandLineOpen(): whether the terminal's command line is open (a remote key types
        // only into a line its own request opened).
        vm.register(field: "commandLineOpen") { [unowned self] stack in
            stack.push(self.commandLine?.isOpen == true)
            return .one
        }
        vm.register(field: "suspend") { [unowned self] _ in
            self.suspendTerminal()
            return .none
        }
        vm.register(field: "selectionKey") { [unowned self] stack in
            // A second argument false: the controller has no selectionChanged or didSelect, so
            // the row is not converted for it.
            try self.selectionKey(try stack.checkString(1, function: "selectionKey"), stack,
                                  withItem: stack.type(at: 2) == .boolean ? stack.boolean(at: 2) : true)
        }
        // quit(status): the default quits (`q`, `ctrl-c`, the `quit` command) end the run as
        // app.exit does, as the person's quit they are: a remote client's `q` is no client code
        // calling app.exit, which is said of a remote eval's.
        vm.register(field: "quit", exit(function: "app.exit", namingRemoteCaller: false))
        installBusyPrimitive()
    }

    /// ctrl-z: gives the terminal back and stops the process (SIGTSTP) until `fg`, then draws
    /// the screen whole. Nothing without a terminal session.
    func suspendTerminal() {
        guard let session = terminalSession else { return }
        console.flush()
        session.suspend()
        presenter.invalidate()
    }

    /// What `key` does to the shown view's selection: `tab`/`shift-tab` move the focus
    /// (returns "focus"); a move returns "moved", `enter` "chosen", each with the component's id,
    /// the row (from 1) and its item; "still" for a selection key with nowhere to go (`j` on the
    /// last row, any on an empty list: a default key, not an unknown one); nothing when the key
    /// is no selection key there.
    private func selectionKey(_ key: String, _ stack: LuaStack, withItem: Bool) throws -> LuaReturn {
        guard let root = presenter.root else { return .none }
        if key == "tab" || key == "shift-tab" {
            guard root.cycleFocus(backwards: key == "shift-tab") else { return .none }
            stack.push("focus")
            return .one
        }
        guard let node = root.focusedSelectable, key == "enter" || SelectionMove(key: key) != nil else { return .none }
        guard node.selection?.index != nil else {
            stack.push("still")
            return .one
        }
        if key == "enter" {
            stack.push("chosen")
        } else if let move = SelectionMove(key: key), node.move(move) {
            stack.push("moved")
        } else {
            stack.push("still")
            return .one
        }
        let index = node.selection?.index ?? 0
        if let id = node.id { stack.push(id) } else { stack.pushNil() }
        stack.push(Int64(index + 1))
        if withItem { binding.push(node.item(at: index), onto: stack) } else { stack.pushNil() }
        return .values(4)
    }

    /// Keys read from the terminal, in order, to the top controller (its bindings, then the
    /// defaults); names no binding can use are dropped.
    public func pressTerminalKeys(_ names: [String]) {
        guard let hooks = loadedControllerHooks(), !names.isEmpty else { return }
        let stack = vm.stack
        hooks.push(onto: stack)
        do {
            guard stack.rawGet(-1, "terminalKeys") == .function else { return stack.setTop(0) }
            _ = stack.ensure(Int32(clamping: names.count) + 1)
            for name in names { stack.push(name) }
            try vm.call(arguments: Int32(names.count), results: 0)
        } catch {
            if !handleControlFlow(error) { reportHandlerError(error, in: "error in key '\(names[0])'") }
        }
        stack.setTop(0)
    }

    /// A click selects the row under it (and focuses its component), telling the top
    /// controller's `selectionChanged`; the wheel moves the selection as `up`/`down` do.
    func mouse(_ event: MouseEvent) {
        switch event.action {
        case .wheelUp: pressTerminalKeys(["up"])
        case .wheelDown: pressTerminalKeys(["down"])
        case .release: break
        case .press(let button):
            guard button == 0, let root = presenter.root,
                  let line = presenter.viewLine(ofScreenRow: event.row - 1),
                  let (node, index) = root.selectableRow(atLine: line, width: presenter.width, limit: presenter.viewRows)
            else { return }
            root.focus = node
            node.markDirty()
            guard node.select(index), let hooks = loadedControllerHooks() else { return }
            let stack = vm.stack
            hooks.push(onto: stack)
            do {
                guard stack.rawGet(-1, "selected") == .function else { return stack.setTop(0) }
                if let id = node.id { stack.push(id) } else { stack.pushNil() }
                stack.push(Int64(index + 1))
                binding.push(node.item(at: index), onto: stack)
                try vm.call(arguments: 3, results: 0)
            } catch {
                if !handleControlFlow(error) { reportHandlerError(error, in: "error in a click") }
            }
            stack.setTop(0)
        }
    }

    /// From a view method the script called (`apply` that removed the selected row), on the
    /// script's `stack`: the top controller's `selectionChanged` hears that row `index` of
    /// `node` is selected now, in turn after the handler that removed it. The prelude's hook
    /// only queues the change; a failure to queue leaves nothing to report.
    func queueSelectionChange(_ node: ViewNode, index: Int, on stack: LuaStack) {
        guard let hooks = loadedControllerHooks() else { return }
        let base = stack.top
        defer { stack.setTop(base) }
        hooks.push(onto: stack)                                           // hooks
        guard stack.rawGet(-1, "selected") == .function else { return }  // hooks selected
        if let id = node.id { stack.push(id) } else { stack.pushNil() }
        stack.push(Int64(index + 1))
        binding.push(node.item(at: index), onto: stack)                   // hooks selected id index item
        _ = stack.callKeepingError(arguments: 3)
    }

    /// Takes the terminal for a person to drive the app: raw mode, the alternate screen, keys
    /// read into the loop, output shown on the status line (and written out when the terminal
    /// is given back). A Ctrl-C stops a key's or command's handler that has run half a second
    /// (``busyInterrupt(quit:)``); otherwise it calls `onInterrupt` from the reader's thread, as
    /// SIGINT would.
    /// Nothing happens when the terminal refuses raw mode: the app runs as before (the view
    /// drawn in place). A background job (`crescent app.lua &`) holds its output
    /// (``holdOutputForTerminal()``) until it is brought back.
    ///
    /// - Parameter script: names the command line's history, kept per script beside the REPL's
    ///   (`history.groceries`); nil keeps none.
    func startTerminalSession(_ terminal: Terminal = .standard, script: String?, onInterrupt: @escaping @Sendable () -> Void) {
        guard terminalSession == nil, isRunning else { return }
        guard terminal.isForeground else { return holdOutputForTerminal() }
        console.flush()
        let session: TerminalSession
        do { session = try TerminalSession(terminal: terminal) } catch {
            releaseHeldOutput()
            writeError("\(console.styled("crescent:", .warning)) keys are not read: \(error)")
            return
        }
        terminalSession = session
        // A write to a closed pipe or socket fails with EPIPE instead of ending the person's app:
        // its output is the terminal, so SIGPIPE can only come from a connection or program the
        // app opened (SwiftNIO ignores it as it opens its first socket anyway), or from `kill`,
        // and SIGTERM, SIGHUP and SIGINT are the ways to end it from outside. Dying of it left the
        // terminal in raw mode on the alternate screen. Ignored from the start, as programs the
        // app starts get every signal at its default action back.
        signal(SIGPIPE, SIG_IGN)
        // What the job printed in the background is the session's: its last line shows on the
        // status line as this turn ends, and all of it is written out after the session.
        let transcript = terminalTranscript ?? TerminalTranscript()
        terminalTranscript = transcript
        let link = self.link
        // The status line shows the last message once per turn (``showPrintedMessage()``): a
        // turn is made to end only when a message starts waiting, so a key handler's 20,000
        // prints cost 20,000 appends, not 20,000 status lines.
        console.divert { stream, text in
            if transcript.append(stream, text) { link.turn { _ in } }
        }
        commandHistoryFile = script.flatMap { script in
            let name = script.split(separator: "/").last.map { $0.hasSuffix(".lua") ? String($0.dropLast(4)) : String($0) } ?? "script"
            return HistoryFile.standard().map { HistoryFile(path: $0.path + "." + name) }
        }
        // A symbolic link, FIFO, folder or another user's file there is never read or written:
        // said once (on the status line, and written out afterwards), the history kept in memory.
        if let file = commandHistoryFile, let reason = file.unusableReason {
            console.error("\(console.styled("crescent: warning:", .warning)) not using \(file.path) as the command line's history: \(reason) (history stays in memory)")
            commandHistoryFile = nil
        }
        commandLine = .closed(commandHistoryFile?.load() ?? History())
        // io.write, io.stdout:write and io.stderr:write through the console too, so they are held
        // back with print's output: written raw they scrolled the frame and vanished with the screen.
        do { try routeStandardOutputThroughConsole(standardError: true) } catch {
            writeError("\(console.styled("crescent:", .warning)) io.write is not held back: \(error)")
        }
        presenter.enterFullScreen()
        // An error written before the first controller loaded (the main chunk's, before
        // `app.push`) is on the main screen, now hidden: the status line shows it (it is there
        // again when the terminal is given back). What was printed since is held in the transcript.
        if let line = errorBeforeTerminal { presenter.showMessage(line) }
        errorBeforeTerminal = nil
        refreshCommandLine()
        session.readKeys(
            onKeys: { keys in link.turn { host in host.terminalInput(keys) } },
            onMouse: { event in link.turn { host in host.mouse(event) } },
            onInterrupt: busyInterrupt(quit: onInterrupt),
            onResize: { link.turn { host in host.presenter.invalidate() } },
            onIdle: busyNotice()
        )
    }

    /// Shows what was printed since the last turn on the status line. Called as a turn ends.
    func showPrintedMessage() {
        if let message = terminalTranscript?.takeMessage() { presenter.showMessage(message) }
    }

    /// Gives the terminal back (after the last frame) and writes out what the run printed
    /// meanwhile. Called by ``finish(status:)``.
    func endTerminalSession() {
        guard let session = terminalSession else { return releaseHeldOutput() }
        terminalSession = nil
        commandLine = nil
        busyHandler = nil
        console.flush()
        session.end()
        presenter.leaveFullScreen()
        releaseHeldOutput()
    }

    /// Holds what the app prints and its errors as its terminal session would, from the first
    /// controller's load (its `viewDidLoad` runs before the session starts) and in a background
    /// job (a remote `send`'s among them, which would be written into the shell's prompt): the
    /// last shows on the status line once the session runs, and all are written out when the
    /// terminal is given back (as the run ends, when it never took the terminal).
    func holdOutputForTerminal() {
        guard terminalTranscript == nil else { return }
        let transcript = TerminalTranscript()
        terminalTranscript = transcript
        console.flush()
        console.divert { stream, text in _ = transcript.append(stream, text) }
        do { try routeStandardOutputThroughConsole(standardError: true) } catch {
            writeError("\(console.styled("crescent:", .warning)) io.write is not held back: \(error)")
        }
    }

    /// Writes out what was held (``holdOutputForTerminal()``), if anything was: to a terminal
    /// with its control characters as escapes (its colours kept), as the view shows text, so data
    /// printed meanwhile cannot put the shell back on the alternate screen or retitle it; to a
    /// pipe or a file byte for byte.
    private func releaseHeldOutput() {
        guard let transcript = terminalTranscript else { return }
        terminalTranscript = nil
        console.divert(nil)
        for (stream, text) in transcript.take() {
            let onTerminal = stream == .output ? options.outputIsTerminal : options.errorIsTerminal
            console.writeThrough(stream, onTerminal ? displayableKeepingColours(text) : text)
        }
        console.flush()
    }
}
