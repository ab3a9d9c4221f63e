import Model
import NIOCore
import Services
#if canImport(Glibc)
import Glibc
#endif

/// A process plugin's start: the program spawned and sent `initialize`, its answer read holding
/// the loop or on it, and a start that fails named (its stderr, or that it ran out of its memory
/// limit).
extension ProcessPlugin {
    /// Spawns the program, sends `initialize` and reads its answer, holding the loop, then hands
    /// the pipes to the loop. Answers the services the program declares.
    @discardableResult
    func launch() throws(PluginProblem) -> [ServiceDeclaration] {
        try handshake(spawnInitializing())
    }

    /// Reads the `initialize` answer of `process` holding the loop, then hands its pipes to the
    /// loop; answers the services it declares.
    func handshake(_ process: PluginProcess) throws(PluginProblem) -> [ServiceDeclaration] {
        var buffered: [UInt8] = []
        let deadline = PluginProcess.milliseconds() + Int64(startTimeout * 1000)
        let read: [UInt8]?
        do throws(PluginProblem) {
            read = try readAnswer(process, until: deadline, buffered: &buffered)
        } catch {
            throw failedHandshake(process, error)
        }
        guard let answer = read else {
            throw failedHandshake(process, PluginProblem("it did not answer 'initialize' within \(formatSeconds(startTimeout)) s"), settle: 0)
        }
        return try connect(process, answer: answer, buffered: buffered)
    }

    /// Reads lines of `process` holding the loop until its answer to `initialize` or `deadline`;
    /// notifications and malformed lines before the answer are taken or skipped. Nil: the
    /// deadline passed first, and `buffered` holds what was read of the next line.
    func readAnswer(_ process: PluginProcess, until deadline: Int64,
                    buffered: inout [UInt8]) throws(PluginProblem) -> [UInt8]? {
        while true {
            guard let line = try process.readLine(until: deadline, buffered: &buffered,
                                                  maximumLength: JSONRPCLineDecoder.defaultMaximumLength) else { return nil }
            if !takenBeforeAnswer(line) { return line }
        }
    }

    /// Ends `process`, whose start failed with `problem`: the problem, with what the program wrote
    /// to stderr, or that it ran out of its memory limit. It gets `settle` seconds to end by
    /// itself (its status tells a death for want of memory; its stdout closes before its
    /// namespace's init has ended), none when it is known to run on.
    func failedHandshake(_ process: PluginProcess, _ problem: PluginProblem, settle: Double = 1) -> PluginProblem {
        let said = process.errorOutput()
        let status = abandon(process, grace: settle)
        let limit = manifest.permissions.memoryMiB ?? PluginPermissions.defaultMemoryMiB
        let message = PluginMemoryShortage.explains(status: status, said: PluginMemoryShortage.saysOutOfMemory(said), limitMiB: limit)
            ? "it \(PluginMemoryShortage.reason(manifest)) before answering 'initialize'" : problem.message
        return said.isEmpty ? PluginProblem(message) : PluginProblem("\(message) (its stderr: \(said))")
    }

    /// Takes the `initialize` answer read holding the loop and hands the pipes of `process` to the
    /// loop, the bytes read past the answer first; answers the services it declares.
    func connect(_ process: PluginProcess, answer: [UInt8], buffered: [UInt8]) throws(PluginProblem) -> [ServiceDeclaration] {
        let declarations: [ServiceDeclaration]
        do throws(PluginProblem) {
            declarations = try Self.declarations(fromInitializeAnswer: answer)
        } catch {
            abandon(process)
            throw error
        }
        let run = ProcessRun(process: process)
        running = run
        initializing = false
        connect(run, readFirst: buffered)
        answeredInThisRun = false
        return declarations
    }

    /// Spawns the program and sends `initialize`; its answer comes to ``received(_:)`` on the
    /// loop, and calls wait in `waiting` until then. A late answer ends the run.
    func launchInBackground() throws(PluginProblem) {
        handOff(try spawnInitializing())
    }

    /// Hands `process`, which was sent `initialize` and has not answered, to the loop, `buffered`
    /// (what it wrote of a line so far) read first: its answer comes to ``received(_:)``, and a
    /// late one ends the run.
    func handOff(_ process: PluginProcess, buffered: [UInt8] = []) {
        let run = ProcessRun(process: process)
        running = run
        initializing = true
        answeredInThisRun = false
        connect(run, readFirst: buffered)
        let plugin = NIOLoopBound(self, eventLoop: host.loop)
        let boundRun = NIOLoopBound(run, eventLoop: host.loop)
        startJob = host.clock.schedule(after: .seconds(seconds: startTimeout)) {
            onLoop(plugin) { plugin in
                plugin.startJob = nil
                plugin.failedToStart(boundRun.value, "it did not answer 'initialize' within \(formatSeconds(plugin.startTimeout)) s")
            }
        }
    }

    /// The answer to `initialize` of a run started in the background: the waiting calls go out,
    /// or, when the answer is wrong, the run ends and they answer `unavailable`.
    func initialized(_ line: [UInt8]) {
        guard let run = running else { return }
        if let first = firstAnswer {
            let answer = Result { () throws(PluginProblem) in try Self.declarations(fromInitializeAnswer: line) }
            if case .failure(let problem) = answer {
                failedToStart(run, problem.message)
                return
            }
            firstAnswer = nil
            initializing = false
            startJob?.cancel()
            startJob = nil
            first(answer)
            return
        }
        let declarations: [ServiceDeclaration]
        do throws(PluginProblem) {
            declarations = try Self.declarations(fromInitializeAnswer: line)
            if let problem = manifest.mismatch(declared: declarations.map(\.name), by: "its answer to 'initialize'") { throw problem }
        } catch {
            failedToStart(run, error.message)
            return
        }
        initializing = false
        startJob?.cancel()
        startJob = nil
        let known = knownDeclarations.map { $0.jsonValue.jsonText }.sorted()
        if declarations.map({ $0.jsonValue.jsonText }).sorted() != known {
            cache.save(declarations)
            log(.warn, "declares its services differently from its last run; the new declarations apply from the next run")
        }
        let calls = waiting
        waiting.removeAll()
        for call in calls where !call.isDone { send(call) }
    }

    /// A run started in the background could not start: it is ended, and the calls waiting for
    /// it answer `unavailable`.
    func failedToStart(_ run: ProcessRun, _ message: String) {
        guard running === run, initializing else { return }
        // The launcher reports a first start that fails.
        if firstAnswer == nil { log(.error, "could not start: \(message)") }
        kill(run.process.pid, SIGKILL)
        ended(run, reason: "could not start", startFailure: message)
    }

    /// Spawns the program in its folder and writes the `initialize` request to it.
    func spawnInitializing() throws(PluginProblem) -> PluginProcess {
        guard host.startsPluginPrograms else {
            let service = manifest.services.first ?? manifest.name
            throw PluginProblem("it is a process plugin (it runs \(command.joined(separator: " "))), and the code under test may not start "
                                + "programs in a spec: give its service a fake, fake.service(\"\(service)\", { methods = { ... } })")
        }
        let folder = PluginSearch.canonical(manifest.folder)
        // Without Landlock the launcher lets only a plugin [plugins] allow_unsandboxed names start.
        let sandbox = PluginSandbox.landlockABI() >= 1 ? try PluginSandbox(manifest: manifest, dataDirectory: host.options.dataDirectory) : nil
        // `CRESCENT_DATA_DIR`: a folder of the plugin's own under the data folder.
        var dataFolder = sandbox?.dataFolder ?? ""
        if sandbox == nil { dataFolder = try PluginSandbox.dataFolder(of: manifest, dataDirectory: host.options.dataDirectory) }
        saidOutOfMemory = false
        let process: PluginProcess
        do throws(PluginProblem) {
            process = try PluginProcess.spawn(command, plugin: manifest.name, folder: folder,
                                              environment: ["CRESCENT_PLUGIN_DIR": folder, "CRESCENT_DATA_DIR": dataFolder],
                                              sandbox: sandbox)
        } catch {
            // An exec refused for want of memory is the limit's doing too.
            guard PluginMemoryShortage.saysOutOfMemory(error.message) else { throw error }
            throw PluginProblem("\(error.message): it \(PluginMemoryShortage.reason(manifest))")
        }
        let request = JSONRPCMessage.request(id: 0, method: "initialize",
                                             params: ["crescent": .string(CrescentVersion.current), "settings": settings])
        guard process.write(Array((request.line + "\n").utf8)) else {
            throw failedHandshake(process, PluginProblem("it closed its stdin before 'initialize'"))
        }
        return process
    }

    /// Closes the pipes of `process` and reaps it (after at most `grace` seconds): its wait
    /// status when it had ended by itself.
    @discardableResult
    func abandon(_ process: PluginProcess, grace: Double = 0) -> Int32? {
        close(process.stdin)
        close(process.stdout)
        close(process.stderr)
        return process.reap(grace: grace)
    }

    /// The services an `initialize` answer declares.
    static func declarations(fromInitializeAnswer line: [UInt8]) throws(PluginProblem) -> [ServiceDeclaration] {
        let result: Value
        switch JSONRPCMessage.parse(line: line) {
        case .success(.response(_, let value)): result = value
        case .success(.failure(_, let error)): throw PluginProblem("it answered 'initialize' with an error: \(error.message)")
        case .success: throw PluginProblem("it sent a request before its answer to 'initialize'")
        case .failure(let error): throw PluginProblem("its answer to 'initialize' is not JSON-RPC: \(error.message)")
        }
        return try ServiceDeclaration.list(from: result["services"])
    }
}
