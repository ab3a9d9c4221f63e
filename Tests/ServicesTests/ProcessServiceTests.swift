import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// The process service with real programs: statuses and signals as values, stdin, output limits,
/// timeouts against a program that ignores SIGTERM, whole groups killed on cancel, hundreds at
/// once without a descriptor or a zombie left behind (checked in /proc), and bad input.
@Suite struct ProcessServiceTests {
    let service = ProcessService()
    /// A script without an execute bit.
    static let notExecutable = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-not-executable.sh").path
    /// A script whose `#!` names an interpreter that does not exist.
    static let badInterpreter = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-bad-interpreter.sh").path

    @Test func aRunAnswersItsStatusAndBothStreams() async throws {
        let outcome = try await service.run(ProcessSpec(argv: ["sh", "-c", "echo out; echo err >&2; exit 3"]))
        #expect(outcome.status == 3)
        #expect(outcome.signal == nil)
        #expect(String(decoding: outcome.stdout, as: UTF8.self) == "out\n")
        #expect(String(decoding: outcome.stderr, as: UTF8.self) == "err\n")
        #expect(!outcome.truncated && !outcome.timedOut)
    }

    @Test func aSignalThatEndsTheProgramIsAValue() async throws {
        let outcome = try await service.run(ProcessSpec(argv: ["sh", "-c", "kill -USR1 $$"]))
        #expect(outcome.status == nil)
        #expect(outcome.signal == "SIGUSR1")
    }

    @Test func stdinIsWrittenThenClosed() async throws {
        var spec = ProcessSpec(argv: ["cat"])
        spec.stdin = Array("one\ntwo".utf8)
        let outcome = try await service.run(spec)
        #expect(String(decoding: outcome.stdout, as: UTF8.self) == "one\ntwo")
        #expect(outcome.status == 0)
    }

    @Test func withoutStdinTheProgramReadsEndOfFile() async throws {
        let outcome = try await service.run(ProcessSpec(argv: ["cat"]))
        #expect(outcome.status == 0)
        #expect(outcome.stdout.isEmpty)
    }

    @Test func cwdAndEnvironmentReachTheProgram() async throws {
        var spec = ProcessSpec(argv: ["sh", "-c", "pwd; echo \"$GREETING\"; echo \"${HOME:-unset}\""])
        spec.cwd = "/tmp"
        let unset: String? = nil
        spec.environment = ["GREETING": "hello", "HOME": unset]
        let outcome = try await service.run(spec)
        #expect(String(decoding: outcome.stdout, as: UTF8.self) == "/tmp\nhello\nunset\n")
    }

    @Test func outputPastMaxBytesIsCutWithAFlagWhileTheProgramRunsToItsEnd() async throws {
        var spec = ProcessSpec(argv: ["head", "-c", "100000000", "/dev/zero"])
        spec.maxBytes = 1 << 20
        let outcome = try await service.run(spec)
        #expect(outcome.status == 0, "the 100 MB were all read (the writer was never blocked)")
        #expect(outcome.stdout.count == 1 << 20)
        #expect(outcome.truncated)
    }

    @Test func aRunKeepsSeveralMegabytesWholeAndInOrder() async throws {
        // Past the first read the output's room is reserved at once (OutputPipe.wholeReserve).
        let outcome = try await service.run(ProcessSpec(argv: ["seq", "1", "500000"]))
        let expected = (1...500_000).map(String.init).joined(separator: "\n") + "\n"
        #expect(outcome.status == 0 && !outcome.truncated)
        #expect(outcome.stdout.count == expected.utf8.count)
        #expect(outcome.stdout == Array(expected.utf8))
    }

    @Test func aTimeoutSendsTermThenKillToAProgramThatIgnoresTerm() async throws {
        var spec = ProcessSpec(argv: ["sh", "-c", "trap '' TERM; echo ready; sleep 30"])
        spec.timeout = 0.3
        spec.killGrace = 0.3
        let started = ContinuousClock.now
        let outcome = try await service.run(spec)
        #expect(outcome.timedOut)
        #expect(outcome.signal == "SIGKILL")
        #expect(String(decoding: outcome.stdout, as: UTF8.self) == "ready\n")
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func aTimeoutEndsAProgramThatHeedsTermWithTerm() async throws {
        var spec = ProcessSpec(argv: ["sleep", "30"])
        spec.timeout = 0.2
        let outcome = try await service.run(spec)
        #expect(outcome.timedOut)
        #expect(outcome.signal == "SIGTERM")
    }

    @Test func cancellingARunKillsTheWholeGroupAndReapsIt() async throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-cancel-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        let service = self.service
        let run = Task { try await service.run(ProcessSpec(argv: ["sh", "-c", "sleep 60 & sleep 61 & echo $$ > \(pidFile); wait"])) }
        let leader = try #require(await waitForPid(in: pidFile))
        #expect(processGroup(of: leader) == leader, "the program leads a group of its own")
        #expect(await eventually { processes(inGroup: leader).count == 3 }, "the two background children share its group")
        run.cancel()
        await #expect(throws: ServiceError.self) { try await run.value }
        #expect(await eventually { processes(inGroup: leader).isEmpty }, "no process of the group is left: \(processes(inGroup: leader))")
        #expect(await eventually { !FileManager.default.fileExists(atPath: "/proc/\(leader)") }, "the leader was reaped")
        #expect(await eventually { service.runningCount == 0 })
    }

    @Test func aSpawnedProcessGivesLinesTakesInputAndReportsItsExit() async throws {
        let process = try service.spawn(ProcessSpec(argv: ["cat"]))
        let seen = Mutex<[String]>([])
        process.changes.attach { change in
            switch change {
            case .event("didExit", let payload):
                seen.withLock { $0.append("didExit:\(payload["status"].integerValue ?? -1)") }
            case .event, .events:
                seen.withLock { $0 += change.outputLines.map { "\($0["stream"].stringValue ?? "?"):\($0.lineText)" } }
            case .property(let key, let value):
                seen.withLock { $0.append("\(key)=\(value.boolValue.map(String.init) ?? "?")") }
            }
        }
        process.start()
        #expect(process.isRunning)
        try process.write(Array("first\nsecond\r\nlast without newline".utf8))
        process.closeInput()
        #expect(throws: ServiceError.self) { try process.write([1]) }
        #expect(await eventually { !process.isRunning })
        #expect(await eventually { seen.withLock { $0.count } == 5 })
        #expect(seen.withLock { $0 } == ["stdout:first", "stdout:second", "stdout:last without newline", "running=false", "didExit:0"])
    }

    @Test func anOwnerEndingKillsASpawnedGroup() async throws {
        let process = try service.spawn(ProcessSpec(argv: ["sh", "-c", "sleep 60 & sleep 60"]))
        process.start()
        #expect(await eventually { processes(inGroup: process.pid).count >= 2 })
        process.ownerEnded()
        #expect(await eventually { !process.isRunning })
        #expect(process.outcome?.signal == "SIGKILL")
        #expect(await eventually { processes(inGroup: process.pid).isEmpty })
    }

    @Test func whatARunLeftInItsGroupEndsWithIt() async throws {
        // The shell exits at once; the sleep it put in the background shares its group.
        let outcome = try await service.run(ProcessSpec(argv: ["sh", "-c", "sleep 3015 & echo $!"]))
        let child = try #require(Int32(String(decoding: outcome.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(outcome.status == 0)
        #expect(await eventually { !isLive(child) }, "the background sleep \(child) is killed when the run ends")
    }

    @Test func whatASpawnedProgramLeftInItsGroupEndsWithIt() async throws {
        let process = try service.spawn(ProcessSpec(argv: ["sh", "-c", "sleep 3014 & echo $!"]))
        let child = Mutex<Int32?>(nil)
        process.changes.attach { change in
            guard let line = change.outputLines.first else { return }
            child.withLock { $0 = Int32(line.lineText) }
        }
        process.start()
        #expect(await eventually { !process.isRunning })
        let pid = try #require(child.withLock { $0 })
        #expect(process.outcome?.status == 0)
        #expect(await eventually { !isLive(pid) }, "the background sleep \(pid) is killed when the spawned shell exits")
    }

    @Test func theEndOfItsTaskSendsTermThenKillToASpawnedGroup() async throws {
        let clock = ManualClock()
        let service = ProcessService(clock: clock)
        // A program that ignores SIGTERM: the task's end is SIGTERM, then SIGKILL after the grace.
        let process = try service.spawn(ProcessSpec(argv: ["sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"]))
        let ready = Mutex(false)
        process.changes.attach { change in
            if !change.outputLines.isEmpty { ready.withLock { $0 = true } }
        }
        process.start()
        #expect(process.endsWithTask)
        #expect(await eventually { ready.withLock { $0 } })
        process.taskEnded()
        try await Task.sleep(for: .milliseconds(300))
        #expect(process.isRunning, "SIGTERM alone does not end a program that ignores it")
        _ = clock.advance(by: .seconds(ProcessSpec.defaultKillGrace))
        #expect(await eventually { !process.isRunning })
        #expect(process.outcome?.signal == "SIGKILL")
        var outliving = ProcessSpec(argv: ["true"])
        outliving.outliveTask = true
        let outlives = try service.spawn(outliving)
        #expect(!outlives.endsWithTask)
        // Started and ended here: a spawned program nobody starts is never reaped, and its zombie
        // would fail the next test that counts them.
        outlives.start()
        #expect(await eventually { !outlives.isRunning })
    }

    @Test func releasingTheServiceKillsWhatItStarted() async throws {
        var service: ProcessService? = ProcessService()
        let process = try #require(try service?.spawn(ProcessSpec(argv: ["sleep", "60"])))
        process.start()
        service = nil
        #expect(await eventually { !process.isRunning })
        #expect(process.outcome?.signal == "SIGKILL")
    }

    /// A Swift caller that spawns and drops the process without starting it leaves nothing
    /// running and no zombie (issue 38: such a spawn was never reaped).
    @Test func aSpawnNeverStartedIsKilledAndReapedOnceReleased() async throws {
        var process: SpawnedProcess? = try service.spawn(ProcessSpec(argv: ["sh", "-c", "sleep 60 & sleep 60"]))
        let pid = try #require(process?.pid)
        #expect(await eventually { processes(inGroup: pid).count >= 2 })
        process = nil
        #expect(await eventually { processes(inGroup: pid).isEmpty }, "the group was killed")
        #expect(await eventually { !FileManager.default.fileExists(atPath: "/proc/\(pid)") }, "the program was reaped")
        #expect(await eventually { service.runningCount == 0 })
    }

    @Test func hundredsAtOnceLeaveNoDescriptorAndNoZombie() async throws {
        let before = openDescriptors()
        let service = self.service
        let statuses = try await withThrowingTaskGroup(of: Int?.self) { group in
            for index in 0..<300 {
                group.addTask { try await service.run(ProcessSpec(argv: ["sh", "-c", "exit \(index % 7)"])).status }
            }
            var statuses: [Int?] = []
            for try await status in group { statuses.append(status) }
            return statuses
        }
        #expect(statuses.count == 300)
        let sum: Int = statuses.compactMap { $0 }.reduce(0, +)
        let expected: Int = (0..<300).map { $0 % 7 }.reduce(0, +)
        #expect(sum == expected)
        // Other suites of this process open and close descriptors meanwhile: a leak here would
        // be at least 300 (one pipe end per program), far past this margin.
        #expect(await eventually { openDescriptors() <= before + 20 }, "descriptors: \(before) before, \(openDescriptors()) after")
        #expect(await eventually { zombieChildren().isEmpty }, "zombies: \(zombieChildren())")
        #expect(service.runningCount == 0)
    }

    @Test(arguments: [
        (["no-such-program-crescent"], "not_found", "program 'no-such-program-crescent' was not found in PATH"),
        (["/no/such/program"], "not_found", "program '/no/such/program' does not exist"),
        ([ProcessServiceTests.notExecutable], "permission", "program '\(ProcessServiceTests.notExecutable)' is not executable"),
        // Issue 38, M1: it was "does not exist", of a script that does.
        ([ProcessServiceTests.badInterpreter], "not_found",
         "program '\(ProcessServiceTests.badInterpreter)' names an interpreter that does not exist on its first line: #!/nonexistent/interp"),
    ])
    func aProgramThatCannotStartIsAnErrorNamingIt(argv: [String], code: String, message: String) async {
        FileManager.default.createFile(atPath: Self.notExecutable, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o644])
        FileManager.default.createFile(atPath: Self.badInterpreter, contents: Data("#!/nonexistent/interp -x\necho\n".utf8),
                                       attributes: [.posixPermissions: 0o755])
        do {
            _ = try await service.run(ProcessSpec(argv: argv))
            Issue.record("\(argv) started")
        } catch {
            #expect(error.code.name == code)
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
    }

    @Test func badInputIsAClearError() throws {
        func problem(_ argv: Value, _ options: Value = .null) -> String {
            do {
                _ = try ProcessSpec(argv: argv, options: options)
                return "accepted"
            } catch {
                return error.message
            }
        }
        #expect(problem([]).hasPrefix("argv is empty"))
        #expect(problem(["echo", "a\u{0}b"]) == "argv[2] holds a NUL byte, which no program can receive: remove it")
        #expect(problem("ls | wc").hasPrefix("argv must be an array"))
        #expect(problem(["ls", "-l"], ["shell": true]).hasPrefix("with shell = true argv is one command line"))
        #expect(problem(["ls"], ["colour": true]).hasPrefix("unknown option 'colour'"))
        #expect(problem(["ls"], ["env": ["A": .array([])]]).hasPrefix("options.env.A must be a string"))
        // Issue 38, M9: a timeout of 0 stopped the program at once (`crescent test --timeout 0`
        // means none), and a bad signal number was not named.
        #expect(problem(["ls"], ["timeout": 0]).hasPrefix("options.timeout is 0, which would stop the program at once"))
        #expect(problem(["ls"], ["timeout": 0.5]) == "accepted")
        for number: Int64 in [0, -1, 999] {
            #expect(throws: ServiceError(.invalidArgument, "signal must be a name such as \"SIGTERM\", \"SIGINT\" or \"SIGKILL\" (or its number), got \(number), not a signal this host knows")) {
                _ = try ProcessOutcome.signalNumber(.integer(number))
            }
        }
        #expect(throws: ServiceError.self) {
            var spec = ProcessSpec(argv: ["ls"])
            spec.cwd = "/no/such/folder"
            _ = try ProcessLauncher.prepare(spec, keepInputOpen: false)
        }
        var spec = ProcessSpec(argv: ["ls"])
        spec.cwd = "/no/such/folder"
        do {
            _ = try ProcessLauncher.prepare(spec, keepInputOpen: false)
        } catch {
            #expect(error.message == "cwd '/no/such/folder' does not exist")
        }
    }

    /// Issue 38, M8: a PATH given in `options.env` did not change where the program was looked
    /// up (`env = { PATH = "/nonexistent" }` still ran /usr/bin/ls).
    @Test func aPathGivenInTheEnvironmentIsWhereTheProgramIsLookedUp() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-path-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        FileManager.default.createFile(atPath: folder + "/ls", contents: Data("#!/bin/sh\necho mine\n".utf8),
                                       attributes: [.posixPermissions: 0o755])
        var spec = ProcessSpec(argv: ["ls"])
        spec.environment = ["PATH": "/nonexistent:" + folder]
        #expect(String(decoding: try await service.run(spec).stdout, as: UTF8.self) == "mine\n")
        spec.environment = ["PATH": "/nonexistent"]
        do {
            _ = try await service.run(spec)
            Issue.record("ls was found in /nonexistent")
        } catch {
            #expect(error.code == .notFound && error.message == "program 'ls' was not found in options.env's PATH ('/nonexistent')", "\(error)")
        }
    }

    @Test func aShellRunsOnlyWhenAsked() async throws {
        let spec = try ProcessSpec(argv: "echo $((1 + 2)) | tr 3 x", options: ["shell": true])
        #expect(spec.argv == ["/bin/sh", "-c", "echo $((1 + 2)) | tr 3 x"])
        #expect(String(decoding: try await service.run(spec).stdout, as: UTF8.self) == "x\n")
        // Without it the words are the program's arguments, as they are.
        let plain = try await service.run(ProcessSpec(argv: ["echo", "$HOME", "a|b"]))
        #expect(String(decoding: plain.stdout, as: UTF8.self) == "$HOME a|b\n")
    }
}

// MARK: /proc

/// Fields of /proc/PID/stat after the command name: state is [0], the process group [2].
private func statFields(_ pid: Int32) -> [Substring]? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")") else { return nil }
    return text[text.index(after: close)...].split(separator: " ")
}

func processGroup(of pid: Int32) -> Int32? {
    statFields(pid).flatMap { $0.count > 2 ? Int32($0[2]) : nil }
}

/// The live (not zombie) processes whose group is `group`.
func processes(inGroup group: Int32) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(Int32.init).filter { pid in
        guard let fields = statFields(pid), fields.count > 2 else { return false }
        return Int32(fields[2]) == group && fields[0] != "Z"
    }
}

/// Children of this process that exited and were never reaped.
/// True while `pid` runs (not gone, not a zombie).
func isLive(_ pid: Int32) -> Bool {
    guard let fields = statFields(pid), !fields.isEmpty else { return false }
    return fields[0] != "Z"
}

func zombieChildren() -> [Int32] {
    let me = getpid()
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(Int32.init).filter { pid in
        guard let fields = statFields(pid), fields.count > 1 else { return false }
        return fields[0] == "Z" && Int32(fields[1]) == me
    }
}

func openDescriptors() -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
}

/// The pid a program wrote to `path`, waiting up to 5 s.
private func waitForPid(in path: String) async -> Int32? {
    for _ in 0..<500 {
        if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n"),
           let pid = Int32(text.dropLast()) { return pid }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return nil
}

extension ModelChange {
    /// The `didOutput` payloads this report carries: one event, or the lines of one read.
    var outputLines: [Value] {
        switch self {
        case .event("didOutput", let payload): [payload]
        case .events("didOutput", let payloads): payloads
        default: []
        }
    }
}

extension Value {
    /// A `didOutput` payload's line as text.
    var lineText: String {
        if case .bytes(let bytes) = self["line"] { String(decoding: bytes, as: UTF8.self) } else { "" }
    }
}
