import CZlib
package import Model

/// The GeoNames places the geocoder answers from, decoded into columns.
///
/// Rows are in the order of an implicit k-d tree (see ``GeoNamesIndex``): row `i` is one place.
/// Coordinates are kept exactly as GeoNames gives them, in units of 1e-5 degrees.
///
/// A row is either a locality (a town or city) or a section of one (GeoNames' PPLX: one of Paris'
/// arrondissements, a neighbourhood of Tokyo); a section names the row of its locality.
///
/// The file format (`places.cgeo`, written by `tools/geonames/make_geocoder_data.py`), all
/// integers little-endian, `varint` = unsigned LEB128, `zigzag` = signed varint:
///
/// ```
/// "CGEO" 04 00 00 00   u32 checksum (zlib's CRC-32 of every byte after it)   u32 rowCount   u32 leafSize
/// varint countryCount, then per country: 2 ASCII bytes (code), varint length, UTF-8 name
/// admin1 strings, then admin2 strings, then IANA time zone strings: varint count, then per
///   string varint length + UTF-8
/// rowCount zigzag latitude deltas, then rowCount zigzag longitude deltas (1e-5 degrees)
/// rowCount u8 country indices, rowCount varint admin1 indices, rowCount varint admin2 indices,
///   rowCount varint time zone indices
/// rowCount varint localities: 0 for a locality, 1 + the row of its locality for a section
/// ceil(rowCount / 4) bytes of split axes, 2 bits per row, low bits first
/// rowCount names: varint length + UTF-8 bytes, as GeoNames writes them
/// rowCount varint populations
/// varint alternateCount, then per alternate name: varint row delta (rows ascending), varint
///   length + UTF-8 bytes, already folded (``TextFolding``): ASCII for Latin script, other
///   scripts lower-cased (`москва`, `東京`)
/// ```
package final class GeoNamesData: Sendable {
    /// How many places there are.
    package let count: Int
    /// Ranges of at most this many rows are k-d leaves.
    package let leafSize: Int
    package let latitudeE5: [Int32]
    package let longitudeE5: [Int32]
    /// Index into ``countryCodes`` and ``countryNames``.
    package let country: [UInt8]
    /// Index into ``admin1Names``.
    package let admin1: [UInt32]
    /// Index into ``admin2Names``.
    package let admin2: [UInt32]
    /// Index into ``timeZoneNames``.
    package let timeZone: [UInt32]
    /// 0 for a locality; for a section, 1 + the row of the locality it belongs to.
    package let locality: [UInt32]
    /// The k-d split axis of each node row (0, 1, 2 for x, y, z).
    package let axes: [UInt8]
    /// Where each name starts in ``nameBytes``; `count + 1` entries.
    package let nameOffsets: [UInt32]
    package let nameBytes: [UInt8]
    /// Inhabitants, as GeoNames counts them.
    package let population: [UInt32]
    /// The row of each alternate name, ascending.
    package let alternateRows: [UInt32]
    /// Where each alternate name starts in ``alternateBytes``; one more entry than names.
    package let alternateOffsets: [UInt32]
    /// The alternate names, folded, one after another.
    package let alternateBytes: [UInt8]
    package let countryCodes: [String]
    package let countryNames: [String]
    package let admin1Names: [String]
    package let admin2Names: [String]
    /// IANA time zone names (`Europe/Paris`); empty when GeoNames gives none.
    package let timeZoneNames: [String]

    /// Decodes a data file's bytes; throws `invalid_data` when they are not one, or are one
    /// damaged (its checksum does not match, or a coordinate is off the globe).
    package init(bytes: [UInt8]) throws(ServiceError) {
        var reader = ByteReader(bytes)
        guard try reader.bytes(8) == Array("CGEO".utf8) + [4, 0, 0, 0] else {
            throw ServiceError(.invalidData, "the geocoder data file has an unknown format, not version 4 (rebuild it with tools/fetch-geonames.sh)")
        }
        let checksum = try reader.uint32()
        guard Self.checksum(bytes.dropFirst(12)) == checksum else {
            throw ServiceError(.invalidData, "the geocoder data file is damaged (its checksum does not match its contents): "
                               + "reinstall Crescent, or rebuild the file with tools/fetch-geonames.sh")
        }
        count = Int(try reader.uint32())
        leafSize = Int(try reader.uint32())
        guard count > 0, leafSize >= 1 else { throw ServiceError(.invalidData, "the geocoder data file is empty") }

        var codes: [String] = []
        var countries: [String] = []
        for _ in 0..<(try reader.varint()) {
            codes.append(String(decoding: try reader.bytes(2), as: UTF8.self))
            countries.append(try reader.string())
        }
        countryCodes = codes
        countryNames = countries
        admin1Names = try reader.strings()
        admin2Names = try reader.strings()
        timeZoneNames = try reader.strings()

        latitudeE5 = try reader.deltas(count)
        longitudeE5 = try reader.deltas(count)
        country = try reader.bytes(count)
        admin1 = try reader.varints(count)
        admin2 = try reader.varints(count)
        timeZone = try reader.varints(count)
        locality = try reader.varints(count)
        let packed = try reader.bytes((count + 3) / 4)
        axes = (0..<count).map { row in (packed[row >> 2] >> UInt8(2 * (row & 3))) & 3 }

        var offsets: [UInt32] = []
        offsets.reserveCapacity(count + 1)
        var names: [UInt8] = []
        names.reserveCapacity(reader.remaining)
        for _ in 0..<count {
            offsets.append(UInt32(names.count))
            names.append(contentsOf: try reader.slice(try reader.varint()))
        }
        offsets.append(UInt32(names.count))
        nameOffsets = offsets
        nameBytes = names
        population = try reader.varints(count)

        let alternateCount = try reader.varint()
        guard alternateCount <= reader.remaining else { throw ServiceError(.invalidData, "the geocoder data file is truncated") }
        var alternateRows: [UInt32] = []
        var alternateOffsets: [UInt32] = []
        var alternateBytes: [UInt8] = []
        alternateRows.reserveCapacity(alternateCount)
        alternateOffsets.reserveCapacity(alternateCount + 1)
        alternateBytes.reserveCapacity(reader.remaining)
        var row = 0
        for _ in 0..<alternateCount {
            row += try reader.varint()
            guard row < count else { throw ServiceError(.invalidData, "the geocoder data file has an index out of range") }
            alternateRows.append(UInt32(row))
            alternateOffsets.append(UInt32(alternateBytes.count))
            alternateBytes.append(contentsOf: try reader.slice(try reader.varint()))
        }
        alternateOffsets.append(UInt32(alternateBytes.count))
        self.alternateRows = alternateRows
        self.alternateOffsets = alternateOffsets
        self.alternateBytes = alternateBytes

        guard country.allSatisfy({ Int($0) < codes.count }),
              admin1.allSatisfy({ Int($0) < admin1Names.count }),
              admin2.allSatisfy({ Int($0) < admin2Names.count }),
              timeZone.allSatisfy({ Int($0) < timeZoneNames.count }),
              locality.allSatisfy({ Int($0) <= count }),
              axes.allSatisfy({ $0 < 3 })
        else {
            throw ServiceError(.invalidData, "the geocoder data file has an index out of range")
        }
        guard latitudeE5.allSatisfy({ abs($0) <= 90 * 100_000 }), longitudeE5.allSatisfy({ abs($0) <= 180 * 100_000 }) else {
            throw ServiceError(.invalidData, "the geocoder data file has a coordinate off the globe")
        }
    }

    /// zlib's CRC-32 of `bytes`, as `tools/geonames/make_geocoder_data.py` writes it (Python's
    /// `zlib.crc32`). zlib's is C, vectorised and the same in a debug build: a few milliseconds
    /// for the shipped file, where the decoding takes tens.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            UInt32(truncatingIfNeeded: crc32_z(0, buffer.baseAddress, buffer.count))
        }
    }

    /// The place name of `row`.
    package func name(_ row: Int) -> String {
        String(decoding: nameBytes[Int(nameOffsets[row])..<Int(nameOffsets[row + 1])], as: UTF8.self)
    }

    /// The position of `row` in degrees.
    package func point(_ row: Int) -> GeoPoint {
        GeoPoint(latitude: Double(latitudeE5[row]) / 100_000, longitude: Double(longitudeE5[row]) / 100_000)
    }

    /// The row of the locality `row` belongs to: itself, or for a section its city.
    package func localityRow(_ row: Int) -> Int {
        let parent = Int(locality[row])
        return parent == 0 ? row : parent - 1
    }

    /// Whether `row` is a section of a city rather than a locality.
    package func isSection(_ row: Int) -> Bool { locality[row] != 0 }

    /// The placemark of `row`, with its distance from `origin` when one is given: for a section,
    /// named after its locality, with the section as the sub-locality.
    package func placemark(_ row: Int, from origin: GeoPoint? = nil) -> Placemark {
        let point = point(row)
        let localityName = name(localityRow(row))
        return Placemark(
            name: localityName,
            locality: localityName,
            subLocality: isSection(row) ? name(row) : nil,
            admin1: admin1Names[Int(admin1[row])],
            admin2: admin2Names[Int(admin2[row])],
            countryCode: countryCodes[Int(country[row])],
            country: countryNames[Int(country[row])],
            timeZone: timeZoneNames[Int(timeZone[row])],
            point: point,
            population: Int(population[row]),
            distance: origin.map { $0.distance(to: point) }
        )
    }
}

/// Reads the data file's encodings; every read checks its bounds.
private struct ByteReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - position }

    private static let truncated = ServiceError(.invalidData, "the geocoder data file is truncated")

    mutating func byte() throws(ServiceError) -> UInt8 {
        guard position < bytes.count else { throw Self.truncated }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func slice(_ length: Int) throws(ServiceError) -> ArraySlice<UInt8> {
        guard length <= remaining else { throw Self.truncated }
        defer { position += length }
        return bytes[position..<position + length]
    }

    mutating func bytes(_ length: Int) throws(ServiceError) -> [UInt8] { Array(try slice(length)) }

    mutating func uint32() throws(ServiceError) -> UInt32 {
        let raw = try slice(4)
        return raw.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func varint() throws(ServiceError) -> Int {
        var value = 0
        var shift = 0
        while true {
            let next = try byte()
            value |= Int(next & 0x7F) << shift
            if next & 0x80 == 0 { return value }
            shift += 7
            guard shift < 35 else { throw ServiceError(.invalidData, "the geocoder data file has a bad number") }
        }
    }

    mutating func string() throws(ServiceError) -> String {
        String(decoding: try slice(try varint()), as: UTF8.self)
    }

    mutating func strings() throws(ServiceError) -> [String] {
        var result: [String] = []
        for _ in 0..<(try varint()) { result.append(try string()) }
        return result
    }

    mutating func varints(_ count: Int) throws(ServiceError) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(UInt32(truncatingIfNeeded: try varint())) }
        return result
    }

    /// `count` zigzag deltas, summed into absolute values.
    mutating func deltas(_ count: Int) throws(ServiceError) -> [Int32] {
        var result: [Int32] = []
        result.reserveCapacity(count)
        var current: Int32 = 0
        for _ in 0..<count {
            let raw = try varint()
            current &+= Int32(truncatingIfNeeded: (raw >> 1) ^ -(raw & 1))
            result.append(current)
        }
        return result
    }
}
