import ChildTestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A throwaway PostgreSQL cluster for the tests and the bench: `initdb` in a temporary folder,
/// a server on a free loopback port (and a socket in that folder), stopped when the process
/// exits. One per process, shared by the suites; each test makes its own database.
///
/// Run as root, the server runs as the `postgres` user (`runuser`), since PostgreSQL refuses
/// root. Connections over TCP need the password; over the socket they are trusted.
///
/// ```swift
/// let cluster = try PostgresCluster.shared()
/// let url = try cluster.makeDatabase()      // postgres://crescent:...@127.0.0.1:PORT/test_1
/// ```
public final class PostgresCluster: Sendable {
    public let folder: String
    public let port: Int
    public let user = "crescent"
    public let password = "crescent-test-secret"
    private let binaries: String
    private let counter = Counter()

    /// The process's cluster, started on first use; an error says why there is none (no
    /// PostgreSQL installed: `tools/setup.sh` installs it).
    public static func shared() throws -> PostgresCluster {
        try sharedCluster.get()
    }

    private static let sharedCluster: Result<PostgresCluster, any Error> = Result { try PostgresCluster() }

    /// A cluster of the caller's own, for a test that stops and restarts its server (which the
    /// shared one must not do under other tests).
    public static func makeOwn() throws -> PostgresCluster {
        try PostgresCluster()
    }

    /// The folder holding `initdb` and `pg_ctl`, or nil when PostgreSQL is not installed.
    public static var binaryFolder: String? {
        var candidates: [String] = []
        if let versions = try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql") {
            candidates += versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "/usr/lib/postgresql/\($0)/bin" }
        }
        candidates += (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") && FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl") }
    }

    private init() throws {
        guard let binaries = Self.binaryFolder else {
            throw ClusterError("PostgreSQL is not installed (no initdb/pg_ctl): run tools/setup.sh")
        }
        self.binaries = binaries
        var template = Array((FileManager.default.temporaryDirectory.path + "/crescent-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ClusterError("cannot make a temporary folder") }
        folder = String(cString: made)
        port = try Self.freePort()
        if geteuid() == 0 {
            guard let account = getpwnam("postgres") else { throw ClusterError("running as root, but there is no postgres user to run the server") }
            chown(folder, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        chmod(folder, 0o700)
        try password.write(toFile: folder + "/password", atomically: true, encoding: .utf8)
        if geteuid() == 0, let account = getpwnam("postgres") { chown(folder + "/password", account.pointee.pw_uid, account.pointee.pw_gid) }
        try runAsServer(binaries + "/initdb", ["-D", folder + "/data", "-U", user, "--pwfile=" + folder + "/password",
                                               "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync"])
        let first = startedClusters.withLock { clusters in
            clusters.append((folder, binaries))
            return clusters.count == 1
        }
        if first { atexit { stopClustersAtExit() } }
        try start()
    }

    /// Starts the server (again, after ``stop()``), waiting until it accepts connections.
    public func start() throws {
        try runAsServer(binaries + "/pg_ctl", ["-D", folder + "/data", "-l", folder + "/server.log", "-w", "-t", "120", "-o",
                                               "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
                                               "start"])
    }

    /// Stops the server at once (`-m immediate` when `fast` is false: like a crash).
    public func stop(fast: Bool = true) throws {
        try runAsServer(binaries + "/pg_ctl", ["-D", folder + "/data", "-w", "-m", fast ? "fast" : "immediate", "stop"])
    }

    /// A new empty database; its URL with the password, over TCP.
    public func makeDatabase(_ prefix: String = "test") throws -> String {
        let name = "\(prefix)_\(getpid())_\(counter.next())"
        try run(binaries + "/psql", ["-h", folder, "-p", "\(port)", "-U", user, "-d", "postgres", "-v", "ON_ERROR_STOP=1",
                                     "-q", "-c", "CREATE DATABASE \(name)"])
        return url(database: name)
    }

    /// The URL of `database` with `password` (the right one unless given).
    public func url(database: String, password: String? = nil) -> String {
        "postgres://\(user):\(password ?? self.password)@127.0.0.1:\(port)/\(database)"
    }

    /// The URL of `database` over the Unix socket.
    public func socketURL(database: String) -> String {
        "postgres://\(user)@/\(database)?host=\(folder)&port=\(port)"
    }

    /// Runs SQL in `database` through psql over the socket; its output.
    @discardableResult
    public func sql(_ database: String, _ statement: String) throws -> String {
        try run(binaries + "/psql", ["-h", folder, "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1",
                                     "-q", "-A", "-t", "-c", statement])
    }

    /// Runs a server program; its output goes to a file, since the server it starts would
    /// keep a pipe open.
    private func runAsServer(_ program: String, _ arguments: [String]) throws {
        if geteuid() == 0 {
            try run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments, toFile: true)
        } else {
            try run(program, arguments, toFile: true)
        }
    }

    /// Runs `program` with posix_spawn, its output in a file (a server it starts would keep a
    /// pipe open), and waits for it; its output, or an error with it when it fails.
    @discardableResult
    private func run(_ program: String, _ arguments: [String], toFile: Bool = false) throws -> String {
        let logPath = folder + "/command-\(counter.next()).log"
        defer { unlink(logPath) }
        // From the root folder: the server's user may not read the current one.
        let child: TestChild
        do {
            child = try TestChild("/usr/bin/env", ["-C", "/", program] + arguments, stdout: .file(logPath), stderr: .descriptor(1))
        } catch {
            throw ClusterError("\(error)")
        }
        let ending = child.waitUntilEnded()
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        guard ending == .exited(0) else {
            throw ClusterError("\((program as NSString).lastPathComponent) failed (\(ending)): \(text)")
        }
        return text
    }

    /// A loopback port nobody listens on now.
    public static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ClusterError("socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw ClusterError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why there is no cluster.
public struct ClusterError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

private final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}

/// The clusters this process started: (folder, binaries).
private let startedClusters = Mutex<[(String, String)]>([])

/// Stops the clusters and removes their folders when the process exits.
private func stopClustersAtExit() {
    for (folder, binaries) in startedClusters.withLock({ $0 }) {
        let process = Process()
        let command = [binaries + "/pg_ctl", "-D", folder + "/data", "-w", "-m", "immediate", "stop"]
        process.executableURL = URL(fileURLWithPath: geteuid() == 0 ? "/usr/sbin/runuser" : command[0])
        process.arguments = geteuid() == 0 ? ["-u", "postgres", "--"] + command : Array(command.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
