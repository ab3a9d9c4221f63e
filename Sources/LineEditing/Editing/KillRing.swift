/// The text that kill commands (Ctrl-K, Ctrl-U, Ctrl-W, Alt-D, Alt-Backspace) removed, newest last,
/// for yank (Ctrl-Y) and yank-pop (Alt-Y) to put back.
///
/// Consecutive kills grow one entry instead of adding several, as in Emacs and readline: killing
/// forward appends to it, killing backward prepends, so Ctrl-W Ctrl-W yanks back both words in
/// their order. The ring keeps its entries across lines; ``LineBuffer`` drives it.
///
/// ```swift
/// var ring = KillRing()
/// ring.kill("world", merging: .none)
/// ring.kill("hello ", merging: .prepend)
/// ring.current            // "hello world"
/// ```
public struct KillRing: Hashable, Sendable {
    /// How a kill combines with the newest entry.
    public enum Merge: Hashable, Sendable {
        /// A new entry.
        case none
        /// Added to the end of the newest entry (a forward kill right after another kill).
        case append
        /// Added to the start of the newest entry (a backward kill right after another kill).
        case prepend
    }

    /// How many entries the ring keeps, as Emacs's `kill-ring-max` defaults to a few dozen.
    public static let defaultCapacity = 60

    /// The killed texts, oldest first.
    public private(set) var entries: [String] = []
    /// The most entries kept; older ones are dropped.
    public let capacity: Int
    /// How far ``rotate()`` has gone back from the newest entry.
    private var offset = 0

    /// An empty ring keeping up to `capacity` entries.
    public init(capacity: Int = KillRing.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// The entry a yank inserts: the newest, or an older one after ``rotate()``.
    public var current: String? {
        entries.isEmpty ? nil : entries[entries.count - 1 - offset]
    }

    /// Records killed text. Empty text is ignored.
    public mutating func kill(_ text: String, merging merge: Merge) {
        guard !text.isEmpty else { return }
        offset = 0
        switch merge {
        case .append where !entries.isEmpty: entries[entries.count - 1] += text
        case .prepend where !entries.isEmpty: entries[entries.count - 1] = text + entries[entries.count - 1]
        default:
            entries.append(text)
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }

    /// Makes the next older entry current (wrapping to the newest) and returns it; nil when empty.
    public mutating func rotate() -> String? {
        guard !entries.isEmpty else { return nil }
        offset = (offset + 1) % entries.count
        return current
    }

    /// Makes the newest entry current again (a fresh yank starts there).
    public mutating func resetRotation() {
        offset = 0
    }
}
