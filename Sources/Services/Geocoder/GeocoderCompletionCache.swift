import Dispatch
public import Model
import Synchronization

/// The geocoder's completions of place names, worked out off the host loop.
///
/// Tab is answered on the loop, but loading the data and searching its names can take seconds
/// (a debug build's first search folds 170,000 names); a data file that never answers would
/// freeze the host. So the work runs on a queue of its own, and the loop waits for it at most
/// ``GeocoderCompletionCache/wait``: an answer that comes later is kept, and the next Tab with
/// the same prefix offers it at once.
public final class GeocoderCompletionCache: Sendable {
    /// How long Tab waits on the loop for the names. Real time, not the injected clock: it bounds
    /// how long a person (and every other client of the host) waits.
    static let wait = DispatchTimeInterval.milliseconds(150)

    /// A prefix asked for and, once worked out, the names continuing it.
    private struct Entry {
        let prefix: String
        let limit: Int
        /// Left when the names are worked out.
        let done: DispatchGroup
        var names: [String]?
    }

    private let queue = DispatchQueue(label: "crescent.geocoder.completion", qos: .userInitiated)
    /// The last prefix asked for: one entry, so the cache stays small however long one types.
    private let last = Mutex<Entry?>(nil)

    init() {}

    /// The names continuing `prefix` from `loader`'s data, if worked out within ``wait``; else
    /// none now and the names on a later call.
    func names(_ prefix: String, limit: Int, from loader: GeoNamesLoader) -> [String] {
        let done: DispatchGroup
        if let entry = last.withLock({ $0 }), entry.prefix == prefix, entry.limit == limit {
            if let names = entry.names { return names }
            done = entry.done  // being worked out: wait for it rather than start it again
        } else {
            done = DispatchGroup()
            done.enter()
            last.withLock { $0 = Entry(prefix: prefix, limit: limit, done: done, names: nil) }
            queue.async { [self] in
                let names = (try? loader.loadedDatabase())?.completions(prefix, limit: limit) ?? []
                last.withLock { entry in
                    if entry?.prefix == prefix && entry?.limit == limit { entry?.names = names }
                }
                done.leave()
            }
        }
        _ = done.wait(timeout: .now() + Self.wait)
        return last.withLock { entry in entry?.prefix == prefix && entry?.limit == limit ? entry?.names ?? [] : [] }
    }
}

extension GeocoderService: ArgumentCompleting {
    /// Place names for `search`'s query (``GeoNamesDatabase/completions(_:limit:)``), worked out
    /// off the loop (``GeocoderCompletionCache``): the loop waits at most 150 ms, so the first Tab
    /// of a run, which loads the data, may offer nothing and a later one the names; a data file
    /// that fails to load offers nothing.
    public func completions(method: String, argument: Int, prefix: String, limit: Int) -> [String] {
        guard method == "search", argument == 1 else { return [] }
        return completionCache.names(prefix, limit: limit, from: loader)
    }
}
