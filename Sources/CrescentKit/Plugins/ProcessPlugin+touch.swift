import Model

extension ProcessPlugin {
    /// How long a touch outside a task (which cannot wait) holds the loop for the `initialize`
    /// answer of a plugin never seen before, before the start goes on in the background.
    static let touchGrace = 2.0

    /// Starts the program of a plugin never seen before for a touch that cannot wait: holds the
    /// loop at most ``touchGrace`` for the program to answer, and answers its services as
    /// ``start(_:command:settings:limits:known:parent:)`` does once it has written something
    /// then; else answers nil and the start goes on in the background, `done` answering it on the
    /// loop (a program that never answers holds the loop no longer than that).
    static func startHoldingBriefly(_ manifest: PluginManifest, command: [String], settings: Value, limits: PluginsSection,
                                    parent: Host, done: @escaping (Result<[String: any Service], PluginProblem>) -> Void)
        -> Result<[String: any Service], PluginProblem>? {
        let plugin = ProcessPlugin(manifest: manifest, command: command, settings: settings,
                                   callTimeout: limits.callTimeout, host: parent)
        let process: PluginProcess
        do throws(PluginProblem) {
            process = try plugin.spawnInitializing()
        } catch {
            return .failure(PluginProblem("\(manifest.path): \(error.message)"))
        }
        // Notifications before the answer are taken meanwhile; a program that has written part
        // of a line when the grace ends goes on in the background with that part read first.
        var buffered: [UInt8] = []
        let answer: [UInt8]?
        do throws(PluginProblem) {
            answer = try plugin.readAnswer(process, until: PluginProcess.milliseconds() + Int64(touchGrace * 1000),
                                           buffered: &buffered)
        } catch {
            return .failure(PluginProblem("\(manifest.path): \(plugin.failedHandshake(process, error).message)"))
        }
        guard let answer else {
            plugin.awaitFirstAnswer(done)
            plugin.handOff(process, buffered: buffered)
            parent.teardownActions.append { plugin.finish() }
            return nil
        }
        return plugin.services { () throws(PluginProblem) in try plugin.connect(process, answer: answer, buffered: buffered) }
    }

    /// Takes the first `initialize` answer of a start in the background: the services it
    /// declares, or why the plugin could not start, go to `done` on the loop.
    func awaitFirstAnswer(_ done: @escaping (Result<[String: any Service], PluginProblem>) -> Void) {
        let manifest = self.manifest
        firstAnswer = { [unowned self] answer in
            let failure: PluginProblem
            switch answer {
            case .success(let declarations):
                guard let problem = manifest.mismatch(declared: declarations.map(\.name), by: "its answer to 'initialize'") else {
                    cache.save(declarations)
                    done(.success(makeServices(declarations)))
                    return
                }
                failure = problem
            case .failure(let problem):
                failure = PluginProblem("\(manifest.path): \(problem.message)")
            }
            finish()
            done(.failure(failure))
        }
    }
}
