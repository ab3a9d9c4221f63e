import CLua
import LuaBridge
import LineEditing
import Synchronization

extension Repl {
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
            start(unsetName: GlobalNameHint.unsetName(typed: text, in: host.vm))
        case .incomplete(let error), .failed(let error):
            // An incomplete text gets here from the editor and `.load`: their text is all there is.
            report(error.message)
            later { $0.showPrompt() }
        }
    }

    /// Compiles `text` (see ``Host/compileChunk(_:chunkName:)``).
    func compile(_ text: String, chunkName: String) -> Host.CompiledChunk {
        host.compileChunk(text, chunkName: chunkName)
    }

    /// Runs the function on top of the stack as a task; its values print when it ends.
    /// `unsetName`: the note for a line that is only a misspelled global's name, said after the
    /// `nil` it prints (as a Lua comment, so the line still reads as Lua).
    private func start(unsetName: String?) {
        let stack = host.vm.stack
        let function = stack.top
        let task = host.startTask(function: function, arguments: 0, in: stack) { [unowned self] ending in
            self.ended(ending, unsetName: unsetName)
        }
        stack.setTop(function - 1)
        phase = .running(task)
        task.onResume = { [link] running in link.chunkRunning.store(running, ordering: .relaxed) }
        host.resume(task, arguments: 0)
    }

    /// The chunk ended: print its values or its error, and prompt again.
    private func ended(_ ending: LuaTask.Ending, unsetName: String? = nil) {
        link.chunkRunning.store(false, ordering: .relaxed)
        switch ending {
        case .returned(let stack, let count):
            if let unsetName, count == 1, stack.type(at: stack.top) == .nil {
                emit(GlobalNameHint.nilLine(note: unsetName) + "\n")
            } else if count > 0 {
                let columns = link.terminal.columns
                emit(host.describeValues(count, on: stack, inspect: inspect, width: columns > 0 ? columns : nil) + "\n")
            }
        case .failed(let error):
            if !host.handleControlFlow(error) {
                let message = GlobalNameHint.hinted(TracebackFolding.folded(error.message, always: true), in: host.vm)
                report(error.kind == .interrupted ? "interrupted" + Repl.traceback(of: message) : message)
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

    /// Forgets a stray Ctrl-C interrupt (see ``Host/clearStrayInterrupt()``).
    func clearStrayInterrupt() { host.clearStrayInterrupt() }

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
