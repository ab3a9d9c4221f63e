import CrescentKit
import Dispatch
import Foundation
import HTTPTestServer
import Model
import NIOCore
import NIOPosix
import Services
import Synchronization

/// The row of the http service: GETs of a small body from a local server, 50 in flight,
/// issued by a Lua script as scripts use the service, against curl's parallel mode fetching the
/// same URLs in one process, measured in the same run against the same server.
///
/// The server is NIO's HTTP/1.1 server (``HTTPTestServer``) on 127.0.0.1, on an event loop of its
/// own; both clients keep their connections alive. Both sides are whole processes timed from
/// launch to exit: the `crescent` binary running a Lua script in which each completion issues
/// the next request, so 50 stay in flight, and curl.
enum HTTPRows {
    static let count = 10_000
    static let inFlight = 50
    /// The body every request gets: a small text, as a status endpoint answers.
    static let body = Array("hello from crescent-bench\n".utf8)

    // MARK: http-get

    /// Requests per second, best of 5 rounds of each side.
    static func get() throws(BenchFailure) -> BenchRow {
        let row = "http-get"
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? serverGroup.syncShutdownGracefully() }
        let server = try blocking(row: row) {
            try await HTTPTestServer.start(group: serverGroup, recordsRequests: false) { _ in .respond(status: 200, body: body) }
        }
        defer { _ = try? blocking(row: row) { await server.stop() } }
        let folder = try BenchFolder(row: row)
        let urls = (1...count).map { "\(server.baseURL)/item/\($0)" }
        try folder.write("urls.curl", urls.map { "url = \"\($0)\"\noutput = \"/dev/null\"\n" }.joined(), row: row)

        // Best of 5 each, interleaved: other work on a small machine slows either side for a while.
        var ours: [Double] = [], curl: [Double] = []
        for _ in 0..<5 {
            ours.append(try scriptGets(row: row, base: server.baseURL, folder: folder))
            curl.append(try curlGets(row: row, config: folder.path + "/urls.curl"))
        }
        return BenchRow(name: row, value: ours.max() ?? .nan, baseline: curl.max() ?? .nan, unit: "req/s", goal: .ratioAtLeast(1.0),
                        note: "\(count) GETs of a \(body.count)-byte body, \(inFlight) in flight, from a Lua script through services.http "
                            + "(AsyncHTTPClient, keep-alive, up to \(HTTPService.defaultConnectionsPerHost) connections per host) run by the crescent binary, "
                            + "launch to exit, best of 5; "
                            + "baseline: curl --parallel --parallel-max \(inFlight) -K (the same \(count) URLs) in one process, best of 5; "
                            + "one NIO HTTP/1.1 server on 127.0.0.1 for both")
    }

    /// Requests per second for `count` GETs issued by a Lua script run by the `crescent` binary,
    /// timed from launch to exit as curl is (proxies unset, as curl is told `--noproxy`).
    private static func scriptGets(row: String, base: String, folder: BenchFolder) throws(BenchFailure) -> Double {
        let source = """
            local http, base, count, inFlight = services.http, arg[1] .. "/item/", \(count), \(inFlight)
            -- Each completion issues the next GET, so `inFlight` stay in flight until `count` are done.
            local issued = 0
            local function issue()
              issued = issued + 1
              http:get(base .. issued, function(response, err)
                if err then error(tostring(err)) end
                assert(response.status == 200 and #response.body == \(body.count))
                if issued < count then issue() end
              end)
            end
            for _ = 1, inFlight do issue() end
            """
        try folder.write("gets.lua", source, row: row)
        let proxies = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"].flatMap { ["-u", $0] }
        let milliseconds = try StartupBench.milliseconds(running: ["/usr/bin/env"] + proxies + [try StartupBench.crescentPath(), folder.path + "/gets.lua", base])
        return Double(count) / (milliseconds / 1e3)
    }

    /// Requests per second for curl fetching the URLs of `config`, timed from launch to exit.
    private static func curlGets(row: String, config: String) throws(BenchFailure) -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "--parallel", "--parallel-max", String(inFlight), "--noproxy", "*",
                             "--no-progress-meter", "--fail", "-K", config]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let started = MonotonicClock.nanoseconds()
        do {
            try process.run()
        } catch {
            throw BenchFailure(row: row, reason: "cannot run curl (tools/setup.sh installs it): \(error)")
        }
        process.waitUntilExit()
        let elapsed = Double(MonotonicClock.nanoseconds() - started)
        guard process.terminationStatus == 0 else {
            throw BenchFailure(row: row, reason: "curl failed with status \(process.terminationStatus)")
        }
        return Double(count) / (elapsed / 1e9)
    }

    /// Runs `body` in a Swift task and waits for it (the bench's rows are synchronous).
    private static func blocking<Result: Sendable>(row: String, _ body: @escaping @Sendable () async throws -> Result) throws(BenchFailure) -> Result {
        let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Task {
            do {
                let value = try await body()
                outcome.withLock { $0 = .success(value) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            finished.signal()
        }
        finished.wait()
        switch outcome.withLock({ $0 }) {
        case .success(let value): return value
        case .failure(let error): throw BenchFailure(row: row, reason: "\(error)")
        case nil: throw BenchFailure(row: row, reason: "the task ended without a result")
        }
    }
}
