import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// What keeps the geocoder from holding anyone up: a data file that is not a regular file is
/// refused instead of waited on, completion never loads or searches on the caller's thread for
/// long, and a single-point `reverse` does not wait behind searches.
@Suite struct GeocoderLoopTests {
    /// Starts `method` on `geocoder` and calls `answered` with its result, on the geocoder's thread.
    static func start(_ geocoder: GeocoderService, _ method: String, _ arguments: [Value],
                      _ answered: @escaping @Sendable (Result<Value, ServiceError>) -> Void) {
        guard case .replying(let body) = geocoder.interface.method(method)?.body else {
            Issue.record("\(method) is not a replying method")
            return
        }
        body(geocoder, Arguments(arguments), Reply { answered($0) })
    }

    /// The answer of `method`, or nil if none came within `seconds` (a call left waiting forever).
    static func answer(_ geocoder: GeocoderService, _ method: String, _ arguments: [Value],
                       within seconds: Double) async -> Result<Value, ServiceError>? {
        let once = Mutex(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, ServiceError>?, Never>) in
            let resume: @Sendable (Result<Value, ServiceError>?) -> Void = { result in
                if once.withLock({ done in defer { done = true }; return !done }) { continuation.resume(returning: result) }
            }
            start(geocoder, method, arguments) { resume($0) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { resume(nil) }
        }
    }

    /// A folder of the test's own with a FIFO in it.
    static func fifo() throws -> String {
        var template = Array("/tmp/crescent-geofifo-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ServiceError(.io, "mkdtemp failed") }
        let path = String(cString: made) + "/places.cgeo"
        guard mkfifo(path, 0o600) == 0 else { throw ServiceError(.io, "mkfifo failed") }
        return path
    }

    @Test func aDataFileThatIsNotARegularFileIsRefusedNamingIt() async throws {
        let fifo = try Self.fifo()
        defer { unlink(fifo); rmdir(String(fifo.dropLast("/places.cgeo".count))) }
        for path in [fifo, "/dev/null", "/tmp"] {
            let geocoder = GeocoderService(loader: GeoNamesLoader(path: path))
            for method in ["search", "reverse"] {
                let arguments: [Value] = method == "search" ? ["Paris"] : [["lat": 1, "lon": 2]]
                let result = await Self.answer(geocoder, method, arguments, within: 10)
                guard case .failure(let error) = result else {
                    Issue.record("\(method) over \(path): \(result.map { "\($0)" } ?? "no answer within 10 s")")
                    continue
                }
                #expect(error.code == .invalidData)
                #expect(error.message == "\(path) is not a regular file (a FIFO, device or folder): name a regular file")
            }
            #expect(geocoder.completions(method: "search", argument: 1, prefix: "Mün", limit: 20).isEmpty)
        }
    }

    @Test func aDamagedDataFileIsNamedInItsError() throws {
        var template = Array("/tmp/crescent-geodata-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        #expect(descriptor >= 0)
        let path = String(cString: template)
        defer { unlink(path) }
        let bytes = try FileBytes.read(GeoNamesLoader.locate())
        let half = Array(bytes.prefix(bytes.count / 2))
        #expect(half.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == half.count)
        close(descriptor)
        #expect(throws: ServiceError(.invalidData, "\(path): the geocoder data file is damaged (its checksum does not match its contents): "
                                     + "reinstall Crescent, or rebuild the file with tools/fetch-geonames.sh")) {
            try GeoNamesLoader.load(path: path)
        }
    }

    /// Tab is answered on the host's loop: the first one of a run, which loads the data and folds
    /// every name (seconds in a debug build), must not hold the loop while it does.
    @Test func completionDoesNotHoldTheCallerWhileTheDataLoads() async throws {
        let geocoder = GeocoderService(loader: GeoNamesLoader(path: try GeoNamesLoader.locate()))
        let clock = ContinuousClock()
        let started = clock.now
        let first = geocoder.completions(method: "search", argument: 1, prefix: "Mün", limit: 20)
        let waited = clock.now - started
        #expect(waited < .milliseconds(1000), "the first Tab waited \(waited)")
        var offered = first
        let deadline = clock.now + .seconds(120)
        while offered.isEmpty && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            offered = geocoder.completions(method: "search", argument: 1, prefix: "Mün", limit: 20)
        }
        #expect(offered.first == "Munich", "a later Tab offers the names: \(offered)")
    }

    @Test func aSingleReverseDoesNotWaitBehindSearches() async throws {
        let geocoder = GeocoderService(loader: GeoNamesLoader(path: try GeoNamesLoader.locate()))
        // Loaded, and the names folded, first.
        _ = await Self.answer(geocoder, "search", ["Paris"], within: 120)
        let searches = 4
        let answered = Mutex(0)
        for _ in 0..<searches {
            Self.start(geocoder, "search", ["a", ["limit": 1000]]) { _ in answered.withLock { $0 += 1 } }
        }
        let result = await Self.answer(geocoder, "reverse", [["lat": 48.8566, "lon": 2.3522]], within: 120)
        let before = answered.withLock { $0 }
        guard case .success(.array(let placemarks)) = result else {
            Issue.record("reverse: \(String(describing: result))")
            return
        }
        #expect(placemarks.count == 1)
        #expect(before < searches, "the reverse waited for all \(searches) searches")
        // The searches still answer, each once.
        let deadline = ContinuousClock.now + .seconds(120)
        while answered.withLock({ $0 }) < searches && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(answered.withLock { $0 } == searches)
    }
}
