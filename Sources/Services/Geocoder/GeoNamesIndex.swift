import Glibc

/// Nearest places by great-circle distance: a k-d tree over the places' 3D unit vectors.
///
/// The straight-line (chord) distance between unit vectors grows with the great-circle distance,
/// so the nearest by chord is the nearest on the sphere, with no special cases at the poles or
/// the antimeridian. The tree is implicit in the row order of ``GeoNamesData``: the node of the
/// range `[lo, hi)` is row `(lo + hi) / 2`, split on `axes[node]`, with the rows before it on the
/// low side and the rows after it on the high side; ranges of at most `leafSize` rows are leaves.
/// The searches are in `GeoNamesIndex+search.swift`.
package final class GeoNamesIndex: Sendable {
    package let data: GeoNamesData
    /// x, y and z of each row's unit vector, in three arrays.
    private let xs: [Double], ys: [Double], zs: [Double]
    /// The bounding box of each node's rows, numbered breadth-first (the root is 0, the children
    /// of `i` are `2i + 1` and `2i + 2`): min x, y, z, max x, y, z. Points on a sphere fill only a
    /// thin shell of a k-d cell, so these boxes prune far better than the split planes alone
    /// (about 40 rows per search instead of 140 for points uniform over the sphere).
    private let boxes: [Double]

    package init(_ data: GeoNamesData) {
        self.data = data
        var xs = [Double](repeating: 0, count: data.count)
        var ys = xs, zs = xs
        for row in 0..<data.count {
            let vector = data.point(row).unitVector
            (xs[row], ys[row], zs[row]) = (vector.x, vector.y, vector.z)
        }
        (self.xs, self.ys, self.zs) = (xs, ys, zs)
        var depth = 1
        while data.leafSize << depth < data.count { depth += 1 }
        var boxes = [Double](repeating: 0, count: 6 << (depth + 1))
        Self.buildBoxes(0, data.count, node: 0, xs, ys, zs, data.leafSize, into: &boxes)
        self.boxes = boxes
    }

    /// Fills the box of `node` (rows `[lo, hi)`) and its descendants; returns it.
    @discardableResult
    private static func buildBoxes(_ lo: Int, _ hi: Int, node: Int, _ xs: [Double], _ ys: [Double], _ zs: [Double],
                                   _ leafSize: Int, into boxes: inout [Double]) -> (SIMD3<Double>, SIMD3<Double>) {
        var low = SIMD3<Double>(repeating: .infinity), high = SIMD3<Double>(repeating: -.infinity)
        func include(_ row: Int) {
            let point = SIMD3(xs[row], ys[row], zs[row])
            low = pointwiseMin(low, point)
            high = pointwiseMax(high, point)
        }
        if hi - lo <= leafSize {
            for row in lo..<max(lo, hi) { include(row) }
        } else {
            let mid = (lo + hi) >> 1
            include(mid)
            for (childLo, childHi, child) in [(lo, mid, 2 * node + 1), (mid + 1, hi, 2 * node + 2)] {
                let (childLow, childHigh) = buildBoxes(childLo, childHi, node: child, xs, ys, zs, leafSize, into: &boxes)
                low = pointwiseMin(low, childLow)
                high = pointwiseMax(high, childHigh)
            }
        }
        let base = 6 * node
        for axis in 0..<3 {
            boxes[base + axis] = low[axis]
            boxes[base + 3 + axis] = high[axis]
        }
        return (low, high)
    }

    /// The row nearest to `point` and its squared chord distance (unit sphere); of rows at the
    /// same distance the first in row order.
    package func nearest(_ point: GeoPoint) -> (row: Int, chordSquared: Double) {
        withColumns { columns in
            var search = NearestOne(columns, query: point.unitVector, start: nil)
            search.visit(0, columns.count, node: 0)
            return (search.row, search.bound)
        }
    }

    /// The row nearest to each point, in order: ``nearest(_:)`` for a batch, and faster. The
    /// points are searched cell by cell (1° cells, in a boustrophedon order), each search starting
    /// with the answer to the point before as its best so far: nearby points have nearby answers,
    /// so most of the tree is pruned at once, and the nodes they share stay in the cache. The
    /// answers are the same as ``nearest(_:)``'s, ties included.
    package func nearestRows(_ points: [GeoPoint]) -> [Int] {
        var rows = [Int](repeating: 0, count: points.count)
        withColumns { columns in
            var previous: Int?
            for index in Self.cellOrder(points) {
                var search = NearestOne(columns, query: points[index].unitVector, start: previous)
                search.visit(0, columns.count, node: 0)
                rows[index] = search.row
                previous = search.row
            }
        }
        return rows
    }

    /// The indices of `points` ordered by 1° cell (a counting sort): latitude bands south to north,
    /// alternately west-east and east-west, so consecutive cells touch.
    static func cellOrder(_ points: [GeoPoint]) -> [Int] {
        let cells = 180 * 360
        var starts = [Int](repeating: 0, count: cells + 1)
        let keys = points.map { point in
            let band = min(179, max(0, Int(point.latitude + 90)))
            let column = min(359, max(0, Int(point.longitude + 180)))
            return band * 360 + (band % 2 == 0 ? column : 359 - column)
        }
        for key in keys { starts[key + 1] += 1 }
        for cell in 0..<cells { starts[cell + 1] += starts[cell] }
        var order = [Int](repeating: 0, count: points.count)
        for (index, key) in keys.enumerated() {
            order[starts[key]] = index
            starts[key] += 1
        }
        return order
    }

    /// The `count` rows nearest to `point`, nearest first, with their squared chord distances.
    /// Of rows at exactly the same distance the first in row order comes first, as in a brute-force
    /// scan.
    package func nearest(_ point: GeoPoint, count: Int) -> [(row: Int, chordSquared: Double)] {
        let wanted = max(1, min(count, data.count))
        if wanted == 1 { return [nearest(point)] }
        return withColumns { columns in
            var search = NearestMany(columns, query: point.unitVector, wanted: wanted)
            search.visit(0, columns.count, node: 0)
            return search.found
        }
    }

    /// The row nearest to `point` by scanning every row (for tests and benchmarks: what the tree
    /// must agree with). Of rows at the same distance the first wins.
    package func bruteForceNearest(_ point: GeoPoint) -> (row: Int, chordSquared: Double) {
        withColumns { columns in
            // Plain pointer arithmetic, no calls: this runs 145,000 times per point in debug builds.
            let query = point.unitVector
            let (qx, qy, qz) = (query.x, query.y, query.z)
            let (xs, ys, zs) = (columns.xs, columns.ys, columns.zs)
            var best = Double.infinity
            var bestRow = 0
            var row = 0
            while row < columns.count {
                let dx = qx - xs[row], dy = qy - ys[row], dz = qz - zs[row]
                let distance = dx * dx + dy * dy + dz * dz
                if distance < best {
                    best = distance
                    bestRow = row
                }
                row &+= 1
            }
            return (bestRow, best)
        }
    }

    /// Runs `body` with the tree's columns.
    private func withColumns<Result>(_ body: (Columns) -> Result) -> Result {
        xs.withUnsafeBufferPointer { xs in
            ys.withUnsafeBufferPointer { ys in
                zs.withUnsafeBufferPointer { zs in
                    data.axes.withUnsafeBufferPointer { axes in
                        boxes.withUnsafeBufferPointer { boxes in
                            // Invariant: the arrays are non-empty (a data file has at least one row).
                            body(Columns(xs: xs.baseAddress!, ys: ys.baseAddress!, zs: zs.baseAddress!, axes: axes.baseAddress!,
                                         boxes: boxes.baseAddress!, count: data.count, leafSize: data.leafSize))
                        }
                    }
                }
            }
        }
    }
}

