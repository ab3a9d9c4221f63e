import GRDB
import Model

extension StoreDatabase {
    /// Reads with `body` on a read-only connection of its own that never waits for a lock, for
    /// the loop when the pool cannot open or answer at once (another process holds the write
    /// lock the open needs, or writes are queued): in WAL mode a reader sees every committed
    /// transaction while another process writes. Nil when even that would wait (SQLite's rare
    /// busy readers: a log being recovered), when there is no file yet, or for a private
    /// in-memory database; a table that does not exist yet reads as empty (nothing was ever
    /// committed to it).
    func peek<Output>(_ body: (Database) throws -> Output) -> Output? {
        guard case .file(let path) = settings.location, DatabaseLocation.identity(of: path) != nil else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .immediateError
        configuration.label = "crescent.store.peek"
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read(body)
        } catch {
            return nil
        }
    }
}
