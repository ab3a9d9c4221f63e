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
        guard limit.stop() else { return session.endTeardown(reporting: result, generation: generation) }
        let reason = "the test's host was still closing after the time limit of \(formatSeconds(limit.seconds)) s (--timeout) "
            + "and was stopped: a finalizer (a __gc metamethod) or a program the test left running (an io.popen not closed) "
            + "kept its VM from closing"
        let failed = result.map { ran in
            SpecResult(file: ran.file, name: ran.name, location: ran.location, status: .error,
                       message: [ran.status == .failed || ran.status == .error ? ran.message : "", reason]
                        .filter { !$0.isEmpty }.joined(separator: "\n"),
                       output: ran.output, seconds: ran.seconds)
        } ?? SpecResult(file: file, name: "(closing a host of the file)", location: file, status: .error, message: reason,
                        output: "", seconds: 0)
        return session.endTeardown(reporting: failed, generation: generation)
    }
}
