import LineEditing
import LuaBridge
import Model

extension Host {
    /// Keys from the terminal: to the `:` command line while it is open, else to the top
    /// controller by name. `:` opens the command line unless the controller binds it; a
    /// controller with no keys of its own keeps it open. Typed text is one key per character,
    /// except that what follows a `:` in the same read goes to the command line whole, and the
    /// command line is drawn once per read: a 20 KB paste costs its length, not its square.
    /// A bracketed paste is text, never keys: it goes to the command line (opened for it when
    /// closed), so a pasted `d` deletes nothing and a pasted newline runs nothing. Keys typed
    /// behind a handler a Ctrl-C is stopping are dropped and counted (``BusyHandler``).
    func terminalInput(_ keys: [Key]) {
        let typed = keys.reduce(0) { count, key in
            if case .text(let text) = key { return count + text.count }
            return count + 1
        }
        if busyHandler?.dropWhileStopping(typed) == true { return }
        var names: [String] = []
        func pressNames() {
            if !names.isEmpty { pressTerminalKeys(names) }
            names = []
        }
        refreshCommandLine()
        for key in keys {
            if case .paste = key, commandLine?.isOpen == false {
                pressNames()
                openCommandLine()
            }
            guard case .text(let text) = key, commandLine?.isOpen != true else {
                if commandLine?.isOpen == true, key == .control("z") {
                    // The line is no reason to refuse ctrl-z: a controller without keys keeps it
                    // open, so it would never suspend. The typed text waits for `fg`.
                    pressNames()
                    suspendTerminal()
                } else if commandLine?.isOpen == true {
                    pressNames()
                    editCommandLine(key)
                } else {
                    names += KeyName.names(of: key)
                }
                continue
            }
            var rest = Substring(text)
            while let character = rest.first, commandLine?.isOpen != true {
                rest = rest.dropFirst()
                if character == ":", commandLine != nil, !controllerHook("bindsKey", ":") {
                    pressNames()
                    openCommandLine()
                } else {
                    names += KeyName.names(of: .text(String(character)))
                }
            }
            if !rest.isEmpty {
                pressNames()
                editCommandLine(.text(String(rest)))
            }
        }
        pressNames()
        if case .open(let prompt) = commandLine { presenter.showPrompt((prompt.text, prompt.cursorColumn)) }
    }

    /// One key to the open command line, drawn at once: a key that waited behind the handler
    /// that opened the line (``terminalInput(_:)`` draws once per read instead).
    func typeIntoCommandLine(_ key: Key) {
        editCommandLine(key)
        if case .open(let prompt) = commandLine { presenter.showPrompt((prompt.text, prompt.cursorColumn)) }
    }

    /// Opens the command line when the top controller binds no keys (and it is closed), unless
    /// it was pushed over another: there `esc` goes back, and the status line says so (`esc
    /// back  ? help  q quit`). The line, opened as the first key came, took that key: the first
    /// `esc` of a detail without keys (groceries' item, news' item text) only closed it, and a
    /// `q` was typed into it. `:` opens it there.
    func refreshCommandLine() {
        guard case .closed = commandLine, controllerHook("hasController"), !controllerHook("hasKeys"),
              !controllerHook("canGoBack") else { return }
        openCommandLine()
    }

    /// Opens the command line with `text` typed (`app.commandLine("add ")`); false without a
    /// terminal session.
    @discardableResult
    func openCommandLine(typing text: String = "") -> Bool {
        guard let state = commandLine else { return false }
        var prompt = CommandPrompt(history: state.history)
        if !prompt.type(text) {
            presenter.showMessage("app.commandLine: the command line holds \(CommandPrompt.maxCharacters) characters; the rest was dropped")
        }
        commandLine = .open(prompt)
        presenter.showPrompt((prompt.text, prompt.cursorColumn))
        return true
    }

    /// Closes the command line; `dismissed` (Esc) keeps it closed over a controller with no keys.
    private func closeCommandLine(dismissed: Bool = false) {
        guard let state = commandLine else { return }
        commandLine = dismissed ? .dismissed(state.history) : .closed(state.history)
        presenter.showPrompt(nil)
    }

    /// One key to the open command line. The prompt is taken out of ``commandLine`` while it is
    /// edited, so the line's characters are not copied for each key (copy on write). The caller
    /// draws the prompt afterwards.
    private func editCommandLine(_ key: Key) {
        guard case .open(var prompt) = commandLine else { return }
        commandLine = nil
        let outcome = prompt.handle(key)
        commandLine = .open(prompt)
        switch outcome {
        case .none, .edit:
            return
        case .cut:
            presenter.showMessage("the command line holds \(CommandPrompt.maxCharacters) characters; the rest was dropped")
        case .redraw:
            presenter.invalidate()
        case .leave:
            return closeCommandLine(dismissed: true)
        case .run(let line):
            if let commandHistoryFile { _ = try? commandHistoryFile.append(line) }
            presenter.clearMessage()
            if controllerHook("hasKeys") || controllerHook("canGoBack") { closeCommandLine() }
            receiveCommandLine(line)
            refreshCommandLine()
        case .notText(let line):
            presenter.showMessage(notTextMessage(line))
        case .complete(let request):
            // The line as typed so far shows while `complete` runs (one that loops is named beside it).
            presenter.showPrompt((prompt.text, prompt.cursorColumn))
            let (candidates, count) = completions(before: request.prefix)
            let listed = prompt.complete(request, with: candidates, replacing: count)
            commandLine = .open(prompt)
            if !listed.isEmpty { presenter.showMessage(listed.joined(separator: "  ")) }
        }
    }

    /// What Tab offers for the text before the cursor: the top controller's command names for
    /// the first word, then each argument from its `complete` function or its declared type;
    /// and how many characters before the cursor they replace.
    func completions(before prefix: String) -> (candidates: [String], replacing: Int) {
        let words = prefix.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let fragment = words.last ?? ""
        guard words.count > 1 else {
            return (commandNames().filter { $0.hasPrefix(fragment) }, fragment.count)
        }
        guard let hooks = loadedControllerHooks() else { return ([], 0) }
        let stack = vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        hooks.push(onto: stack)
        guard stack.rawGet(-1, "completeArgument") == .function else { return ([], 0) }
        stack.push(words[0])
        stack.push(Int64(words.count - 1))
        stack.push(fragment)
        // A `complete` function runs script code that may loop: followed as a key's handler is,
        // so a Ctrl-C stops it instead of quitting (unless a key's handler is followed already).
        let busy = busyHandler.flatMap { $0.phase == .idle ? $0 : nil }
        if let busy {
            busy.started(.completion(words[0]), at: clock.uptime)
            scheduleBusyCheck(after: BusyHandler.indicatorDelay)
        }
        defer {
            busy?.ended()
            if busy != nil, presenter.status.busy != "" { presenter.showBusy("") }
        }
        do throws(LuaError) { try vm.call(arguments: 3, results: 1) } catch {
            reportHandlerError(error, in: "error completing '\(words[0])'")
            return ([], 0)
        }
        var candidates: [String] = []
        if stack.type(at: -1) == .table {
            for index in 1...Int64(max(stack.rawLength(-1), 1)) where stack.rawLength(-1) > 0 {
                if stack.rawGet(-1, index: index) == .string, let text = stack.text(at: -1), text.hasPrefix(fragment) { candidates.append(text) }
                stack.pop()
            }
        }
        return (candidates, fragment.count)
    }

    /// Why a command line with bytes that are not UTF-8 (``UndecodedByte``) was not run: the
    /// word they are in (the command's name, or its argument by number and declared name), its
    /// bytes escaped. A command takes text: bytes that are not text would reach the script's
    /// strings, views and stores, and remote clients' JSON, and fail there, far from the line
    /// they were typed on.
    func notTextMessage(_ line: String) -> String {
        let words = (try? CommandWords.split(line)) ?? line.split(separator: " ").map(String.init)
        let index = words.firstIndex { UndecodedByte.isIn($0) } ?? 0
        let word = "'\(UndecodedByte.escaped(words.indices.contains(index) ? words[index] : line))'"
        let which: String
        if index == 0 {
            which = "command name \(word)"
        } else {
            let name = argumentName(words[0], index).map { " '\($0)'" } ?? ""
            which = "command '\(UndecodedByte.escaped(words[0]))': argument #\(index)\(name) \(word)"
        }
        return "crescent: \(which) is not UTF-8 text, not run (Backspace deletes one \\x.., or type it again)"
    }

    /// The declared name of argument `index` (from 1) of the top controller's command `command`.
    private func argumentName(_ command: String, _ index: Int) -> String? {
        guard let hooks = loadedControllerHooks() else { return nil }
        let stack = vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        hooks.push(onto: stack)                                            // hooks
        guard stack.rawGet(-1, "argumentName") == .function else { return nil }
        stack.push(command)
        stack.push(Int64(index))                                           // hooks argumentName command index
        guard (try? vm.call(arguments: 2, results: 1)) != nil else { return nil }
        return stack.text(at: -1)                                          // hooks name
    }

    /// Calls the controller prelude's `name(argument)`, which reads its own state and runs no
    /// script code; false when there is none.
    func controllerHook(_ name: String, _ argument: String? = nil) -> Bool {
        guard let hooks = loadedControllerHooks() else { return false }
        let stack = vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        hooks.push(onto: stack)
        guard stack.rawGet(-1, name) == .function else { return false }
        if let argument { stack.push(argument) }
        guard (try? vm.call(arguments: argument == nil ? 0 : 1, results: 1)) != nil else { return false }
        return stack.boolean(at: -1)
    }
}
