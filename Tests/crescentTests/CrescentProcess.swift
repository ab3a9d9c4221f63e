import ChildTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The one place that runs the `crescent` binary for the end-to-end tests.
//
// Every run gets its own temporary folder (a `Sandbox`) as the current directory, so scripts are
// named by short relative paths and messages read `script.lua:2: ...` exactly. Each run has a hard
// time limit: past it the process is killed, the test fails, and the suite goes on. A process that
// dies by a signal fails its test (`recordSignalDeath`), unless the test sent that signal saying it
// ends the process (`send(_:expecting:)` with `.death`).

/// The outcome of one run of the binary.
struct RunResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    /// True when the process had to be killed at the time limit (the test has already failed).
    var timedOut: Bool
    /// True when the process ended by an uncaught signal (then `status` is the signal number).
    var killedBySignal: Bool
    /// Wall time from launch to exit.
    var elapsed: Double

    var stdoutLines: [String] { Self.lines(stdout) }
    var stderrLines: [String] { Self.lines(stderr) }

    static func lines(_ text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// No crash marks on stderr (a Swift trap, a sanitizer or a C assertion).
    var stderrShowsNoCrash: Bool {
        // NIO's "Cannot schedule tasks on an EventLoop that has already shut down" is to become a crash.
        !["Fatal error", "crashed", "Segmentation fault", "Assertion", "panic", "SIGSEGV", "SIGABRT", "Cannot schedule tasks"]
            .contains { stderr.contains($0) }
    }

    var description: String {
        var text = "exit status \(status)"
        if killedBySignal { text += " (killed by signal \(status))" }
        if timedOut { text += " (killed at the time limit)" }
        text += String(format: " after %.2f s", elapsed)
        text += "\n--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)"
        return text
    }
}

/// The C `write`, out of reach of methods named `write`.
private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

/// A temporary folder for one test's files, removed when the value goes away.
final class Sandbox: @unchecked Sendable {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("crescent-e2e-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` to `name` (a path relative to the sandbox; folders are created) and returns
    /// its absolute path.
    @discardableResult
    func write(_ name: String, _ text: String, executable: Bool = false) throws -> String {
        try write(name, bytes: Array(text.utf8), executable: executable)
    }

    /// Writes raw bytes to `name` and returns its absolute path.
    ///
    /// The file is written through a close-on-exec descriptor: a process another test spawns at
    /// the same moment must not inherit it open for writing, or exec'ing the file fails with
    /// "Text file busy".
    @discardableResult
    func write(_ name: String, bytes: [UInt8], executable: Bool = false) throws -> String {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, executable ? 0o755 : 0o644)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { writeBytes(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            offset += written
        }
        return file.path
    }

    /// Makes a folder `name` and returns its absolute path.
    @discardableResult
    func makeFolder(_ name: String) throws -> String {
        let folder = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.path
    }
}

/// Bytes read from one of the child's pipes by a background thread.
private final class OutputBuffer: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var ended = false

    func append(_ chunk: Data) { lock.withLock { data.append(chunk) } }
    func end() { lock.withLock { ended = true } }
    var isEnded: Bool { lock.withLock { ended } }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

    /// Starts a thread that reads `handle` until end of file.
    static func reading(_ handle: FileHandle) -> OutputBuffer {
        let buffer = OutputBuffer()
        let thread = Thread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
            }
            buffer.end()
        }
        thread.start()
        return buffer
    }
}

/// One running `crescent` process: start it, wait for output, signal it, collect the result.
final class CrescentProcess: @unchecked Sendable {
    /// The hard limit for one run, in seconds; past it the process is killed and the test fails.
    static let defaultTimeLimit = 20.0

    /// The binary under test: `$CRESCENT_BIN`, else `crescent` next to the test bundle (same build
    /// configuration), else `.build/debug/crescent` in the package root.
    static let binaryPath: String = {
        if let path = ProcessInfo.processInfo.environment["CRESCENT_BIN"], !path.isEmpty { return path }
        let fileManager = FileManager.default
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL {
            // .build/<config>/crescentPackageTests.xctest (a file on Linux, a bundle on macOS).
            var folder = executable.deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(folder.appendingPathComponent("crescent"))
                folder = folder.deletingLastPathComponent()
            }
        }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/crescent"))
        return candidates.first { fileManager.isExecutableFile(atPath: $0.path) }?.path
            ?? packageRoot.appendingPathComponent(".build/debug/crescent").path
    }()

    /// The package root, derived from this file's place: Tests/crescentTests/CrescentProcess.swift.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Variables taken out of the inherited environment so a developer's settings cannot change
    /// what the tests see; a test sets them explicitly when it needs them.
    static let scrubbedVariables = [
        "LUA_INIT", "LUA_INIT_5_4", "LUA_PATH", "LUA_PATH_5_4", "LUA_CPATH", "LUA_CPATH_5_4", "NO_COLOR",
    ]

    /// The child once started, waited for by its pid (``TestChild``): Foundation's
    /// `Process.isRunning` once missed an exit for 30 s.
    private var child: TestChild?
    private var stdoutBuffer: OutputBuffer?
    private var stderrBuffer: OutputBuffer?
    private var started = Date()
    /// Seconds since the child started: what a wait counted from a later moment adds to its
    /// limit (``finish(timeLimit:sourceLocation:)`` counts from the start).
    var runningFor: Double { Date().timeIntervalSince(started) }
    private let executable: String
    private let arguments: [String]
    private let directory: String
    private let environment: [String: String]

    /// The child's pid (0 before it started).
    var pid: Int32 { child?.pid ?? 0 }
    /// True from the start until the child has ended.
    var isRunning: Bool { child?.isRunning ?? false }
    private let stdinData: Data?
    /// The child leads a process group of its own, which ``send(_:expecting:toGroup:)`` can signal
    /// whole, as a terminal's Ctrl-C does.
    private let processGroup: Bool
    /// What the test said about the signals it sent, and whether the end was checked; locked,
    /// because a test may signal from a thread of its own.
    private let signals = SignalLedger()

    /// - Parameters:
    ///   - arguments: the command line after `crescent`.
    ///   - executable: what to run instead of the binary (a shebang script).
    ///   - directory: the current directory of the child.
    ///   - stdin: bytes for standard input (then closed); nil gives /dev/null.
    ///   - environment: variables to set (a nil value removes the variable).
    init(
        _ arguments: [String], executable: String = binaryPath, directory: String,
        stdin: Data? = nil, environment: [String: String?] = [:], processGroup: Bool = false
    ) {
        self.processGroup = processGroup
        self.executable = executable
        self.arguments = arguments
        self.directory = directory
        var variables = ProcessInfo.processInfo.environment
        for name in Self.scrubbedVariables { variables[name] = nil }
        for (name, value) in environment { variables[name] = value }
        self.environment = variables
        stdinData = stdin
    }

    /// Launches the process; a missing binary fails with a hint to build it.
    func start() throws {
        for path in [Self.binaryPath, executable] where !FileManager.default.isExecutableFile(atPath: path) {
            throw MissingBinary(path: path)
        }
        // A shebang script that a child spawned at the same moment by another test holds open
        // (between its fork and exec) cannot be exec'd: "Text file busy". Try again shortly.
        var attempts = 0
        while true {
            do {
                try launch()
                return
            } catch where attempts < 50 && Self.isTextFileBusy(error) {
                attempts += 1
                usleep(20_000)
            }
        }
    }

    private func launch() throws {
        let output = try Self.pipe(), errors = try Self.pipe()
        let input = stdinData == nil ? nil : try Self.pipe()
        started = Date()
        do {
            child = try TestChild(executable, arguments, environment: environment, directory: directory,
                                  stdin: input.map { .descriptor($0.read) } ?? .null,
                                  stdout: .descriptor(output.write), stderr: .descriptor(errors.write), processGroup: processGroup)
        } catch {
            for descriptor in [output.read, output.write, errors.read, errors.write, input?.read, input?.write] {
                if let descriptor { close(descriptor) }
            }
            throw error
        }
        // Close our copies of the child's ends, so end of file arrives when the child exits.
        close(output.write)
        close(errors.write)
        stdoutBuffer = OutputBuffer.reading(FileHandle(fileDescriptor: output.read, closeOnDealloc: true))
        stderrBuffer = OutputBuffer.reading(FileHandle(fileDescriptor: errors.read, closeOnDealloc: true))
        if let input, let stdinData {
            close(input.read)
            let writer = FileHandle(fileDescriptor: input.write, closeOnDealloc: true)
            Thread {
                try? writer.write(contentsOf: stdinData)
                try? writer.close()
            }.start()
        }
    }

    /// A pipe whose ends are close-on-exec (the child gets its copies through dup2), so no
    /// program another test starts at the same moment keeps one open.
    private static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    var stdout: String { stdoutBuffer?.text ?? "" }
    var stderr: String { stderrBuffer?.text ?? "" }

    /// Waits until stdout (or stderr) contains `text`; false when the process ended or `seconds`
    /// passed first.
    func waitForOutput(_ text: String, onStderr: Bool = false, within seconds: Double = 10) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (onStderr ? stderr : stdout).contains(text) { return true }
            if !isRunning { return (onStderr ? stderr : stdout).contains(text) }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return false
    }

    /// What a signal a test sends is meant to do.
    enum SignalExpectation {
        /// crescent catches it and exits by itself (SIGINT, SIGTERM): dying of it fails the test.
        case handled
        /// It ends the process (SIGKILL): dying of it is what the test wants.
        case death
    }

    /// Sends `signal` to the child; `expectation` says whether the test means it to kill the
    /// process (dying of any other signal fails the test).
    /// `toGroup`: to the child's whole process group (started with `processGroup`), as a terminal
    /// sends Ctrl-C to every process of the foreground job.
    func send(_ signal: Int32, expecting expectation: SignalExpectation, toGroup: Bool = false) {
        if expectation == .death { signals.expectDeath(by: signal) }
        child?.signal(signal, group: toGroup && processGroup)
    }

    /// A process that ended by a signal and was never finished still fails its test.
    deinit {
        guard signals.takeCheck(), let ending = child?.end else { return }
        recordSignalDeath(ending, program: executable, command: arguments, expected: signals.expectedDeaths, output: stderr,
                          sourceLocation: SourceLocation(fileID: #fileID, filePath: #filePath, line: #line, column: #column))
    }

    /// Waits for the child to exit (killing it at `timeLimit`, which records a test failure) and
    /// for its output to end.
    func finish(timeLimit: Double = defaultTimeLimit, sourceLocation: SourceLocation = #_sourceLocation) async -> RunResult {
        let deadline = started.addingTimeInterval(timeLimit)
        var timedOut = false
        // Invariant: a CrescentProcess is finished only after start() succeeded, which sets the child.
        let child = self.child!
        var ending: TestChild.Ending
        while true {
            if let end = child.end {
                ending = end
                break
            }
            if Date() >= deadline {
                timedOut = true
                child.signal(SIGKILL)
                ending = await Task.detached { child.waitUntilEnded() }.value
                break
            }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        let elapsed = Date().timeIntervalSince(started)
        // The pipes end when the child exits; wait a little in case a sibling process spawned at
        // the same moment inherited a copy of their write ends.
        let drainDeadline = Date().addingTimeInterval(2)
        while !(stdoutBuffer?.isEnded ?? true && stderrBuffer?.isEnded ?? true), Date() < drainDeadline {
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        let status: Int32, killedBySignal: Bool
        switch ending {
        case .exited(let code): (status, killedBySignal) = (code, false)
        case .signaled(let signal): (status, killedBySignal) = (signal, true)
        }
        let result = RunResult(
            status: status,
            stdout: stdout,
            stderr: stderr,
            timedOut: timedOut,
            killedBySignal: killedBySignal,
            elapsed: elapsed
        )
        if timedOut {
            Issue.record("crescent \(arguments) did not exit within \(timeLimit) s; killed.\n\(result)",
                         sourceLocation: sourceLocation)
        }
        if signals.takeCheck() && !timedOut {
            recordSignalDeath(ending, program: executable, command: arguments, expected: signals.expectedDeaths, output: "\(result)",
                              sourceLocation: sourceLocation)
        }
        return result
    }

    private static func isTextFileBusy(_ error: any Error) -> Bool {
        if let error = error as? TestChild.SpawnError { return error.code == ETXTBSY }
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain && error.code == Int(ETXTBSY) { return true }
        guard let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError else { return false }
        return underlying.domain == NSPOSIXErrorDomain && underlying.code == Int(ETXTBSY)
    }

    struct MissingBinary: Error, CustomStringConvertible {
        let path: String
        var description: String { "nothing executable at \(path): run 'swift build' first or set CRESCENT_BIN" }
    }
}

/// The signals a test sent meaning to end its process, and whether its end has been checked.
private final class SignalLedger: @unchecked Sendable {
    // @unchecked: every stored property is read and written under `lock`.
    private let lock = NSLock()
    private var deaths: Set<Int32> = []
    private var checked = false

    func expectDeath(by signal: Int32) { lock.withLock { _ = deaths.insert(signal) } }
    var expectedDeaths: Set<Int32> { lock.withLock { deaths } }

    /// True the first time only: the end is checked once, by `finish` or else at deinit.
    func takeCheck() -> Bool {
        lock.withLock {
            defer { checked = true }
            return !checked
        }
    }
}

/// Records a test failure when a child `program` that ended as `ending` died by a signal that is
/// not in `expected`: a crash (SIGSEGV, SIGILL from a Swift trap, SIGABRT, SIGBUS) or a signal
/// crescent should have handled. Every helper that starts a process for a test calls it once the
/// process has ended. Returns true when it recorded one.
@discardableResult
func recordSignalDeath(_ ending: TestChild.Ending, program: String, command: [String], expected: Set<Int32> = [],
                       output: String, sourceLocation: SourceLocation) -> Bool {
    guard case .signaled(let signal) = ending, !expected.contains(signal) else { return false }
    let name = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
    let sent = expected.isEmpty ? "" : " (the test sent only \(expected.sorted().map(String.init).joined(separator: ", ")) to end it)"
    let shown = program.split(separator: "/").last.map(String.init) ?? program
    Issue.record("\(shown) \(command) died by signal \(signal) (\(name))\(sent)\n\(output)", sourceLocation: sourceLocation)
    return true
}

// MARK: - The helpers tests call

/// Runs `crescent ARGUMENTS` (or `executable ARGUMENTS`) in `sandbox` (a fresh one when nil) and
/// returns the result.
func crescent(
    _ arguments: [String],
    executable: String = CrescentProcess.binaryPath,
    in sandbox: Sandbox? = nil,
    directory: String? = nil,
    stdin: String? = nil,
    environment: [String: String?] = [:],
    timeLimit: Double = CrescentProcess.defaultTimeLimit,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> RunResult {
    let sandbox = try sandbox ?? Sandbox()
    let process = CrescentProcess(
        arguments, executable: executable, directory: directory ?? sandbox.path, stdin: stdin.map { Data($0.utf8) }, environment: environment
    )
    try process.start()
    return await process.finish(timeLimit: timeLimit, sourceLocation: sourceLocation)
}

/// Writes `source` to `script.lua` in a fresh sandbox and runs
/// `crescent OPTIONS script.lua ARGUMENTS` there, so messages name `script.lua:LINE:`.
func runScript(
    _ source: String,
    options: [String] = [],
    arguments: [String] = [],
    environment: [String: String?] = [:],
    timeLimit: Double = CrescentProcess.defaultTimeLimit,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> RunResult {
    let sandbox = try Sandbox()
    try sandbox.write("script.lua", source)
    return try await crescent(
        options + ["script.lua"] + arguments, in: sandbox, environment: environment,
        timeLimit: timeLimit, sourceLocation: sourceLocation
    )
}

/// Starts `source` as `script.lua` without waiting for it, for tests that signal the process.
func startScript(_ source: String, options: [String] = [], in sandbox: Sandbox) throws -> CrescentProcess {
    try sandbox.write("script.lua", source)
    let process = CrescentProcess(options + ["script.lua"], directory: sandbox.path)
    try process.start()
    return process
}

/// Waits until `condition` holds, looking every 10 ms, for at most `seconds`; whether it held.
func waitUntil(seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

/// `text` as a Lua string literal, for paths and values put into a test's script.
func luaString(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

/// The usage hint every usage error ends with.
let usageHintPrefix = "Usage: crescent"
