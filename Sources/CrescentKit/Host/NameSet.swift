/// Names seen so far, for refusing one given twice: a linear search while there are few (a
/// `Set<String>` as a run's first use of one costs the Swift runtime a scan of every conformance
/// at start-up), a set once there are many (a manifest listing 10,000 services made every run in
/// its folder take 18 s).
struct NameSet {
    /// Past this many names the set is made.
    static let linearLimit = 64

    private var few: [String] = []
    private var many: Set<String>?

    init() {}

    init<Names: Sequence>(_ names: Names) where Names.Element == String {
        for name in names { _ = insert(name) }
    }

    func contains(_ name: String) -> Bool {
        many?.contains(name) ?? few.contains(name)
    }

    /// Adds `name`; false when it was there already.
    mutating func insert(_ name: String) -> Bool {
        if many != nil { return many?.insert(name).inserted ?? false }
        guard !few.contains(name) else { return false }
        few.append(name)
        if few.count > Self.linearLimit {
            many = Set(few)
            few = []
        }
        return true
    }
}
