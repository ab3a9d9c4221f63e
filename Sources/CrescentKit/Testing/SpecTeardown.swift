import LuaBridge

/// Closes a runner thread's test hosts under the watch of its ``SpecSession``: a host's VM runs
/// the `__gc` finalizers left in it as it closes, and one that never ends must not end the run.
///
/// The closing runs under the test's time limit too: at the limit the VM is interrupted (a Lua
/// that runs hooks in finalizers stops there) and a grace period later the programs the runner
/// started are killed and a blocked call is broken (a `popen` left open on `sleep infinity`
/// waits in `pclose`), so the teardown ends and the test fails saying so. One that still does not
/// end is abandoned by the session, which starts a new runner thread after it.
struct SpecTeardown {
    let session: SpecSession
    /// The runner thread's generation: its reports count only while it is the session's current one.
    let generation: Int
    let limit: SpecTimeLimit

    /// Closes `host` and reports `result` (the test it ran; nil for the file's first host when it
    /// ran none, or a test whose report busted would not make), failed when the closing ran past
    /// the limit, then `followers` (a hook that failed after the test). `resume`: where a new
    /// runner starts if this closing never ends. False when the session abandoned this thread meanwhile.
    func close(_ host: SpecHost, file: String, reporting result: SpecResult?, then followers: [SpecResult] = [],
               resume: SpecSession.Position) -> Bool {
        guard closeReporting(host, file: file, result: result, resume: resume) else { return false }
        return followers.allSatisfy { session.add($0, generation: generation) }
    }

    private func closeReporting(_ host: SpecHost, file: String, result: SpecResult?, resume: SpecSession.Position) -> Bool {
        let watched = SpecSession.Teardown(started: .now, file: file, result: result, resume: resume, limit: limit)
        guard session.beginTeardown(watched, generation: generation) else { return false }
        limit.start(host.interrupter, plugins: host.host.pluginInterrupters)
        host.close()
        let finalizers = host.host.vm.finalizerFailures.map(Self.explaining)
        if limit.stop() {
            let reason = "the spec file's host was still closing after the time limit of \(formatSeconds(limit.seconds)) s (--timeout) "
                + "and was stopped: a finalizer (a __gc metamethod) or a program a test left running (an io.popen not closed) "
                + "kept its VM from closing"
            return session.endTeardown(reporting: failing(result, file: file, reasons: [reason] + [finalizers].compactMap { $0 }),
                                       generation: generation)
        }
        // A finalizer that failed as the host closed fails the test, whatever its own result:
        // one stopped at the close's own limit (a loop) otherwise passes unseen.
        guard let finalizers else { return session.endTeardown(reporting: result, generation: generation) }
        return session.endTeardown(reporting: failing(result, file: file, reasons: [finalizers]), generation: generation)
    }

    /// What the report says of the finalizers that failed as the file's host closed.
    private static func explaining(_ failures: LuaVM.FinalizerFailures) -> String {
        let others = failures.count > 1 ? " (and \(failures.count - 1) more)" : ""
        return "a finalizer failed when the spec file's host closed\(others): \(failures.first); a __gc runs as its object is "
            + "collected or its VM closes, and must end quickly without an error (the close stops one still running after "
            + "\(LuaVM.closeLimitSeconds) s)"
    }

    /// `result` (nil: the file's host that ran no test) failed with `reasons` after its own message.
    private func failing(_ result: SpecResult?, file: String, reasons: [String]) -> SpecResult {
        let reason = reasons.joined(separator: "\n")
        guard let ran = result else {
            return SpecResult(file: file, name: "(closing a host of the file)", location: file, status: .error, message: reason,
                              output: "", seconds: 0)
        }
        return SpecResult(file: ran.file, name: ran.name, location: ran.location, status: .error,
                          message: [ran.status == .failed || ran.status == .error ? ran.message : "", reason]
                            .filter { !$0.isEmpty }.joined(separator: "\n"),
                          output: ran.output, seconds: ran.seconds)
    }
}
