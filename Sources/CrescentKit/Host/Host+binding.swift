import LuaBridge
import Model
import NIOCore

/// What the binding needs of its host (``BindingEnvironment``). The rest of it (``Host/loop``,
/// ``Host/gate``, ``Host/isRunning``, ``Host/writeError(_:)``, the warnings, the handler errors,
/// ``Host/resume(_:arguments:)`` and ``Host/taskFunction(ownsSpawns:contextFirst:)``) is the
/// host's own.
extension Host: BindingOutput, BindingLoop, BindingPlugins {
    // MARK: Output

    func writeOutput(_ text: String) {
        console.write(text)
    }

    func warn(_ message: String) {
        writeError("\(console.styled("crescent: warning:", .warning)) \(message)")
    }

    // MARK: The loop

    /// Runs `job` on the loop as one turn of its own, later, unless the host has finished by then:
    /// the host's `enqueue` for a job that needs no host (one closure, not one wrapping another).
    func enqueue(_ job: @escaping () -> Void) {
        // On the loop: the gate's lock is not needed, for the reason the other `enqueue` gives.
        guard isRunning else { return }
        let bound = NIOLoopBound(self, eventLoop: loop)
        let boundJob = NIOLoopBound(job, eventLoop: loop)
        loop.execute {
            bound.value.runTurn { _ in boundJob.value() }
        }
    }

    func runTurn(_ job: () -> Void) {
        runTurn { _ in job() }
    }

    // MARK: Plugins

    func pendingStart(of service: String) -> (any PendingServiceStart)? {
        (pluginLauncher ?? parent?.pluginLauncher)?.pendingStart(of: service)
    }

    func missingServiceNote(for name: String) -> String? {
        // A plugin's VM sees only what its manifest requires ("services: none" said nothing of
        // how to get the service).
        if let parent, parent.binding.services.contains(where: { $0.name == name }) {
            return "a plugin sees only the services its plugin.toml requires; add \"\(name)\" to requires"
        }
        // A plugin of that name skipped at load (its manifest does not hold) is why.
        return skippedPlugins.first { $0.name == name }?.explanation
    }

    func isPluginService(_ object: any ModelObject) -> Bool {
        object is PluginService
    }
}
