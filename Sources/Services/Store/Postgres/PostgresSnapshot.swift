/// A PostgreSQL snapshot (`pg_current_snapshot()::text`, "xmin:xmax:xip,..."): which
/// transactions' changes a read made in it already saw.
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

    /// Whether a read in this snapshot saw what transaction `xid` committed.
    func sees(_ xid: Int64) -> Bool {
        xid < xmin || (xid < xmax && !inProgress.contains(xid))
    }
}
