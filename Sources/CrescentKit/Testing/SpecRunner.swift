import Foundation
import LuaBridge
import Model

/// What `crescent test` runs and how it reports.
public struct SpecRunOptions: Sendable {
    /// Spec files and folders searched for `*_spec.lua`; empty for `spec/` and `test/`.
    public var paths: [String] = []
    /// Lua patterns (`--filter`, repeatable): only tests whose full name matches one of them run,
    /// as busted ORs its filters; none for all. Bytes, as the command line gave them: a test's
    /// name need not be UTF-8, and neither need the pattern that matches it.
    public var filters: [[UInt8]] = []
    /// Where to write a JUnit XML report, if anywhere.
    public var junitPath: String?
    /// `assert.view(golden)` rewrites golden files that differ instead of failing.
    public var update = false
    /// Each test's limit in real seconds (its host made, the file run, the test run); 0 for none.
    public var timeout = 10.0
    /// The base of every spec file's host options (config file, columns, memory limit).
    public var hostOptions = HostOptions()
    /// `--tags` and `--exclude-tags`: tests chosen by the `#tag` words in their names.
    public var selection = SpecSelection()
    /// How the results are written: a line per test (ours), or busted's `json` or `TAP`.
    public var output = SpecOutputFormat.plain
    /// `--coverage`: count the lines the tests ran and write `luacov.report.out` and
    /// `coverage/lcov.info` in the current folder.
    public var coverage = false
    /// SIGINT (Ctrl-C) stops the run: the test under way is stopped, the report of the tests that
    /// ended is made (the JUnit file too) and the status is 130; a second SIGINT quits at once.
    /// `crescent test` sets it; a caller that handles SIGINT itself leaves it off.
    public var stopsOnInterrupt = false

    public init() {}
}

/// `crescent test`: runs `*_spec.lua` files, each test in a fresh host on a manual clock
/// (DESIGN.md "Testing scripts"), and reports a line per test, the failures with their
/// differences, and `N passed, N failed[, N pending]` last.
///
/// ```swift
/// var options = SpecRunOptions()
/// options.paths = ["spec"]
/// let status = SpecRunner.run(options) { print($0, terminator: "") }   // 0 when none failed
/// ```
public enum SpecRunner {
    /// Why the run could not start: a path that does not exist, a bad config file.
    public struct UsageError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// A report (coverage, JUnit) that could not be written once the tests had run: the run
    /// failed, but it was no mistake in the command line.
    public struct ReportFailure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The status of a run interrupted by SIGINT, as a shell gives a program SIGINT ended.
    public static let interruptedStatus: Int32 = 130

    /// Runs the specs and returns the exit status: 0 when none failed, 1 otherwise, 130 when it was
    /// interrupted (SIGINT, or a test's program that SIGINT ended).
    ///
    /// - Parameter write: receives the report as it is made, a line at a time.
    /// - Throws: ``UsageError`` when a path does not exist or the config file is bad, before any
    ///   test runs; ``ReportFailure`` when a report cannot be written after they ran.
    public static func run(_ options: SpecRunOptions, write output: (String) -> Void) throws -> Int32 {
        // busted's formats are written whole at the end: nothing else may go to the output.
        func write(_ text: String) { if options.output == .plain { output(text) } }
        for filter in options.filters { try checkFilter(filter) }
        try checkTags(options.selection.tags, option: options.selection.tagsOrigin)
        try checkTags(options.selection.excludedTags, option: options.selection.excludedTagsOrigin)
        let files = try specFiles(options.paths)
        // Before any test runs: a report target that is a device, a FIFO or an input is refused untouched.
        try checkReportTargets(options, reading: files.map(\.shown))
        let coverage = options.coverage ? LineCoverage() : nil
        defer { LineCoverage.active = nil }
        // The tests run on a runner thread; this one writes the report and watches each host's
        // teardown, going on with a new runner past one that never ends (SpecSession).
        let session = SpecSession(limit: options.timeout)
        let signals = options.stopsOnInterrupt ? interruptSources(session) : []
        defer { for source in signals { source.cancel() } }
        let report = try session.run(write: write) { session, generation, position in
            work(files, from: position, options: options, coverage: coverage, session: session, generation: generation)
        }
        if report.interruption != nil {
            try finishReports(report, options: options, files: files, coverage: coverage, output: output)
            return interruptedStatus
        }
        // DESIGN: exit 0 only when none failed and at least one ran; a run that ran none says why.
        let ranNone = report.passed + report.failed == 0
        if files.isEmpty {
            write("no *_spec.lua files in \(options.paths.isEmpty ? "spec/ or test/" : options.paths.joined(separator: ", "))"
                  + SpecFile.nearMisses(paths: options.paths) + "\n")
        } else if !options.filters.isEmpty, report.results.isEmpty {
            let given = options.filters.map { "--filter " + ByteText.shown($0) }.joined(separator: " or ")
            write("no test's full name matches \(given) (a Lua pattern, matched against names such as \"describe-name it-name\"; "
                  + "escape magic characters ( ) . % + - * ? [ ^ $ with %)\n")
        } else if let note = untaggedNote(options.selection, tagged: report.tagged), !ranNone {
            write(note)
        } else if ranNone {
            write(noTestRan(options.selection, pending: report.pending))
            // `crescent test main.lua`: a script given where a spec goes.
            if let script = files.map(\.shown).first(where: { !$0.hasSuffix("_spec.lua") }), report.pending == 0 {
                write("\(script) is not named *_spec.lua: if it is a script, run it with crescent \(script); "
                      + "crescent test runs the specs in spec/\n")
            }
        }
        try finishReports(report, options: options, files: files, coverage: coverage, output: output)
        return report.failed > 0 || ranNone ? 1 : 0
    }

    /// Writes what follows the tests' lines: the coverage table and files, the summary (the last
    /// line), busted's format when one was asked for, and the JUnit file.
    private static func finishReports(_ report: SpecReport, options: SpecRunOptions, files: [SpecFile], coverage: LineCoverage?,
                                      output: (String) -> Void) throws {
        func write(_ text: String) { if options.output == .plain { output(text) } }
        if let coverage, report.interruption?.runnerStopped != false {
            do throws(ReportFailure) {
                try checkReportTargets(options, reading: files.map(\.shown))
                write(try coverage.write(to: FileManager.default.currentDirectoryPath))
            } catch {
                // The tests ran: their summary is still the last line of the report.
                write(report.summary + "\n")
                throw error
            }
        } else if coverage != nil {
            write("coverage not written: the test under way had not stopped \(formatSeconds(SpecSession.stopWait)) s after "
                  + "the interrupt, and its counts were still changing\n")
        }
        if let interruption = report.interruption { write(interruption.line) }
        write(report.summary + "\n")
        if let formatted = report.formatted(options.output) { output(formatted) }
        if let path = options.junitPath {
            // Checked again: the path may have changed while the tests ran.
            try checkReportTargets(options, reading: files.map(\.shown))
            do throws(ProjectFiles.Failure) {
                try ProjectFiles.write(report.junit, to: path)
            } catch {
                throw ReportFailure(description: "cannot write the JUnit report \(path): \(error)")
            }
        }
    }

    /// The most a spec file may hold: far more than any suite's file, and a bound on what a
    /// wrong path (a link to a disk image, `/dev/zero`) costs.
    static let specSizeLimit = 64 << 20

    /// A runner thread's work: the spec files from `position` on, each test in a host of its own,
    /// on a loop and under a time limit of the thread's own.
    private static func work(_ files: [SpecFile], from position: SpecSession.Position, options: SpecRunOptions,
                             coverage: LineCoverage?, session: SpecSession, generation: Int) {
        let loop = PumpedEventLoop()
        // A test's program that SIGINT ended (os.execute ignores SIGINT in its
        // caller meanwhile, so only the program saw the Ctrl-C) stops the run as SIGINT would.
        let limit = SpecTimeLimit(seconds: options.timeout, loop: loop) { _ = session.interrupt() }
        session.attach(limit, generation: generation)
        let teardown = SpecTeardown(session: session, generation: generation, limit: limit)
        var exposers: [SpecExposer] = []
        for index in files.indices {
            let file = files[index].shown
            var bytes: [UInt8]
            do throws(RegularFile.Refusal) {
                // Only a regular file, bounded: a FIFO would wait forever, /dev/zero fill memory.
                bytes = try RegularFile.read(bytes: files[index].path, limit: specSizeLimit)
                ScriptSource.blankShebang(&bytes)
            } catch {
                guard index >= position.file else { continue }
                let result = SpecResult(file: file, name: file, location: file, status: .failed,
                                        message: "cannot run the spec file \(file): \(error.reason)"
                                          + (error.isTooLarge ? ", the most a spec file may hold" : ""),
                                        output: "", seconds: 0)
                guard session.add(result, generation: generation) else { return }
                continue
            }
            // A file before the one to resume from (after a host that never closed) only exposes.
            if index >= position.file {
                let at = SpecSession.Position(file: index, test: index == position.file ? position.test : 0)
                do throws(UsageError) {
                    guard try runFile(file, bytes: bytes, at: at, options: options, loop: loop, limit: limit, coverage: coverage,
                                      teardown: teardown, exposers: exposers) else { return }
                } catch {
                    session.finish(generation: generation, failure: error)
                    return
                }
            }
            if let exposer = SpecExposer(source: bytes, path: file) { exposers.append(exposer) }
        }
        session.finish(generation: generation)
    }

    /// Runs the tests of one file from `position.test` on, in one host whose Lua state they all
    /// share, as under busted; each test gets a fresh model (``SpecHost/restartModel()``). False
    /// when the run abandoned this thread (a host that never closed): it stops at once.
    private static func runFile(_ file: String, bytes: [UInt8], at position: SpecSession.Position, options: SpecRunOptions,
                                loop: PumpedEventLoop, limit: SpecTimeLimit, coverage: LineCoverage? = nil,
                                teardown: SpecTeardown, exposers: [SpecExposer]) throws(UsageError) -> Bool {
        let session = teardown.session, generation = teardown.generation
        let next = SpecSession.Position(file: position.file + 1, test: 0)
        let started = ContinuousClock.now
        let host = try makeHost(loop: loop, options: options, limit: limit, coverage: coverage)
        limit.start(host.interrupter, plugins: host.host.pluginInterrupters)
        // Under the file's limit: an earlier file's expose body that loops is stopped there too.
        let exposeStop = host.expose(exposers)
        let loadFailure = host.load(bytes, path: file)
        limit.stop()
        func failLoading(_ failure: String, name: String = "(loading the file)") -> Bool {
            var failure = failure
            if let exposeStop { failure = exposeStop.explaining(failure) }
            failure = SpecHost.namingMemoryLimit(failure, mebibytes: options.hostOptions.memoryLimitMiB)
            if let filter = options.filters.first, failure.contains("time limit") {
                failure += "\n(--filter \(ByteText.shown(filter)) is matched against each test's name as the file is read: a pattern with "
                    + "many - or * backtracks on long names)"
            }
            let result = SpecResult(file: file, name: name, location: file, status: .error, message: failure,
                                    output: host.output.text, seconds: seconds(since: started))
            return teardown.close(host, file: file, reporting: result, resume: next)
        }
        if let loadFailure { return failLoading(loadFailure) }
        // The run was interrupted (or gave this thread up): the host still closes, its programs
        // killed and its finalizers run under the limit, as after any test.
        func stopping() -> Bool {
            _ = teardown.close(host, file: file, reporting: nil, resume: next)
            return false
        }
        var hooks = SpecHookReports()
        // The last entry of a block whose setup failed: busted reports the failure instead of the block's entries.
        var unreportedUpTo = -1
        // Whether a test ran in the current model: the next one gets a fresh one.
        var modelUsed = false
        func freshModel() -> String? {
            guard modelUsed else { return nil }
            modelUsed = false
            return host.restartModel()
        }
        while true {
            // A test that ended its host (an exit, the time limit) leaves no model for the walk.
            if !host.host.isRunning, let failure = freshModel() { return failLoading(failure) }
            limit.start(host.interrupter, plugins: host.host.pluginInterrupters)
            let step = host.next()
            limit.stop()
            let spec: SpecCase, index: Int
            switch step {
            case .done:
                session.addTagged(host.tagged(), generation: generation)
                for done in hooks.teardownsDone(before: nil) {
                    guard session.add(done, generation: generation) else { return stopping() }
                }
                return teardown.close(host, file: file, reporting: nil, resume: next)
            case .failed(let failure):
                session.addTagged(host.tagged(), generation: generation)
                return failLoading(failure)
            case .teardownFailed(let name, let message):
                guard session.add(SpecResult(file: file, name: name, location: file, status: .error, message: message, output: "",
                                             seconds: 0), generation: generation) else { return stopping() }
                continue
            case .entry(let entry, let at):
                spec = entry
                index = at
            }
            guard spec.isSelected, index >= position.test, !spec.isUnusedPlace, index > unreportedUpTo else { continue }
            for done in hooks.teardownsDone(before: spec.name) {
                guard session.add(done, generation: generation) else { return stopping() }
            }
            if let blockError = spec.blockError {
                let message = SpecHost.namingMemoryLimit(blockError, mebibytes: options.hostOptions.memoryLimitMiB)
                guard session.add(SpecResult(file: file, name: spec.name, location: spec.location, status: .error, message: message,
                                             output: "", seconds: 0), generation: generation) else { return stopping() }
                continue
            }
            if spec.isPending {
                guard session.add(SpecResult(file: file, name: spec.name, location: spec.location, status: .pending, message: "",
                                             output: "", seconds: 0), generation: generation) else { return stopping() }
                continue
            }
            let begun = ContinuousClock.now
            if let failure = freshModel() {
                guard session.add(SpecResult(file: file, name: spec.name, location: spec.location, status: .error, message: failure,
                                             output: "", seconds: 0), generation: generation) else { return stopping() }
                continue
            }
            modelUsed = true
            limit.start(host.interrupter, plugins: host.host.pluginInterrupters)
            let outcome = host.run(index)
            limit.stop()
            session.addUpdated(host.updated, generation: generation)
            let result = SpecResult(file: file, name: outcome.reportedName ?? spec.name, location: spec.location, status: outcome.status,
                                    message: outcome.message, output: outcome.output, seconds: seconds(since: begun))
            let followers = hooks.afterTest(outcome.afterHook.map { hook in
                SpecResult(file: file, name: hook.name, location: spec.location, status: .error, message: hook.message,
                           output: "", seconds: 0)
            }, isTeardown: outcome.afterHook?.isTeardown == true)
            var reported = outcome.isSetupFailure && !hooks.firstSetupFailure(result.name) ? nil : result
            if let entries = spec.hooksOf {
                // A block's hooks are no test: only a failure of theirs is reported.
                if outcome.status == .passed { reported = nil }
                if outcome.isSetupFailure { unreportedUpTo = index + entries }
            }
            if let reported { guard session.add(reported, generation: generation) else { return stopping() } }
            for follower in followers {
                guard session.add(follower, generation: generation) else { return stopping() }
            }
        }
    }

    /// Refuses a `--filter` that is not a Lua pattern (`[`), naming it and the fix, before any
    /// test runs: every test's name would otherwise fail to match in a way that says nothing.
    static func checkFilter(_ filter: [UInt8]) throws(UsageError) {
        guard let problem = patternProblem(filter) else { return }
        throw UsageError(description: "--filter \(ByteText.shown(filter)): not a valid Lua pattern (\(problem)); --filter takes a Lua pattern matched "
            + "against names such as \"describe-name it-name\": escape magic characters ( ) . % + - * ? [ ^ $ with %, "
            + "as in --filter '%['")
    }

    /// Refuses a `--tags` or `--exclude-tags` word that is not a Lua pattern: as busted does, a
    /// tag is found with `name:find("#" .. tag)`, so `[` would fail every test as its file is read.
    static func checkTags(_ tags: [[UInt8]], option: String) throws(UsageError) {
        for tag in tags {
            guard let problem = patternProblem(Array("#".utf8) + tag) else { continue }
            throw UsageError(description: "\(option) \(ByteText.shown(tag)): not a valid tag (\(problem)); a tag is found in a test's "
                + "name as the Lua pattern #TAG, as busted finds it: escape magic characters ( ) . % + - * ? [ ^ $ with %, "
                + "as in \(option) '%['")
        }
    }

    /// Why `pattern` is not a Lua pattern (`malformed pattern (missing ']')`), or nil when it is one.
    /// Lua reads a pattern as it matches, so it is matched against the empty string and against
    /// its own text, which its literal characters match up to the part that is wrong (`#(`).
    static func patternProblem(_ pattern: [UInt8]) -> String? {
        do throws(LuaError) {
            let vm = try LuaVM()
            defer { vm.close() }
            vm.stack.push(LuaString(bytes: pattern))
            vm.setGlobal("pattern")
            try vm.run("""
                for _, subject in ipairs({ '', pattern }) do
                  local ok, err = pcall(string.find, subject, pattern)
                  if not ok then return tostring(err) end
                end
                """, name: "=pattern", results: 1)
            return vm.stack.text(at: -1)
        } catch {
            return nil
        }
    }

    private static func makeHost(loop: PumpedEventLoop, options: SpecRunOptions, limit: SpecTimeLimit,
                                 coverage: LineCoverage? = nil) throws(UsageError) -> SpecHost {
        do {
            var selection = options.selection
            selection.filters = options.filters
            // The test's limit is what the host's --timeout message names when it stops a test.
            var hostOptions = options.hostOptions
            if options.timeout > 0 { hostOptions.timeout = options.timeout }
            let host = try SpecHost(loop: loop, options: hostOptions, update: options.update, timeLimit: limit, selection: selection)
            if let coverage { host.measure(coverage) }
            return host
        } catch {
            throw UsageError(description: "cannot start a test host: \(error)")
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).inSeconds
    }

    /// The `*_spec.lua` files under `paths` (default `spec/` and `test/`, where they exist), sorted
    /// per path; a path given that does not exist is an error.
    static func specFiles(_ paths: [String]) throws(UsageError) -> [SpecFile] {
        let manager = FileManager.default
        let roots = paths.isEmpty ? ["spec", "test"].filter { manager.fileExists(atPath: $0) } : paths
        var files: [SpecFile] = []
        for root in roots {
            var isFolder: ObjCBool = false
            guard manager.fileExists(atPath: root, isDirectory: &isFolder) else {
                throw UsageError(description: "no such file or folder: \(root)")
            }
            files += isFolder.boolValue ? SpecFile.found(in: root) : [SpecFile(root)]
        }
        return files
    }
}
