/// Every place's name and alternate names, folded (``TextFolding``), as the forward search
/// compares them: entry `i < count` is row `i`'s name; the entries after it are the data file's
/// alternate names, already folded, each with its row.
struct FoldedNames: Sendable {
    private let bytes: [UInt8]
    private let offsets: [UInt32]
    /// The row of each alternate name (entry `count + i` is alternate name `i`).
    private let alternateRows: [UInt32]

    /// How a name matches a query, best first.
    enum Match: Int, CaseIterable {
        case equal, prefix, substring
    }

    /// A row that matched, and whether by an alternate name only.
    struct Found {
        let row: Int
        let byAlternate: Bool
    }

    init(_ data: GeoNamesData) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.nameBytes.count + data.alternateBytes.count)
        var offsets: [UInt32] = []
        offsets.reserveCapacity(data.count + data.alternateRows.count + 1)
        for row in 0..<data.count {
            offsets.append(UInt32(bytes.count))
            let name = data.nameBytes[Int(data.nameOffsets[row])..<Int(data.nameOffsets[row + 1])]
            if name.allSatisfy({ $0 < 0x80 }) {
                Self.foldASCII(name, into: &bytes)
            } else {
                bytes += TextFolding.fold(data.name(row)).utf8
            }
        }
        offsets.append(contentsOf: data.alternateOffsets.dropLast().map { UInt32(bytes.count) + $0 })
        bytes += data.alternateBytes
        offsets.append(UInt32(bytes.count))
        self.bytes = bytes
        self.offsets = offsets
        alternateRows = data.alternateRows
    }

    /// The rows matching `query` (folded), one array per ``Match`` in order, each row in the array
    /// of its best match only (its own name winning a tie); rows outside `country` (an index into
    /// the country table) left out.
    func matches(_ query: [UInt8], among data: GeoNamesData, country: UInt8?) -> [[Found]] {
        let none = UInt8(2 * Match.allCases.count)
        var best = [UInt8](repeating: none, count: data.count)
        bytes.withUnsafeBufferPointer { names in
            for entry in 0..<(offsets.count - 1) {
                let row = entry < data.count ? entry : Int(alternateRows[entry - data.count])
                if let country, data.country[row] != country { continue }
                let name = names[Int(offsets[entry])..<Int(offsets[entry + 1])]
                let match: Match? =
                    if name.count == query.count, name.elementsEqual(query) { .equal }
                    else if name.starts(with: query) { .prefix }
                    else if Self.contains(name, query) { .substring }
                    else { nil }
                guard let match else { continue }
                let code = UInt8(2 * match.rawValue + (entry < data.count ? 0 : 1))
                if code < best[row] { best[row] = code }
            }
        }
        var classes = [[Found]](repeating: [], count: Match.allCases.count)
        for (row, code) in best.enumerated() where code < none {
            classes[Int(code / 2)].append(Found(row: row, byAlternate: code % 2 == 1))
        }
        return classes
    }

    /// Whether row `row`'s own name, folded, starts with `query` (folded).
    func ownName(of row: Int, startsWith query: [UInt8]) -> Bool {
        bytes[Int(offsets[row])..<Int(offsets[row + 1])].starts(with: query)
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

    /// An ASCII name folded byte by byte (lower case, `-` and `_` as spaces, runs of spaces as
    /// one), as ``TextFolding/fold(_:)`` folds it, without making a `String`.
    private static func foldASCII(_ name: ArraySlice<UInt8>, into folded: inout [UInt8]) {
        let start = folded.count
        var pendingSpace = false
        for byte in name {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "\t"):
                pendingSpace = folded.count > start
            default:
                if pendingSpace { folded.append(UInt8(ascii: " ")) }
                pendingSpace = false
                folded.append(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
            }
        }
    }
}
