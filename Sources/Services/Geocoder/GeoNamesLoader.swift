import Dispatch
import Glibc
public import Model
import Synchronization

/// Loads the geocoder's data file once, on first use, and hands every caller the same database.
///
/// The load runs on a Dispatch thread, off the host loop and off the threads Swift tasks share;
/// callers that arrive while it runs wait for it. A failed load is reported to every
/// caller and tried again on the next call.
///
/// ```swift
/// let database = try await GeoNamesLoader.bundled.database()
/// ```
public final class GeoNamesLoader: Sendable {
    /// The data file shipped with Crescent (`cities1000.cgeo`), shared by every geocoder.
    public static let bundled = GeoNamesLoader(path: nil)

    /// The name of the data file among the Services resources.
    static let fileName = "cities1000.cgeo"
    /// Overrides where the data file is read from.
    static let environmentVariable = "CRESCENT_GEOCODER_DATA"

    private enum State {
        case idle
        case loading(Task<GeoNamesDatabase, any Error>)
        case loaded(GeoNamesDatabase)
    }

    private let path: String?
    private let state = Mutex(State.idle)

    /// A loader for the data file at `path`, or for the shipped one when nil.
    public init(path: String?) {
        self.path = path
    }

    /// The database, loading it first if this is the first call.
    public func database() async throws(ServiceError) -> GeoNamesDatabase {
        enum Next {
            case ready(GeoNamesDatabase)
            case wait(Task<GeoNamesDatabase, any Error>)
        }
        let next: Next = state.withLock { state in
            switch state {
            case .loaded(let database):
                return .ready(database)
            case .loading(let task):
                return .wait(task)
            case .idle:
                let path = self.path
                let task = Task<GeoNamesDatabase, any Error> { try await Self.loadOnDispatch(path: path) }
                state = .loading(task)
                return .wait(task)
            }
        }
        let task: Task<GeoNamesDatabase, any Error>
        switch next {
        case .ready(let database): return database
        case .wait(let loading): task = loading
        }
        do {
            let database = try await task.value
            state.withLock { $0 = .loaded(database) }
            return database
        } catch {
            state.withLock { state in
                if case .loading = state { state = .idle }
            }
            throw error as? ServiceError ?? ServiceError(.internal, "loading the geocoder data failed: \(error)")
        }
    }

    /// ``load(path:)`` on a Dispatch thread: reading the file blocks, and decoding takes a while
    /// in a debug build, which should not hold one of the few threads Swift tasks share.
    private static func loadOnDispatch(path: String?) async throws -> GeoNamesDatabase {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    continuation.resume(returning: try load(path: path))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Reads and decodes the data file at `path` (or the shipped one), synchronously.
    public static func load(path: String? = nil) throws(ServiceError) -> GeoNamesDatabase {
        let file: String
        if let path { file = path } else { file = try locate() }
        return try GeoNamesDatabase(bytes: try FileBytes.read(file))
    }

    /// Where the shipped data file is: `$CRESCENT_GEOCODER_DATA`, else the Services resources next
    /// to the running executable (where SwiftPM puts them), else the source tree it was built from.
    static func locate() throws(ServiceError) -> String {
        if let value = getenv(environmentVariable), value.pointee != 0 { return String(cString: value) }
        var candidates: [String] = []
        if let directory = executableDirectory() {
            candidates.append("\(directory)/Crescent_Services.resources/\(fileName)")
            candidates.append("\(directory)/Crescent_Services.resources/Resources/\(fileName)")
        }
        let source = "\(#filePath)"
        if let slash = source.lastIndex(of: "/") { candidates.append("\(source[..<slash])/Resources/\(fileName)") }
        if let found = candidates.first(where: { access($0, R_OK) == 0 }) { return found }
        throw ServiceError(.unavailable, "the geocoder data file \(fileName) was not found (looked in \(candidates.joined(separator: ", ")); set \(environmentVariable))")
    }

    private static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}
