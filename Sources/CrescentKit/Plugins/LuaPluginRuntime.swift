import CLua
import Dispatch
import LuaBridge
import Model
import NIOCore
import Services
import Synchronization

/// A Lua plugin running: its own VM, in a host of its own on the script's loop.
///
/// The plugin's host has the globals DESIGN.md lists for plugins (its `requires` as `services`,
/// `timer`, `task`, `sleep`, `log`, `json`, `inspect`) plus `service`, `service_error` and
/// `settings`; nothing of the script's VM is reachable from it. Each method call runs as a task
/// in that VM; values cross as model values, copied.
final class LuaPluginRuntime {
    let manifest: PluginManifest
    let host: Host
    let callTimeout: Double
    /// The setting that bounds its memory, for messages.
    var limitSetting = "memory_mib in [permissions]"
    /// Declarations made while `main` runs, in order.
    /// What the plugin's `main` declared; its text is made ``ServiceDeclaration/displayable()``
    /// as it is kept.
    var declarations: [ServiceDeclaration] = [] {
        didSet {
            guard declarations.contains(where: \.needsDisplayEscapes) else { return }
            declarations = declarations.map { $0.displayable() }
        }
    }
    /// The services, once `main` has returned.
    var services: [String: PluginService] = [:]
    /// `invoke(service, method, ...)` and `classify(err)` from the plugin API chunk.
    var invoke: LuaRef?
    var classify: LuaRef?
    /// The calls in flight and the time limit of those whose task waits.
    lazy var deadlines = CallDeadlines(clock: host.clock, loop: host.loop, limit: callTimeout) { [unowned self] call in
        self.expire(call)
    }
    /// The time limit of plugin code that runs without yielding (with a real-time clock): each
    /// turn of the plugin's host, and each method call from its start.
    let watchdog: RunawayWatchdog?
    /// Why the plugin was stopped while the run goes on (a handler ran past the time limit).
    var stopReason: String?

    /// Where it may read and write (its grant), checked by its wrapped `io`, `os` and loaders.
    let sandbox: PluginSandbox
    /// What its `io.popen` started, killed when its code runs past the time limit.
    let popenChildren: PopenChildren

    init(manifest: PluginManifest, host: Host, callTimeout: Double, sandbox: PluginSandbox) {
        self.manifest = manifest
        self.sandbox = sandbox
        self.host = host
        self.callTimeout = callTimeout
        let realTime = host.clock.monotonicDeadline(after: .zero) != nil
        let popenChildren = PopenChildren()
        self.popenChildren = popenChildren
        watchdog = realTime ? RunawayWatchdog(interrupter: host.vm.interrupter, limit: callTimeout) { popenChildren.killAll() } : nil
        host.turnWatchdog = watchdog
        host.onRunaway = { [unowned self] error, context in self.ranAway(error, context) }
    }

    /// Makes the plugin's VM, runs its `main` and answers the services it declared.
    static func start(_ manifest: PluginManifest, main: String, settings: Value, limits: PluginsSection,
                      parent: Host) -> Result<[String: any Service], PluginProblem> {
        // Inside the folder: the manifest refuses any other main.
        let mainPath = manifest.folder + "/" + main
        var options = parent.options
        // Its own limit (`memory_mib`, default 64), never past [plugins] memory_limit when that
        // is set (0: no cap).
        let asked = manifest.permissions.memoryMiB ?? PluginPermissions.defaultMemoryMiB
        options.memoryLimitMiB = limits.memoryLimitMiB == 0 ? asked : min(asked, limits.memoryLimitMiB)
        options.arguments = []
        options.pluginSearch = nil
        // The script's run renders and stops at the first error (`--fail-fast`); the plugin's
        // host reports to it and never ends the run itself.
        options.ui = .plain
        options.failFast = false
        // Its `store` holds collections of its own, kept under its data folder's name (another
        // folder's plugin of the same name has another); the scripts' only as `collections` grants.
        let sandbox: PluginSandbox
        do throws(PluginProblem) {
            sandbox = try PluginSandbox(manifest: manifest, dataDirectory: parent.options.dataDirectory)
        } catch {
            return .failure(error)
        }
        let key = sandbox.dataFolder.split(separator: "/").last.map(String.init) ?? manifest.name
        // Its `process` and `files` reach what its grants name (exec, read, write), each refusal
        // warned in the host's log as its io's are.
        let link = parent.link, name = manifest.name
        let access = sandbox.serviceAccess { message in link.onLoop { $0.log(.warn, plugin: name, message) } }
        let required = parent.binding.services.filter { manifest.requires.contains($0.name) }.map { entry in
            switch entry.name {
            case "store": PluginStore.entry(over: entry, plugin: manifest.name, key: key, granted: manifest.permissions.collections)
            case "process": ProcessService.entry(over: entry, access: access)
            case "files": FilesService.entry(over: entry, access: access)
            default: entry
            }
        }
        let runtime: LuaPluginRuntime
        do {
            let host = try Host(loop: parent.loop, options: options, console: parent.console, services: required,
                                clock: parent.clock, gate: LoopGate(), plugin: parent, onExit: { _ in })
            host.vm.memoryLimitSetting = runtimeLimitSetting(manifest, limits: limits, long: true)
            host.pluginName = manifest.name
            // `crescent test --coverage` counts the project's plugins too: their VM gets the hook
            // the spec file's host has (DESIGN.md "Testing scripts": coverage "for scripts and plugins").
            LineCoverage.active?.install(on: host.vm)
            runtime = LuaPluginRuntime(manifest: manifest, host: host, callTimeout: limits.callTimeout,
                                       sandbox: sandbox)
            runtime.limitSetting = runtimeLimitSetting(manifest, limits: limits, long: false)
            try runtime.installAPI(settings: settings)
        } catch {
            return .failure(PluginProblem("plugin '\(manifest.name)': cannot make its Lua VM: \(error)"))
        }
        var source: [UInt8]
        do throws(PluginProblem) {
            source = try PluginFile.read(mainPath, limit: PluginFile.sourceLimit, what: "the plugin's main (a Lua source)")
        } catch {
            runtime.finish()
            return .failure(PluginProblem("\(manifest.path): field 'main': \(error.description)"))
        }
        ScriptSource.blankShebang(&source)
        var failure: LuaError?
        runtime.host.runTurn { host in
            host.addScriptFolderToPath(mainPath)
            do {
                try host.vm.load(source, name: "@" + mainPath)
                try host.vm.call(arguments: 0, results: 0)
            } catch {
                failure = error as? LuaError ?? LuaError(.runtime, "\(error)")
                // A script's global (`view`) is named as one a plugin has not, on the VM's loop.
                if let raised = failure, raised.kind == .runtime {
                    failure = LuaError(.runtime, GlobalNameHint.hinted(raised.message, in: host.vm, isPlugin: true))
                }
                if failure?.kind == .timeout, runtime.watchdog?.isPastDeadline == true {
                    failure = LuaError(.timeout, "\(mainPath): main did not return within \(runtime.limitText): main declares the services and returns (run lasting work in a timer or a task)")
                }
            }
        }
        if let failure {
            // The host's frames (`[crescent plugin]:322: in upvalue 'forward'`) after main.lua's.
            runtime.finish()
            return .failure(PluginProblem(TracebackFolding.folded(failure.message)))
        }
        if let problem = manifest.mismatch(declared: runtime.declarations.map(\.name), by: mainPath) {
            runtime.finish()
            return .failure(problem)
        }
        PluginDeclarationCache(manifest: manifest, settings: settings, dataDirectory: parent.options.dataDirectory).save(runtime.declarations)
        let bound = NIOLoopBound(runtime, eventLoop: parent.loop)
        for declaration in runtime.declarations {
            let name = declaration.name
            runtime.services[name] = PluginService(declaration) { method, arguments, reply in
                onLoop(bound) { runtime in runtime.call(name, method, arguments, reply) }
            }
        }
        parent.pluginRuntimes.append(runtime)
        parent.pluginInterrupters.add(runtime.host.vm.interrupter)
        return .success(runtime.services.mapValues { $0 as any Service })
    }

    /// `10 s ([plugins] call_timeout)`: the time limit of the plugin's code, for messages.
    var limitText: String { "\(formatSeconds(callTimeout)) s ([plugins] call_timeout)" }

    /// A handler of the plugin (a timer, a task, an observer) was stopped for the time limit.
    /// When its turn's limit stopped it, the plugin stops (on a later turn: the code reporting
    /// this still runs in its VM) and the answer is what to report; nil when the run's own time
    /// limit stopped it.
    private func ranAway(_ error: LuaError, _ context: String) -> (context: String, message: String)? {
        guard let watchdog, watchdog.isPastDeadline else { return nil }
        let what = context.hasPrefix("error in ") ? String(context.dropFirst("error in ".count)) : context
        // Another handler of the same turn, stopped as it came after the first.
        guard stopReason == nil else { return ("plugin '\(manifest.name)' stopped", "its \(what) was interrupted with it") }
        let reason = "its \(what) ran past the time limit of \(limitText)"
        stopReason = reason
        invoke = nil
        host.parent?.enqueue { [self] _ in finish() }
        return ("plugin '\(manifest.name)' stopped", "\(reason); its services answer unavailable from now on\n\(error.message)")
    }

    /// What a call answers once the plugin has stopped.
    var stoppedMessage: String {
        "plugin '\(manifest.name)' " + (stopReason.map { "was stopped: \($0)" } ?? "has stopped")
    }

    /// Ends the plugin: its calls answer `unavailable`, its timers and tasks stop, its VM closes.
    func finish() {
        for call in deadlines.calls { call.answer(.failure(ServiceError(.unavailable, stoppedMessage))) }
        deadlines.cancelAll()
        watchdog?.stop()
        // Before the VM closes: its `io.popen` handles' close waits for their programs, so a
        // plugin keeping handles of programs that never end (`KEEP[i] = io.popen("sleep 300")`)
        // held the host's exit for as long as they ran, and left them running past it.
        popenChildren.killAll()
        invoke = nil
        classify = nil
        host.finish(status: 0)
    }
}

/// Which setting bounds `manifest`'s VM, for messages: `memory_mib` in its manifest, or
/// `[plugins] memory_limit` when that cap is the smaller.
func runtimeLimitSetting(_ manifest: PluginManifest, limits: PluginsSection, long: Bool) -> String {
    let asked = manifest.permissions.memoryMiB ?? PluginPermissions.defaultMemoryMiB
    if limits.memoryLimitMiB != 0 && limits.memoryLimitMiB < asked {
        return long ? "[plugins] memory_limit in crescent.toml" : "[plugins] memory_limit"
    }
    return long ? "memory_mib in [permissions] of \(manifest.path)" : "memory_mib in [permissions]"
}
