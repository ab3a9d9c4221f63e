import Foundation
import Glibc
import HTTPTestServer
import Model
@testable import Services
import Synchronization
import Testing

/// The gpsd provider against the real gpsd: gpsfake replays an NMEA log the test writes (a route
/// through five towns) on a free loopback port. Debian's gpsd and gpsd-clients are installed by
/// `make test` (tools/setup.sh).
@Suite(.serialized) struct GpsdTests {
    static let quickBackoff = Backoff(initial: .milliseconds(100), maximum: .milliseconds(400))

    @Test func fixesArriveInOrderTheGeocoderNamesTheTownsAndARestartRecovers() async throws {
        let folder = try ScratchFolder()
        let log = try folder.write("route.nmea", NMEAWriter.routeLog(warmUp: 40, perTown: 3))
        let port = try LoopbackPort.free()
        let fake = try GpsFake(log: log, port: port, folder: folder)
        defer { fake.stop() }
        try #require(await fake.waitUntilListening(), "gpsfake: \(fake.output)")

        let service = LocationService(provider: GpsdProvider(host: "127.0.0.1", port: port, backoff: Self.quickBackoff), clock: SystemClock.shared)
        let events = ModelEvents(service)
        service.startUpdates(shares: [.null])
        defer { service.stopUpdates() }
        let caen = NMEAWriter.route[4]
        let arrived = await events.wait(seconds: 30) { $0.fixes.contains { abs(($0["lon"].doubleValue ?? 0) - caen.longitude) < 1e-6 } }
        #expect(arrived, "fixes: \(events.fixes.count), failures: \(events.failures), gpsfake: \(fake.output)")
        try #require(arrived)

        // In order, each one a point of the log, all from gpsd.
        let fixes = events.fixes
        let times = fixes.compactMap { $0["time"].doubleValue }
        #expect(times == times.sorted(), "gpsd may repeat a time once, with the 3D fix after the 2D one")
        #expect(fixes.allSatisfy { $0["provider"] == "gpsd" })
        let altitudes = fixes.compactMap { $0["altitude"].doubleValue }
        #expect(altitudes.count >= 5 && altitudes.allSatisfy { $0 == 35 }, "3D fixes carry the log's altitude: \(altitudes)")
        #expect(events.failures.isEmpty, "gpsd was there from the start")
        let towns = fixes.compactMap { fix in
            NMEAWriter.route.firstIndex { abs($0.latitude - (fix["lat"].doubleValue ?? 0)) < 1e-4 && abs($0.longitude - (fix["lon"].doubleValue ?? 0)) < 1e-4 }
        }
        #expect(towns.count == fixes.count)
        #expect(towns == towns.sorted())

        // The geocoder names the towns the route went through.
        let geocoder = GeocoderService()
        var names: [String] = []
        for fix in fixes {
            let place = try await geocoder.reverse(GeoPoint(value: fix)).first?.name ?? "?"
            if names.last != place { names.append(place) }
        }
        #expect(names == NMEAWriter.route.map(\.name))

        // gpsd goes away: one didFail (unavailable); it comes back on the same port: fixes again.
        fake.stop()
        #expect(await events.wait(seconds: 15) { $0.failures == ["unavailable"] }, "\(events.payloads("didFail"))")
        let before = events.fixes.count
        let again = try GpsFake(log: log, port: port, folder: folder)
        defer { again.stop() }
        let recovered = await events.wait(seconds: 30) { $0.fixes.count > before + 3 }
        #expect(recovered, "gpsfake: \(again.output)")
        #expect(events.failures == ["unavailable"], "one report per outage: \(events.payloads("didFail"))")

        #expect(service.location.value["provider"] == "gpsd")
    }

    @Test func tpvReportsBecomeFixes() throws {
        let line = #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2024-06-15T12:00:11.000Z","ept":0.005,"lat":48.9666,"lon":2.3522,"altHAE":82.0,"altMSL":35.0,"alt":35.0,"track":90.0,"speed":5.144,"eph":4.5,"epx":3.1,"epy":4.0}"#
        let fix = try #require((try? Value(jsonText: line)).flatMap(GpsdProvider.fix(from:)))
        #expect(fix == LocationFix(latitude: 48.9666, longitude: 2.3522, altitude: 35, speed: 5.144, course: 90,
                                   accuracy: 4.5, time: NMEAWriter.baseTime + 11, provider: "gpsd"))
        let twoD = #"{"class":"TPV","mode":2,"time":"2024-06-15T12:00:00Z","lat":-1.5,"lon":30,"altHAE":12,"epx":3.1,"epy":4.0}"#
        let flat = try #require((try? Value(jsonText: twoD)).flatMap(GpsdProvider.fix(from:)))
        #expect(flat.altitude == nil && flat.accuracy == 4.0 && flat.latitude == -1.5 && flat.longitude == 30)
        for ignored in [#"{"class":"TPV","mode":1}"#, #"{"class":"TPV","mode":3,"lat":1,"lon":2}"#, #"{"class":"SKY","lat":1,"lon":2,"mode":3}"#, #"{"class":"VERSION"}"#, "not json", #"{"class":"TPV""#] {
            #expect((try? Value(jsonText: ignored)).flatMap(GpsdProvider.fix(from:)) == nil)
        }
    }
}

/// `gpsfake` replaying a log once on a loopback port, in its own process group (with gpsd) under
/// `timeout`, so ``stop()`` (or, if the tests die, the timeout) ends them all.
final class GpsFake: Sendable {
    let pid: pid_t
    let port: Int
    private let stopped = Atomic<Bool>(false)
    private let logPath: String

    init(log: String, port: Int, folder: ScratchFolder) throws {
        guard access("/usr/bin/gpsfake", X_OK) == 0, access("/usr/sbin/gpsd", X_OK) == 0 else {
            throw ServiceError(.unavailable, "gpsfake or gpsd is not installed (make test installs gpsd and gpsd-clients)")
        }
        self.port = port
        logPath = "\(folder.path)/gpsfake-\(port)-\(UInt32.random(in: 0...UInt32.max)).log"
        let arguments = ["timeout", "-k", "5", "120", "gpsfake", "-q", "-1", "-c", "0.05", "-P", "\(port)", log]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let path = "/usr/sbin:/usr/bin:/sbin:/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
        let environment = ["PATH=\(path)", "HOME=\(folder.path)"]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child = pid_t()
        let status = posix_spawnp(&child, "timeout", &actions, &attributes, argv, envp)
        guard status == 0 else { throw ServiceError(.io, "cannot start gpsfake: \(String(cString: strerror(status)))") }
        pid = child
    }

    /// Waits (at most 10 s) until gpsd accepts connections on the port; true when it does.
    func waitUntilListening() async -> Bool {
        for _ in 0..<200 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// What gpsfake printed.
    var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Ends gpsfake and its gpsd (the whole process group): SIGTERM, then SIGKILL after 2 s.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        kill(-pid, SIGTERM)
        for _ in 0..<40 {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                kill(-pid, SIGKILL)   // anything of the group still there (gpsd)
                return
            }
            usleep(50_000)
        }
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
