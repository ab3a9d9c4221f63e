import LuaBridge

extension Host {
    /// Errors that are requests (`app.exit`, a signal, the time limit) rather than failures.
    /// Returns true when the error was such a request and has been handled.
    func handleControlFlow(_ error: LuaError) -> Bool {
        if isPluginHost, error.kind == .timeout || error.kind == .interrupted {
            // A call's time limit interrupted plugin code: an error of that code, not an exit.
            vm.clearInterrupt()
            return false
        }
        switch error.kind {
        case .timeout:
            if !reportedTimeout {
                reportedTimeout = true
                // Where the limit stopped the script when the error came out of host frames
                // only (a controller's handler: the prelude's pcalls unwound past the script).
                var located = error
                if !TracebackFolding.hasScriptFrame(error.message), let traceback = vm.timeLimitTraceback {
                    located.message = traceback
                }
                report(located, context: timeoutMessage)
            }
            requestExit(1)
            return true
        case .interrupted:
            let pending = vm.pendingInterrupt
            if pending >= 128 { requestExit(pending) }
            // A Ctrl-C stopping a key's handler (``BusyHandler``): the stop, not a failure.
            if vm.isRunningCodeInterruptPending, busyHandler?.isStopping == true { return true }
            // A remote client's interrupt (or its hanging up) stopping what it sent: the stop it
            // asked for, not a failure of the script (``RemoteServer`` says so on the status line).
            if vm.isRunningCodeInterruptPending, remoteCaller != nil { return true }
            return requestedExit != nil
        default:
            return false
        }
    }

    var timeoutMessage: String {
        "stopped after \(formatSeconds(options.timeout ?? 0)) s (--timeout)"
    }
}
