import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A client of a listening host written against the socket alone, as `socat` would speak to it:
/// JSON-RPC lines out, lines in, parsed with Foundation's JSON (not Crescent's), so the tests
/// check the protocol on the wire.
final class RemoteTestClient: @unchecked Sendable {
    // @unchecked: used from one test task at a time.
    let descriptor: Int32
    private var pending: [UInt8] = []
    private var nextID = 0

    /// Connects to `path`, or throws naming why.
    ///
    /// The socket is kept only once connected: a class whose initializer throws after every
    /// property is set runs its `deinit`, which would close the descriptor a second time, and by
    /// then the number may belong to another test's pipe or socket (seen as EBADF in tests that
    /// ran beside a host being waited for).
    init(path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if status != 0 {
            let code = errno
            let reason = String(cString: strerror(code))
            close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO, userInfo: [NSLocalizedDescriptionKey: reason])
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Writes `line` and a newline.
    func send(line: String) {
        send(raw: line + "\n")
    }

    /// Writes `text` as it is, in one write: several lines, or part of one.
    func send(raw text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Sends a request; returns its id.
    @discardableResult
    func request(_ method: String, _ params: [String: Any]? = nil) -> Int {
        nextID += 1
        var message: [String: Any] = ["jsonrpc": "2.0", "id": nextID, "method": method]
        if let params { message["params"] = params }
        send(line: Self.text(message))
        return nextID
    }

    /// Sends a request and returns its response (`result` or `error` object), skipping
    /// notifications; nil when none came within `seconds`.
    func call(_ method: String, _ params: [String: Any]? = nil, within seconds: Double = 15) -> [String: Any]? {
        let id = request(method, params)
        return response(to: id, within: seconds)
    }

    /// The response to request `id`, skipping other messages.
    func response(to id: Int, within seconds: Double = 15) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(seconds)
        while let message = next(until: deadline) {
            if message["id"] as? Int == id { return message }
        }
        return nil
    }

    /// The next notification named `method` within `seconds`.
    func notification(_ method: String, within seconds: Double = 15) -> [String: Any]? {
        let deadline = Date().addingTimeInterval(seconds)
        while let message = next(until: deadline) {
            if message["method"] as? String == method { return message["params"] as? [String: Any] ?? [:] }
        }
        return nil
    }

    /// The next message before `deadline`; nil at the deadline or the end of the stream.
    func next(until deadline: Date) -> [String: Any]? {
        while let line = nextLine(until: deadline) {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] { return object }
            Issue.record("the host sent a line that is not a JSON object: \(line)")
        }
        return nil
    }

    /// The next line before `deadline`, without its newline; nil at the deadline or the end of
    /// the stream.
    func nextLine(until deadline: Date) -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Int32(remaining * 1000)) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(descriptor, &buffer, buffer.count)
            // A child process of another test ending (SIGCHLD) may interrupt the read.
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if count <= 0 { return nil }
            pending += buffer[..<count]
        }
    }

    /// True once the host has closed the connection (within `seconds`).
    func waitClosed(within seconds: Double = 15) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if count <= 0 { return true }
            pending += buffer[..<count]
        }
        return false
    }

    static func text(_ object: [String: Any]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }
}

/// A host started with `--listen` in its own runtime folder, and the way to reach it.
final class ListeningHost: @unchecked Sendable {
    // @unchecked: set up in init; the process object is itself thread-safe for these uses.
    let sandbox: Sandbox
    let runtime: String
    let process: CrescentProcess
    let name: String

    /// The folder hosts listen in: `XDG_RUNTIME_DIR/crescent`.
    var folder: String { runtime + "/crescent" }
    var socketPath: String { folder + "/" + name + ".sock" }
    var environment: [String: String?] { ["XDG_RUNTIME_DIR": runtime] }

    /// Starts `crescent OPTIONS --listen=NAME SCRIPT` (a path in the sandbox or the source tree)
    /// and waits for its socket.
    init(script: String, name: String, options: [String] = [], sandbox: Sandbox? = nil, runtime: String? = nil) async throws {
        self.sandbox = try sandbox ?? Sandbox()
        self.runtime = try runtime ?? self.sandbox.makeFolder("run")
        self.name = name
        process = CrescentProcess(options + ["--listen=\(name)", script], directory: self.sandbox.path,
                                  environment: ["XDG_RUNTIME_DIR": self.runtime])
        try process.start()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && process.isRunning {
            if (try? RemoteTestClient(path: socketPath)) != nil { return }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        Issue.record("the host never listened at \(socketPath): \(process.stderr)")
    }

    var pid: Int32 { process.pid }

    func client() throws -> RemoteTestClient { try RemoteTestClient(path: socketPath) }

    /// Runs a remote-control subcommand (`eval`, `send`, …) against this host's folder.
    func crescentCommand(_ arguments: [String]) async throws -> RunResult {
        try await crescent(arguments, in: sandbox, environment: environment, timeLimit: 30)
    }

    /// `crescent attach NAME` to this host on a terminal of its own (its history in the sandbox),
    /// once it has said it is attached.
    func attach() async throws -> InteractiveTerminal {
        let terminal = try InteractiveTerminal(["attach", name], directory: sandbox.path,
                                               environment: environment.merging(["CRESCENT_HISTORY": sandbox.path + "/history"]) { $1 })
        await terminal.waitFor(line: "Attached to \(name) (pid \(pid)")
        return terminal
    }

    /// Stops the host with SIGTERM and returns how it ended: it has 30 s from the signal. (The
    /// limit counted from the host's start: a test slowed past 30 s in the parallel phase had its
    /// host killed the moment it sent SIGTERM, reported as "did not exit within 30 s".)
    func stop() async -> RunResult {
        process.send(SIGTERM, expecting: .handled)
        return await process.finish(timeLimit: process.runningFor + 30)
    }

    /// The host's open file descriptors.
    var descriptorCount: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// A field of /proc/PID/status in kB (`VmRSS`, `VmHWM`).
    func memory(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return -1 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }
}
