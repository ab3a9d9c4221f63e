package import Model
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the store keeps its database and how it writes: the `[store]` section of
/// `crescent.toml` and `--data-dir`.
///
/// ```toml
/// [store]
/// path = "~/notes/store.sqlite"   # default: <data folder>/store.sqlite; ":memory:" for a throwaway store
/// url = "postgres://me:secret@db.example:5432/notes?sslmode=require"   # or "sqlite:PATH", or a path
/// keep_changes = 604800           # PostgreSQL: seconds the change log is kept (default 7 days)
/// synchronous = "full"            # "normal" (default) or "full"
/// poll_interval = 0.25            # seconds between checks for other processes' writes
/// write_on_loop = true            # false: every add/update/remove/clear waits for the writer queue
/// ```
///
/// `url` (else the `CRESCENT_STORE_URL` environment variable) chooses the backend: a path or
/// `sqlite:PATH` is the SQLite file (as `path`), `postgres://...` a PostgreSQL database shared by
/// several hosts (see ``PostgresURL``); the session and the feeds then stay in the SQLite file
/// under the data folder.
///
/// The data folder is `--data-dir`, else `$XDG_DATA_HOME/crescent`, else
/// `~/.local/share/crescent`; `--data-dir :memory:` makes every store of the run a throwaway
/// in-memory one.
///
/// - `synchronous = "normal"` (SQLite's recommendation for WAL): a committed write survives the
///   process crashing or being killed; after a power loss the last commits may roll back.
///   `"full"` syncs the log on every commit, surviving power loss too, at a cost per write.
/// - `write_on_loop` (default true): a small write (at most 64 rows) runs right on the host's
///   loop when nothing can make it wait: no write queued before it, the writer idle, SQLite's
///   write lock free (it never waits for another process), nothing new from other processes
///   to read first, and `synchronous = "normal"` (a commit does not sync the disk). It then costs
///   no thread hop, about what SQLite itself costs (the `store-add` bench row). Any other write
///   is queued on the store's writer queue and answers from there, so a slow disk, a large batch
///   or another process holding the database never stalls scripts; `false` sends every write
///   there. Either way a success means committed, and writes commit in the order they were made.
///   `find` always runs off the loop; `get` and `page` answer on it, from memory.
package struct StoreSettings: Sendable {
    /// Where the database lives.
    enum Location: Sendable, Equatable {
        /// A private in-memory database, gone at exit.
        case memory
        /// A database file (created with its folders on first use).
        case file(String)
    }

    /// How hard SQLite works to make each commit durable.
    enum Synchronous: String, Sendable {
        case normal = "NORMAL"
        case full = "FULL"
    }

    var location: Location
    /// The PostgreSQL database holding the records, when not SQLite.
    var postgres: PostgresURL?
    /// Seconds a PostgreSQL store keeps its change log: a host away longer reloads.
    var keepChanges: Double = 7 * 86_400
    var synchronous: Synchronous = .normal
    /// Nanoseconds between checks of `PRAGMA data_version` for other processes' writes.
    var pollInterval: UInt64 = 250_000_000
    /// Let small writes that cannot wait run on the host's loop.
    var writesOnLoop = true

    static let fileName = "store.sqlite"
    static let memoryName = ":memory:"

    init(location: Location, synchronous: Synchronous = .normal, pollInterval: UInt64 = 250_000_000, writesOnLoop: Bool = true) {
        self.location = location
        self.synchronous = synchronous
        self.pollInterval = pollInterval
        self.writesOnLoop = writesOnLoop
    }

    /// The settings from the `[store]` section and the data folder of `context`.
    init(_ context: PluginContext) throws(ServiceError) {
        let section = context.section("store")
        var url: String?
        if let text = section["url"].stringValue {
            guard section["path"].isNull else {
                throw ServiceError(.invalidArgument, "[store] has both path and url: keep one")
            }
            guard !text.utf8.contains(0) else { throw ServiceError(.invalidArgument, "[store] url must not contain a NUL character (\\0)") }
            url = text
        } else if !section["url"].isNull {
            throw ServiceError(.invalidArgument, "[store] url must be a string, got \(section["url"].typeName)")
        } else if section["path"].isNull {
            url = Self.environment("CRESCENT_STORE_URL")
        }
        var pathSetting = section["path"]
        if let url {
            if PostgresURL.isPostgres(url) {
                postgres = try PostgresURL(url, defaultUser: Self.environment("USER") ?? "postgres")
            } else if let scheme = Self.scheme(of: url) {
                // A path holding "://" is almost always a misspelled scheme: as a path it would
                // quietly make a new SQLite file in folders named after the URL.
                let schemes = ["postgres", "postgresql", "sqlite"]
                let closest = NameSuggestion.closest(to: scheme, among: schemes).map { $0 == "sqlite" ? "sqlite:" : "\($0)://" }
                throw ServiceError(.invalidArgument, "[store] url has the unknown scheme '\(scheme)://': use postgres://user:password@host:port/database "
                                   + "for PostgreSQL, or sqlite:PATH (or a plain path) for SQLite"
                                   + (closest.map { "; did you mean '\($0)'?" } ?? ""))
            } else {
                let file = url.hasPrefix("sqlite:") ? String(url.dropFirst("sqlite:".count)) : url
                guard !file.isEmpty else { throw ServiceError(.invalidArgument, "[store] url names no file: use sqlite:PATH") }
                pathSetting = .string(file)
            }
        }
        let path = pathSetting.stringValue
        if let path {
            guard !path.isEmpty else { throw ServiceError(.invalidArgument, "[store] path must not be empty") }
            // The file system would cut the path there.
            guard !path.utf8.contains(0) else { throw ServiceError(.invalidArgument, "[store] path must not contain a NUL character (\\0)") }
        } else if !pathSetting.isNull {
            throw ServiceError(.invalidArgument, "[store] path must be a string, got \(pathSetting.typeName)")
        }
        if context.dataDirectory == Self.memoryName {
            // `--data-dir :memory:` on the command line wins over the configuration.
            location = .memory
        } else if let path {
            location = path == Self.memoryName ? .memory : .file(Self.expandingTilde(path))
        } else {
            let folder: String
            if let given = context.dataDirectory {
                folder = Self.expandingTilde(given)
            } else {
                folder = try Self.defaultDataFolder()
            }
            location = .file(folder + (folder.hasSuffix("/") ? "" : "/") + Self.fileName)
        }
        switch section["synchronous"] {
        case .null: break
        case .string(let word):
            guard let mode = Synchronous(rawValue: word.uppercased()) else {
                throw ServiceError(.invalidArgument, "[store] synchronous must be \"normal\" or \"full\", got \"\(word)\"")
            }
            synchronous = mode
        case let other:
            throw ServiceError(.invalidArgument, "[store] synchronous must be a string, got \(other.typeName)")
        }
        if !section["poll_interval"].isNull {
            guard let seconds = section["poll_interval"].doubleValue, seconds >= 0.01, seconds <= 60 else {
                throw ServiceError(.invalidArgument, "[store] poll_interval must be a number of seconds in [0.01, 60]")
            }
            pollInterval = UInt64(seconds * 1e9)
        }
        if !section["keep_changes"].isNull {
            guard let seconds = section["keep_changes"].doubleValue, seconds >= 0 else {
                throw ServiceError(.invalidArgument, "[store] keep_changes must be a number of seconds >= 0, got \(section["keep_changes"].typeName)")
            }
            keepChanges = seconds
        }
        if !section["write_on_loop"].isNull {
            guard let flag = section["write_on_loop"].boolValue else {
                throw ServiceError(.invalidArgument, "[store] write_on_loop must be true or false, got \(section["write_on_loop"].typeName)")
            }
            writesOnLoop = flag
        }
    }

    /// The scheme of a `scheme://...` URL (`postgress` for `postgress://x@host/db`), nil for a path.
    static func scheme(of url: String) -> String? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        return String(url[..<colon])
    }

    /// `$XDG_DATA_HOME/crescent`, else `$HOME/.local/share/crescent`.
    package static func defaultDataFolder() throws(ServiceError) -> String {
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/crescent" }
        guard let home = environment("HOME"), !home.isEmpty else {
            throw ServiceError(.io, "cannot find a data folder for the store: HOME is not set (use --data-dir DIR)")
        }
        return home + "/.local/share/crescent"
    }

    /// `~/x` with the home folder spelled out.
    static func expandingTilde(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/"), let home = environment("HOME") else { return path }
        return home + path.dropFirst()
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
