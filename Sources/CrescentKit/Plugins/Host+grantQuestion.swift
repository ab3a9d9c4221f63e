import Model

extension Host {
    /// The first touch of a plugin whose permissions are not granted, on a terminal: shows what
    /// it asks, asks y/n (``TerminalQuestion``) and records the grant on a yes, as `crescent
    /// plugins allow NAME` would. False (the plugin is refused as without a terminal) when nobody
    /// can be asked (no terminal, a background job, a test, a host built in Swift), on a no or no
    /// answer, and when the grant cannot be recorded.
    func askToGrant(_ manifest: PluginManifest) -> Bool {
        guard options.asksForPermissions, TerminalQuestion.shared.hasPerson else { return false }
        let dataDirectory = options.dataDirectory
        let question = PluginCatalog.permissionReport(manifest, dataDirectory: dataDirectory)
            + "\nGrant plugin '\(manifest.name)' these permissions now (as crescent plugins allow \(manifest.name) would)?"
        console.flush()
        let yes = TerminalQuestion.shared.ask(question) { text in
            presenter.clearForOutput()
            console.writeThrough(.error, text)
        }
        guard yes else {
            log(.info, plugin: manifest.name, "not granted at the terminal: its services are refused for this run")
            return false
        }
        switch PluginCatalog.allow(manifest, dataDirectory: dataDirectory) {
        case .success(let recorded):
            log(.info, plugin: manifest.name, recorded)
            return true
        case .failure(let problem):
            writeError("\(console.styled("crescent:", .error)) error: \(problem.message)")
            return false
        }
    }
}
