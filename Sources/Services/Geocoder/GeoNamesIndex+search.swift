/// The tree's arrays, as the searches read them (valid inside ``GeoNamesIndex``'s `withColumns`).
struct Columns {
    let xs: UnsafePointer<Double>
    let ys: UnsafePointer<Double>
    let zs: UnsafePointer<Double>
    let axes: UnsafePointer<UInt8>
    let boxes: UnsafePointer<Double>
    let count: Int
    let leafSize: Int

    /// The squared chord distance from (x, y, z) to `row`.
    @inline(__always)
    func distance(_ x: Double, _ y: Double, _ z: Double, _ row: Int) -> Double {
        let dx = x - xs[row], dy = y - ys[row], dz = z - zs[row]
        return dx * dx + dy * dy + dz * dz
    }

    /// The squared distance from (x, y, z) to the bounding box of `node` (0 inside it).
    @inline(__always)
    func boxDistance(_ x: Double, _ y: Double, _ z: Double, _ node: Int) -> Double {
        let box = boxes + 6 &* node
        let gx = max(box[0] - x, x - box[3], 0)
        let gy = max(box[1] - y, y - box[4], 0)
        let gz = max(box[2] - z, z - box[5], 0)
        return gx * gx + gy * gy + gz * gz
    }

    /// The coordinate of `row` on `axis`.
    @inline(__always)
    func coordinate(_ row: Int, _ axis: UInt8) -> Double {
        switch axis {
        case 0: xs[row]
        case 1: ys[row]
        default: zs[row]
        }
    }
}

/// The nearest-row search with no allocation: the common case, one place per point. Nodes whose
/// bounding box lies farther than the best row so far are skipped.
struct NearestOne {
    let columns: Columns
    let qx, qy, qz: Double
    var bound = Double.infinity
    var row = 0

    /// A search for `query`, starting from row `start` as the best so far when given (the result
    /// is the same; a near start prunes more).
    init(_ columns: Columns, query: SIMD3<Double>, start: Int?) {
        self.columns = columns
        (qx, qy, qz) = (query.x, query.y, query.z)
        if let start {
            row = start
            bound = columns.distance(qx, qy, qz, start)
        }
    }

    /// Searches `[lo, hi)`, the rows of `node`, nearer side first.
    mutating func visit(_ lo: Int, _ hi: Int, node: Int) {
        guard lo < hi, columns.boxDistance(qx, qy, qz, node) <= bound else { return }
        if hi &- lo <= columns.leafSize {
            scan(lo, hi)
            return
        }
        let mid = (lo &+ hi) >> 1
        consider(mid, columns.distance(qx, qy, qz, mid))
        let axis = columns.axes[mid]
        let query = axis == 0 ? qx : (axis == 1 ? qy : qz)
        if query < columns.coordinate(mid, axis) {
            visit(lo, mid, node: 2 &* node &+ 1)
            visit(mid &+ 1, hi, node: 2 &* node &+ 2)
        } else {
            visit(mid &+ 1, hi, node: 2 &* node &+ 2)
            visit(lo, mid, node: 2 &* node &+ 1)
        }
    }

    /// A leaf: every row.
    @inline(__always)
    private mutating func scan(_ lo: Int, _ hi: Int) {
        var candidate = lo
        while candidate < hi {
            consider(candidate, columns.distance(qx, qy, qz, candidate))
            candidate &+= 1
        }
    }

    @inline(__always)
    private mutating func consider(_ candidate: Int, _ distance: Double) {
        if distance < bound || (distance == bound && candidate < row) {
            bound = distance
            row = candidate
        }
    }
}

/// One k-nearest search: the best `wanted` rows so far, sorted.
struct NearestMany {
    let columns: Columns
    let query: SIMD3<Double>
    let wanted: Int
    var found: [(row: Int, chordSquared: Double)] = []
    /// The distance a row must beat: the worst kept once `wanted` are kept.
    var bound = Double.infinity

    init(_ columns: Columns, query: SIMD3<Double>, wanted: Int) {
        self.columns = columns
        self.query = query
        self.wanted = wanted
        found.reserveCapacity(wanted + 1)
    }

    /// Searches `[lo, hi)`, the rows of `node`, nearer side first.
    mutating func visit(_ lo: Int, _ hi: Int, node: Int) {
        guard lo < hi, columns.boxDistance(query.x, query.y, query.z, node) <= bound else { return }
        if hi - lo <= columns.leafSize {
            for row in lo..<hi { consider(row) }
            return
        }
        let mid = (lo + hi) >> 1
        consider(mid)
        let axis = columns.axes[mid]
        if query[Int(axis)] < columns.coordinate(mid, axis) {
            visit(lo, mid, node: 2 * node + 1)
            visit(mid + 1, hi, node: 2 * node + 2)
        } else {
            visit(mid + 1, hi, node: 2 * node + 2)
            visit(lo, mid, node: 2 * node + 1)
        }
    }

    private mutating func consider(_ row: Int) {
        let distance = columns.distance(query.x, query.y, query.z, row)
        guard distance <= bound else { return }
        if distance == bound, found.count == wanted, let last = found.last, last.row < row { return }
        var index = found.count
        while index > 0 {
            let previous = found[index - 1]
            if previous.chordSquared < distance || (previous.chordSquared == distance && previous.row < row) { break }
            index -= 1
        }
        found.insert((row, distance), at: index)
        if found.count > wanted { found.removeLast() }
        if found.count == wanted { bound = found[wanted - 1].chordSquared }
    }
}
