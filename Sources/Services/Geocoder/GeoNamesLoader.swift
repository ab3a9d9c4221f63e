import Dispatch
import Glibc
public import Model
import Synchronization

/// Loads the geocoder's data file once, on first use, and hands every caller the same database.
///
/// ``loadedDatabase()`` loads on the calling thread (callers that arrive meanwhile wait for the
/// same load); ``database()`` does the same on a Dispatch thread, off the host loop and off the
/// threads Swift tasks share. A failed load is reported to every caller waiting for it and tried
/// again on the next call.
///
/// ```swift
/// let database = try await GeoNamesLoader.bundled.database()
/// ```
public final class GeoNamesLoader: Sendable {
    /// The data file shipped with Crescent (`places.cgeo`), shared by every geocoder.
    public static let bundled = GeoNamesLoader(path: nil)

    /// The name of the data file among the Services resources.
    static let fileName = "places.cgeo"
    /// Overrides where the data file is read from.
    static let environmentVariable = "CRESCENT_GEOCODER_DATA"

    private let path: String?
    /// The database once loaded; the lock is held while loading, so later callers wait for it.
    private let loaded = Mutex<GeoNamesDatabase?>(nil)

    /// A loader for the data file at `path`, or for the shipped one when nil.
    public init(path: String?) {
        self.path = path
    }

    /// The database, loading it on this thread first if this is the first call.
    public func loadedDatabase() throws(ServiceError) -> GeoNamesDatabase {
        try loaded.withLock { (database: inout GeoNamesDatabase?) throws(ServiceError) -> GeoNamesDatabase in
            if let database { return database }
            let made = try Self.load(path: path)
            database = made
            return made
        }
    }

    /// The database, loading it on a Dispatch thread first if this is the first call: reading the
    /// file blocks, and decoding takes a while in a debug build, which should not hold one of the
    /// few threads Swift tasks share.
    public func database() async throws(ServiceError) -> GeoNamesDatabase {
        if let database = loaded.withLock({ $0 }) { return database }
        let result: Result<GeoNamesDatabase, ServiceError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: Result { () throws(ServiceError) in try self.loadedDatabase() })
            }
        }
        return try result.get()
    }

    /// The largest data file read (the shipped one is under 8 MB): a wrong file named by
    /// `$CRESCENT_GEOCODER_DATA` is refused before it is read whole.
    static let maximumFileBytes = 256 << 20

    /// Reads and decodes the data file at `path` (or the shipped one), synchronously.
    ///
    /// - Throws: `unavailable` when there is no such file, `invalid_data` naming the file when it
    ///   is not a regular file, is too big or is damaged.
    public static func load(path: String? = nil) throws(ServiceError) -> GeoNamesDatabase {
        let file: String
        if let path { file = path } else { file = try locate() }
        let bytes = try FileBytes.read(file, maximumBytes: maximumFileBytes)
        do {
            return try GeoNamesDatabase(bytes: bytes)
        } catch {
            throw ServiceError(error.code, "\(file): \(error.message)")
        }
    }

    /// Where the shipped data file is: `$CRESCENT_GEOCODER_DATA`, else the Services resources next
    /// to the running executable (where SwiftPM puts them), else `../share/crescent` beside it (where
    /// `make install` puts them), else the source tree it was built from.
    static func locate() throws(ServiceError) -> String {
        if let value = getenv(environmentVariable), value.pointee != 0 { return String(cString: value) }
        var candidates: [String] = []
        let directory = executableDirectory()
        if let directory {
            candidates.append("\(directory)/Crescent_Services.resources/\(fileName)")
            candidates.append("\(directory)/Crescent_Services.resources/Resources/\(fileName)")
            // `make install`: PREFIX/bin/crescent and PREFIX/share/crescent/.
            candidates.append("\(directory)/../share/crescent/\(fileName)")
        }
        // A binary built in the source tree (tests, tools) reads the tree's copy; an installed one
        // never does, so an install that lost its data says so.
        let source = "\(#filePath)"
        let root = source.firstRange(of: "/Sources/").map { String(source[..<$0.lowerBound]) } ?? source
        if let slash = source.lastIndex(of: "/"), directory?.hasPrefix(root) ?? true {
            candidates.append("\(source[..<slash])/Resources/\(fileName)")
        }
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
