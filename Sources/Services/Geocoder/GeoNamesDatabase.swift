public import Model

/// The loaded places with their two lookups: nearest places (``reverse(_:count:)``) and names
/// (``search(_:country:limit:)``). Immutable and thread-safe once made.
public final class GeoNamesDatabase: Sendable {
    package let data: GeoNamesData
    package let index: GeoNamesIndex
    /// Every name folded (``TextFolding``), in row order, as offsets into one byte array.
    private let foldedNames: [UInt8]
    private let foldedOffsets: [UInt32]

    /// The most results one call may ask for.
    public static let maximumCount = 1000
    /// How far around a place its neighbours are counted to rank equal names.
    static let neighbourhood = 25_000.0

    /// Decodes a data file's bytes (see ``GeoNamesData``) and builds the lookups.
    public init(bytes: [UInt8]) throws(ServiceError) {
        data = try GeoNamesData(bytes: bytes)
        index = GeoNamesIndex(data)
        (foldedNames, foldedOffsets) = Self.foldNames(data)
    }

    /// How many places there are.
    public var count: Int { data.count }

    /// The `count` places nearest to `point`, nearest first, with their distances in metres.
    public func reverse(_ point: GeoPoint, count: Int = 1) -> [Placemark] {
        index.nearest(point, count: count).map { data.placemark($0.row, from: point) }
    }

    /// The nearest place to each point, in order: ``reverse(_:count:)`` with a count of 1, for a
    /// batch (faster: see ``GeoNamesIndex/nearestRows(_:)``).
    public func reverse(_ points: [GeoPoint]) -> [Placemark] {
        zip(index.nearestRows(points), points).map { row, point in data.placemark(row, from: point) }
    }

    /// Places whose folded name equals, starts with or contains the folded `query`, in that order;
    /// equal names rank by how many places lie within 25 km (the data has no population), then
    /// by country code.
    ///
    /// - Parameters:
    ///   - country: an ISO 3166-1 alpha-2 code or a country name, any case; nil for all.
    /// - Throws: `invalid_argument` for an empty query or an unknown country.
    public func search(_ query: String, country: String? = nil, limit: Int = 10) throws(ServiceError) -> [Placemark] {
        let folded = Array(TextFolding.fold(query).utf8)
        guard !folded.isEmpty else { throw ServiceError(.invalidArgument, "the query is empty") }
        let countryIndex = try country.map { name throws(ServiceError) in try self.countryIndex(name) }
        var classes: [[Int]] = [[], [], []]
        foldedNames.withUnsafeBufferPointer { names in
            for row in 0..<data.count where countryIndex == nil || data.country[row] == countryIndex {
                let name = names[Int(foldedOffsets[row])..<Int(foldedOffsets[row + 1])]
                if name.count == folded.count, name.elementsEqual(folded) {
                    classes[0].append(row)
                } else if name.starts(with: folded) {
                    classes[1].append(row)
                } else if Self.contains(name, folded) {
                    classes[2].append(row)
                }
            }
        }
        var results: [Int] = []
        for rows in classes where results.count < limit {
            results += rank(rows, wanted: limit - results.count)
        }
        return results.map { data.placemark($0) }
    }

    /// The first `wanted` of `rows` by name, then neighbours, then country code.
    private func rank(_ rows: [Int], wanted: Int) -> [Int] {
        let sorted = rows.sorted { left, right in
            let a = foldedName(left), b = foldedName(right)
            if !a.elementsEqual(b) { return a.lexicographicallyPrecedes(b) }
            return (data.countryCodes[Int(data.country[left])], left) < (data.countryCodes[Int(data.country[right])], right)
        }
        var ranked: [Int] = []
        var start = 0
        while start < sorted.count, ranked.count < wanted {
            var end = start + 1
            while end < sorted.count, foldedName(sorted[end]).elementsEqual(foldedName(sorted[start])) { end += 1 }
            var group = Array(sorted[start..<end])
            if group.count > 1 {
                let weights = Dictionary(uniqueKeysWithValues: group.map { ($0, index.neighbours(of: $0, within: Self.neighbourhood)) })
                // A stable sort keeps the country order among equally built-up places.
                group = group.enumerated().sorted { left, right in
                    let (a, b) = (weights[left.element] ?? 0, weights[right.element] ?? 0)
                    return a != b ? a > b : left.offset < right.offset
                }.map(\.element)
            }
            ranked += group.prefix(wanted - ranked.count)
            start = end
        }
        return ranked
    }

    private func foldedName(_ row: Int) -> ArraySlice<UInt8> {
        foldedNames[Int(foldedOffsets[row])..<Int(foldedOffsets[row + 1])]
    }

    private func countryIndex(_ name: String) throws(ServiceError) -> UInt8 {
        let folded = TextFolding.fold(name)
        if let position = data.countryCodes.firstIndex(where: { $0.lowercased() == folded })
            ?? data.countryNames.firstIndex(where: { TextFolding.fold($0) == folded })
        {
            return UInt8(position)
        }
        throw ServiceError(.invalidArgument, "country '\(name)' is not an ISO 3166-1 code or a country name in the data")
    }

    private static func contains(_ haystack: Slice<UnsafeBufferPointer<UInt8>>, _ needle: [UInt8]) -> Bool {
        guard haystack.count > needle.count, let first = needle.first else { return false }
        var start = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while start <= last {
            if haystack[start] == first, haystack[start..<start + needle.count].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }

    /// The ASCII names folded byte by byte (lower case, `-` and `_` as spaces, runs of spaces as
    /// one), as ``TextFolding/fold(_:)`` folds them.
    private static func foldNames(_ data: GeoNamesData) -> ([UInt8], [UInt32]) {
        var folded: [UInt8] = []
        folded.reserveCapacity(data.nameBytes.count)
        var offsets: [UInt32] = []
        offsets.reserveCapacity(data.count + 1)
        for row in 0..<data.count {
            offsets.append(UInt32(folded.count))
            let rowStart = folded.count
            var pendingSpace = false
            for byte in data.nameBytes[Int(data.nameOffsets[row])..<Int(data.nameOffsets[row + 1])] {
                switch byte {
                case UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "\t"):
                    pendingSpace = folded.count > rowStart
                default:
                    if pendingSpace { folded.append(UInt8(ascii: " ")) }
                    pendingSpace = false
                    folded.append(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
                }
            }
        }
        offsets.append(UInt32(folded.count))
        return (folded, offsets)
    }
}
