import LuaBridge

extension Host {
    /// The warnings of a run that ended on its own (nothing left to wait for) having shown and
    /// heard nothing because of a step the script left out. Warnings, not errors: the code that
    /// ran was not wrong, only incomplete.
    func noteRunEndedOnItsOwn() {
        noteUnshownControllers()
        // Waiting still for a first controller: none was pushed, so stdin was never read as
        // commands, and `--keep-running` (which outlasts their end) kept nothing running.
        if options.keepsRunningAfterInput && onFirstController != nil {
            writeError("\(console.styled("crescent: warning:", .warning)) --keep-running did nothing: it keeps the controllers running "
                       + "after the commands piped on stdin end, and this run pushed no controller, so it read no commands; leave it out")
        }
        for note in binding.unstartedServiceNotes() { writeError("\(console.styled("crescent: warning:", .warning)) \(note)") }
    }

    /// Warns when a run that ends on its own made controller classes but never a controller
    /// (`app.push(C)` forgotten): it showed nothing and would otherwise say nothing. A warning,
    /// not an error: a module's classes a script does not use are no mistake of the run.
    /// Runs only the prelude's own code.
    private func noteUnshownControllers() {
        guard let hooks = controllerHooks else { return }
        let stack = vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        hooks.push(onto: stack)                                          // hooks
        guard stack.rawGet(-1, "unshownNote") == .function,              // hooks unshownNote
              (try? vm.call(arguments: 0, results: 1)) != nil,           // hooks note
              let note = stack.text(at: -1), stack.type(at: -1) == .string else { return }
        writeError("\(console.styled("crescent: warning:", .warning)) \(note)")
    }
}
