import CLua
import LuaBridge
import LineEditing
import Synchronization

extension Repl {
    /// What a submitted text compiles to.
    enum Compiled {
        /// The chunk's function is on top of the VM's stack.
        case function
        /// A syntax error at the end of the text: more lines may complete it.
        case incomplete(LuaError)
        case failed(LuaError)
    }

    /// Enter (or Ctrl-D in the editor): a dot command, a controller command, or Lua.
    func submit(_ line: String) {
        if inEditor {
            leaveEditor()
            record(line)
            run(line, chunkName: "=stdin")
            return
        }
        if pendingLines.isEmpty {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty {
                later { $0.showPrompt() }
                return
            }
            if let command = DotCommand(trimmed) {
                record(line)
                perform(command)
                return
            }
            if trimmed.hasPrefix(":") {
                record(line)
                host.receiveCommandLine(String(trimmed.dropFirst()))
                later { $0.showPrompt() }
                return
            }
        }
        pendingLines.append(line)
        let text = pendingLines.joined(separator: "\n")
        if case .incomplete = compile(text, chunkName: "=stdin") {
            later { $0.showPrompt() }
            return
        }
        pendingLines.removeAll()
        record(text)
        run(text, chunkName: "=stdin")
    }

    /// Compiles and runs `text`, printing what it returns, then shows the prompt again.
    func run(_ text: String, chunkName: String) {
        switch compile(text, chunkName: chunkName) {
        case .function:
            start()
        case .incomplete(let error), .failed(let error):
            // An incomplete text gets here from the editor and `.load`: their text is all there is.
            report(error.message)
            later { $0.showPrompt() }
        }
    }

    /// Compiles `text` as `return <text>` first, so an expression prints its value, then as a
    /// statement. `=expr` is `return expr`, as in `lua5.4`.
    func compile(_ text: String, chunkName: String) -> Compiled {
        let source = text.hasPrefix("=") ? "return " + text.dropFirst() : text
        let vm = host.vm
        if (try? vm.load(Array(("return " + source).utf8), name: chunkName)) != nil { return .function }
        do throws(LuaError) {
            try vm.load(Array(source.utf8), name: chunkName)
            return .function
        } catch {
            return error.kind == .syntax && error.message.hasSuffix("<eof>") ? .incomplete(error) : .failed(error)
        }
    }

    /// Runs the function on top of the stack as a task; its values print when it ends.
    private func start() {
        let stack = host.vm.stack
        let function = stack.top
        let task = host.startTask(function: function, arguments: 0, in: stack) { [unowned self] ending in
            self.ended(ending)
        }
        stack.setTop(function - 1)
        phase = .running(task)
        task.onResume = { [link] running in link.chunkRunning.store(running, ordering: .relaxed) }
        host.resume(task, arguments: 0)
    }

    /// The chunk ended: print its values or its error, and prompt again.
    private func ended(_ ending: LuaTask.Ending) {
        link.chunkRunning.store(false, ordering: .relaxed)
        switch ending {
        case .returned(let stack, let count):
            if count > 0 { emit(describe(count, on: stack) + "\n") }
        case .failed(let error):
            if !host.handleControlFlow(error) {
                report(error.kind == .interrupted ? "interrupted" + Repl.traceback(of: error.message) : error.message)
            }
        case .cancelled:
            report("interrupted (the chunk was waiting; it was cancelled)")
        }
        clearStrayInterrupt()
        phase = .idle
        later { $0.showPrompt() }
    }

    /// Ctrl-C while a chunk runs or waits.
    func interrupt(_ task: LuaTask) {
        guard !task.isDone else { return }
        host.cancel(task)
    }

    /// Forgets a Ctrl-C interrupt that is still pending once no Lua code runs (it arrived as the
    /// code it was meant for finished). Exit, time-limit and signal interrupts stay.
    func clearStrayInterrupt() {
        if host.vm.pendingInterrupt == Int32(CRESCENT_INTERRUPT_SIGNAL) { host.vm.clearInterrupt() }
    }

    /// The values `inspect` shows, tab-separated as `lua5.4` prints them. Trailing nils after the
    /// first value are left out: an awaited call returns `result, nil`, and the nil says nothing.
    private func describe(_ count: Int32, on stack: LuaStack) -> String {
        let vm = host.vm
        let main = vm.stack
        var texts: [String] = []
        let first = stack.top - count + 1
        var last = stack.top
        while last > first && stack.type(at: last) == .nil { last -= 1 }
        for index in first...last {
            inspect.push(onto: main)
            stack.pushValue(at: index)
            lua_xmove(stack.state, main.state, 1)
            do throws(LuaError) {
                try vm.call(arguments: 1, results: 1)
                texts.append(main.text(at: -1) ?? main.describe(at: -1))
            } catch {
                texts.append("<cannot show the value: \(error.message)>")
            }
            main.pop()
        }
        return texts.joined(separator: "\t")
    }

    /// Prints an error of the REPL's own (not a handler's: those go through the host).
    func report(_ message: String) {
        host.console.error(host.console.styled("error:", .error) + " " + message)
    }

    /// The traceback part of an error message (after its first line), if any.
    static func traceback(of message: String) -> String {
        guard let newline = message.firstIndex(of: "\n") else { return "" }
        return String(message[newline...])
    }

    /// Adds a whole chunk to the history, in memory and in the file.
    func record(_ text: String) {
        guard session.editor.history.add(text) else { return }
        _ = try? historyFile?.append(text)
    }

    /// Leaves `.editor` mode.
    func leaveEditor() {
        inEditor = false
        session.editor.submitsOnControlD = false
    }
}
