import LuaBridge

/// An earlier spec file that holds an `expose` block, which a later file's hosts run first.
struct SpecExposer: Sendable {
    let source: [UInt8]
    let path: String

    /// The file, when its source names `expose` at all (the others cannot export anything).
    init?(source: [UInt8], path: String) {
        guard source.firstRange(of: Array("expose".utf8)) != nil else { return nil }
        self.source = source
        self.path = path
    }
}

extension SpecHost {
    /// Runs the `expose` blocks of earlier files in this host before its own file loads: what
    /// their bodies set in the globals and `package.loaded` stays, the rest of those files is
    /// undone (busted exports an expose block's globals to the files that run after it). Errors
    /// there are the earlier file's own run's to report: here they are passed over, but for one
    /// that stops the host (the time limit, the memory limit), whose file is returned, so the
    /// failure of this file's test can say where the time or the memory went.
    @discardableResult
    func expose(_ exposers: [SpecExposer]) -> SpecExposeStop? {
        guard !exposers.isEmpty else { return nil }
        var stop: SpecExposeStop?
        host.runTurn { host in
            guard let runner else { return }
            let stack = host.vm.stack
            let base = stack.top
            defer { stack.setTop(base) }
            for exposer in exposers {
                stack.setTop(base)
                runner.push(onto: stack)                                       // runner
                guard stack.rawGet(-1, "expose") == .function else { return }  // runner expose
                do throws(LuaError) {
                    try host.vm.load(exposer.source, name: "@" + exposer.path) // runner expose chunk
                    try host.vm.call(arguments: 1, results: 0)
                } catch {
                    if error.kind == .memory { stop = SpecExposeStop(path: exposer.path, memory: error.message) }
                }
                if stop == nil, timeLimit?.hasExpired == true { stop = SpecExposeStop(path: exposer.path, memory: nil) }
                if stop != nil { return }
            }
        }
        return stop
    }
}

/// An earlier file's expose code that stopped a spec file's host before its own file ran.
struct SpecExposeStop {
    /// The earlier spec file.
    let path: String
    /// The memory error, when that is what stopped it; nil for the time limit.
    let memory: String?

    /// `failure` (the test's or its file's), with where the time or the memory went.
    func explaining(_ failure: String) -> String {
        if let memory {
            return "\(memory), in the code and expose blocks of \(path) run before this file (busted shares what an expose "
                + "block sets with the files after it)"
        }
        return failure + "\n(the time went in the code and expose blocks of \(path), run before this file: busted shares what an "
            + "expose block sets with the files after it)"
    }
}
