import LuaBridge
import Model

extension Host {
    /// The first touch of a plugin whose permissions are not granted, on a terminal: shows what
    /// it asks, asks y/n (``TerminalQuestion``) and records the grant on a yes, as `crescent
    /// plugins allow NAME` would: exactly what was shown (where each link led then), and only if
    /// nothing shown changed meanwhile. False (the plugin is refused as without a terminal) when
    /// nobody can be asked (no terminal, a background job, a test, a host built in Swift), on a
    /// no or no answer, and when the grant cannot be recorded.
    func askToGrant(_ manifest: PluginManifest) -> Bool {
        guard options.asksForPermissions, TerminalQuestion.shared.hasPerson else { return false }
        let dataDirectory = options.dataDirectory
        // Where each path leads is read once: the question shows it and the grant records it.
        let shown = PluginGrants.Snapshot(of: manifest)
        var question = PluginCatalog.permissionReport(manifest, dataDirectory: dataDirectory, shown: shown)
        // A request from another process (crescent eval, send) raised it: the person is told,
        // and so is the client, which otherwise waited without a word (attack new27g D7).
        let caller = remoteCaller
        if let caller {
            question += "\nAsked for \(caller)'s request (sent to this host from another process, such as crescent eval); "
                + "it ends as no if that client goes away."
            remoteNotice?("crescent: plugin '\(manifest.name)' is not granted: the person at the host's terminal is asked now, and this "
                          + "request waits for the answer (or run crescent plugins allow \(manifest.name) there)")
        }
        question += "\nGrant plugin '\(manifest.name)' these permissions now (as crescent plugins allow \(manifest.name) would)?"
        console.flush()
        // A client gone (or its interrupt) is seen off the loop, by the remote interrupt watch.
        let abandoned: () -> Bool = { [vm] in caller != nil && vm.isRunningCodeInterruptPending }
        let outcome = TerminalQuestion.shared.ask(question, abandoned: abandoned) { text in
            presenter.clearForOutput()
            console.writeThrough(.error, text)
        }
        switch outcome {
        case .yes:
            break
        case .no:
            log(.info, plugin: manifest.name, "not granted at the terminal (the answer was no): its services are refused for this run")
            return false
        case .abandoned:
            log(.info, plugin: manifest.name, "not granted: \(caller ?? "the caller") went away before the answer: its services are refused for this run")
            return false
        case .notAsked(let why):
            log(.info, plugin: manifest.name, "not asked at the terminal (\(why)): its services are refused for this run; "
                + "run crescent plugins allow \(manifest.name) to review and grant it")
            return false
        }
        switch PluginCatalog.allow(manifest, dataDirectory: dataDirectory, shown: shown) {
        case .success(let recorded):
            log(.info, plugin: manifest.name, recorded)
            return true
        case .failure(let problem):
            writeError("\(console.styled("crescent:", .error)) error: \(PluginCatalog.terminalSafe(problem.message))")
            return false
        }
    }
}
