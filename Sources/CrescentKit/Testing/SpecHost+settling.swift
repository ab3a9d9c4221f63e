import Model

/// How a spec's host settles and steps virtual time: it runs the queued turns, waits for service
/// calls finishing on other threads, and, while a test's body waits, runs the next job due.
extension SpecHost {
    /// How long ``settle()`` waits for a service call running on another thread (a geocoder
    /// lookup, whose first one loads the data; a store write) before it takes the call to be
    /// waiting on virtual time. Generous: a loaded machine may take seconds for the first.
    static let quietPeriod = 15.0
    /// How long ``settle()`` gives a task the clock woke to hand the loop work or sleep again
    /// (a task that ends instead costs this once).
    static let wakePeriod = 2.0
    /// The most virtual time a test may wait through while its body awaits.
    static let waitLimit = Duration.seconds(86_400)

    /// Runs the host's queued turns, and waits for service calls finishing on other threads,
    /// until nothing is left but what waits on the clock.
    func settle() {
        while true {
            // A test's turn lasts as long as its body: deliveries queued meanwhile (an initial
            // value, a post) are scheduled here, as the end of a turn would.
            host.binding.scheduleDelivery()
            if loop.runPending() > 0 { continue }
            guard host.isRunning, timeLimit?.hasExpired != true else { return }
            let sleepers = clock.sleepers
            // Script requests, spawned programs and the services' own tasks (a feed's poll) run
            // until they hand the loop work, sleep on the clock, or end; a call that waits for a
            // job on the clock (`location:current()` for a replayed fix) waits as a sleeper does.
            let busyObjects = host.binding.ownedObjects.values.filter { $0.object.isBusy }.count
            let running = host.binding.requests.count + busyObjects + clock.runningTasks
            let waiting = sleepers + clock.clockWaits
            if running > waiting {
                if waitForProgress(running: running, sleepers: waiting) { continue }
            } else if sleepers < sleepersSettled {
                // The clock woke a task (a feed's poll loop): it runs on another thread until it
                // hands the loop work or sleeps again.
                let deadline = ContinuousClock.now + .seconds(Self.wakePeriod)
                while !loop.hasWork && clock.sleepers < sleepersSettled && ContinuousClock.now < deadline
                        && timeLimit?.hasExpired != true {
                    _ = loop.waitForWork(timeout: 0.002)
                }
                if !loop.hasWork && clock.sleepers < sleepersSettled { sleepersSettled = clock.sleepers }
                continue
            }
            sleepersSettled = sleepers
            return
        }
    }

    /// Waits until the loop has work, a request or task has ended, or one has gone to sleep on
    /// the clock; false when none of that happened within ``quietPeriod``.
    private func waitForProgress(running: Int, sleepers: Int) -> Bool {
        let deadline = ContinuousClock.now + .seconds(Self.quietPeriod)
        while ContinuousClock.now < deadline {
            if loop.waitForWork(timeout: 0.002) { return true }
            let busyObjects = host.binding.ownedObjects.values.filter { $0.object.isBusy }.count
            if host.binding.requests.count + busyObjects + clock.runningTasks < running
                || clock.sleepers + clock.clockWaits > sleepers { return true }
            if timeLimit?.hasExpired == true { return false }
        }
        return false
    }

    /// One step of virtual time while a test's body waits: runs the next job due (and what it
    /// causes). Nil when it stepped; else why it could not: nothing is pending, or the next job is
    /// past the ``waitLimit`` of virtual time counted from `start`.
    func step(since start: Duration) -> String? {
        guard host.isRunning else { return "the spec file's host has stopped" }
        guard let due = clock.nextDue else {
            return "the test waited for something that never came: nothing was pending on the clock"
                + " (advance the clock inside the test, or fake the service it waits for)"
        }
        guard due - start <= Self.waitLimit else {
            let limit = formatSeconds(Self.waitLimit.inSeconds)
            return "the test waited through more than \(limit) s (a day) of virtual time, the most a test may wait: "
                + "the next job on the clock is due \(formatSeconds((due - start).inSeconds)) s after the test began waiting "
                + "(a sleep or timer that long never ends a test; wait less, or move the clock yourself with clock.advance(seconds))"
        }
        clock.advance(by: due - clock.uptime)
        return nil
    }
}
