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
    /// there are the earlier file's own run's to report: here they are passed over.
    func expose(_ exposers: [SpecExposer]) {
        guard !exposers.isEmpty else { return }
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
                    continue
                }
            }
        }
    }
}
