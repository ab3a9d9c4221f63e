/// A PostgreSQL snapshot (`pg_current_snapshot()::text`, "xmin:xmax:xip,..."): which
/// transactions' changes a read made in it already saw.
///
/// A host's cursor in the change log is the snapshot of its last read: the next read takes the
/// rows of the transactions the new snapshot sees and the cursor did not (those from `xmax` on,
/// and those then in progress), so a transaction open elsewhere holds back only its own rows.
struct PostgresSnapshot: Sendable, Equatable {
    /// Every transaction below this had finished.
    var xmin: Int64
    /// No transaction from this on had finished.
    var xmax: Int64
    /// The transactions between the two still in progress.
    var inProgress: Set<Int64>

    /// Parses the text form; nil when it is not one.
    init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let xmin = Int64(parts[0]), let xmax = Int64(parts[1]) else { return nil }
        var running = Set<Int64>()
        for item in parts[2].split(separator: ",") {
            guard let xid = Int64(item) else { return nil }
            running.insert(xid)
        }
        self.xmin = xmin
        self.xmax = xmax
        inProgress = running
    }

    /// The text form, as `pg_snapshot` reads it.
    var text: String {
        "\(xmin):\(xmax):" + inProgress.sorted().map { String($0) }.joined(separator: ",")
    }

    /// Whether a read in this snapshot saw what transaction `xid` committed (or that it aborted).
    func sees(_ xid: Int64) -> Bool {
        xid < xmin || (xid < xmax && !inProgress.contains(xid))
    }

    /// Whether this snapshot saw every transaction `other` saw, so that nothing read after it
    /// was already seen by `other`.
    func seesAll(of other: PostgresSnapshot) -> Bool {
        xmax >= other.xmax && inProgress.allSatisfy { !other.sees($0) }
    }
}
