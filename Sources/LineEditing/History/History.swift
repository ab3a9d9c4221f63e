/// The lines entered so far, oldest first, and the state of browsing them with Up and Down.
///
/// An entry is a whole submitted chunk, newlines included, so a multi-line function comes back as
/// one piece. ``add(_:)`` skips blank entries and an entry equal to the newest one, and drops the
/// oldest beyond ``capacity``.
///
/// Browsing keeps the line being typed as a draft: Up from a half-typed line and back Down gives
/// it back. Lines edited while browsing keep their edits until the browse ends (on submit, as in
/// readline); the entries themselves never change.
///
/// ```swift
/// var history = History(["print(1)", "x = 2"])
/// history.previous(current: "pri")    // "x = 2"
/// history.previous(current: "x = 2")  // "print(1)"
/// history.next(current: "print(1)")   // "x = 2"
/// history.next(current: "x = 2")      // "pri", the draft
/// history.add("pri()")                // ends the browse
/// ```
public struct History: Hashable, Sendable {
    /// How many entries are kept by default (the issue asks for 1,000).
    public static let defaultCapacity = 1_000

    /// The entries, oldest first.
    public private(set) var entries: [String] = []
    /// The most entries kept.
    public let capacity: Int
    /// The entry being shown while browsing; nil when on the line being typed.
    public private(set) var position: Int?
    /// Text of lines edited while browsing, by position (`entries.count` is the draft).
    private var edits: [Int: String] = [:]

    /// A history holding `entries` (oldest first), filtered and capped as ``add(_:)`` would.
    public init(_ entries: [String] = [], capacity: Int = History.defaultCapacity) {
        self.capacity = max(1, capacity)
        for entry in entries where entry.contains(where: { !$0.isWhitespace }) && entry != self.entries.last {
            self.entries.append(entry)
        }
        if self.entries.count > self.capacity { self.entries.removeFirst(self.entries.count - self.capacity) }
    }

    /// Records a submitted entry and ends any browse. Returns false, recording nothing, for a blank
    /// entry or one equal to the newest entry.
    @discardableResult
    public mutating func add(_ entry: String) -> Bool {
        endBrowsing()
        guard entry.contains(where: { !$0.isWhitespace }), entry != entries.last else { return false }
        entries.append(entry)
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        return true
    }

    /// Whether a browse is under way (an entry, not the draft, is being shown).
    public var isBrowsing: Bool { position != nil }

    /// Steps to the next older entry and returns the text to show; nil at the oldest.
    ///
    /// - Parameter current: the text being edited now, kept as the draft or as the edit of the
    ///   entry being left.
    public mutating func previous(current: String) -> String? {
        let here = position ?? entries.count
        guard here > 0 else { return nil }
        return move(from: here, to: here - 1, current: current)
    }

    /// Steps to the next newer entry, or back to the draft, and returns the text to show; nil when
    /// already on the draft.
    public mutating func next(current: String) -> String? {
        guard let here = position else { return nil }
        return move(from: here, to: here + 1, current: current)
    }

    /// Shows entry `index` (a history search accepted it), keeping `current` as the draft.
    public mutating func browse(to index: Int, draft current: String) {
        guard entries.indices.contains(index) else { return }
        if position == nil { edits[entries.count] = current }
        position = index
    }

    /// Forgets the browse and its edits: the next Up starts from the newest entry. Called on
    /// submit and on Ctrl-C.
    public mutating func endBrowsing() {
        position = nil
        edits = [:]
    }

    private mutating func move(from here: Int, to there: Int, current: String) -> String {
        edits[here] = current
        position = there == entries.count ? nil : there
        return edits[there] ?? (there < entries.count ? entries[there] : "")
    }
}
