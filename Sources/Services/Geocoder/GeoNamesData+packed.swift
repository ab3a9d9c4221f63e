package import Model

extension GeoNamesData {
    /// The placemarks of `rows` (the places found for `origins`, one each, in order) packed into
    /// one buffer, each alone in an array, as a batch `reverse` answers: the same fields as
    /// ``placemark(_:from:)``'s ``Placemark/value``, made without a `Value` per field, and each
    /// string (a place's name, a country, division or time zone) stored once per batch, so the
    /// binding can make each Lua string once too.
    package func packedPlacemarks(_ rows: [Int], from origins: [GeoPoint]) -> PackedModels {
        packing(rows, from: origins).finish(wrapsEach: true)
    }

    /// The builder of ``packedPlacemarks(_:from:)``, for a batch packed in parts at once.
    package func packing(_ rows: some Collection<Int>, from origins: some Collection<GeoPoint>) -> PackedModels.Builder {
        var builder = PackedModels.Builder(schema: Placemark.schema, capacity: rows.count, poolCapacity: rows.count * 24)
        var codes = PooledColumn(countryCodes, keepsEmpty: true), countries = PooledColumn(countryNames, keepsEmpty: true)
        var admin1s = PooledColumn(admin1Names), admin2s = PooledColumn(admin2Names), zones = PooledColumn(timeZoneNames)
        var names = [PackedModels.Builder.PooledString?](repeating: nil, count: count)
        func name(_ row: Int, _ builder: inout PackedModels.Builder) -> PackedModels.Builder.PooledString {
            if let pooled = names[row] { return pooled }
            let pooled = builder.pool(nameBytes[Int(nameOffsets[row])..<Int(nameOffsets[row + 1])])
            names[row] = pooled
            return pooled
        }
        for (row, origin) in zip(rows, origins) {
            let locality = name(localityRow(row), &builder)
            builder.add(locality)                                                  // name
            builder.add(locality)                                                  // locality
            if isSection(row) {                                                    // subLocality
                builder.add(name(row, &builder))
            } else {
                builder.addNull()
            }
            admin1s.add(Int(admin1[row]), to: &builder)
            admin2s.add(Int(admin2[row]), to: &builder)
            let country = Int(self.country[row])
            codes.add(country, to: &builder)
            countries.add(country, to: &builder)
            zones.add(Int(timeZone[row]), to: &builder)
            let point = point(row)
            builder.add(point.latitude)
            builder.add(point.longitude)
            if population[row] > 0 { builder.add(Int64(population[row])) } else { builder.addNull() }
            builder.add(origin.distance(to: point))
            builder.endModel()
        }
        return builder
    }
}

/// The strings of one column of names (countries, divisions, time zones), each copied into a
/// batch's pool the first time a place of the batch has it; an empty name is a missing field
/// unless `keepsEmpty` (a placemark always has a country, even one GeoNames names "").
private struct PooledColumn {
    let names: [String]
    let keepsEmpty: Bool
    private var slots: [Slot]

    private enum Slot {
        case unseen
        case empty
        case pooled(PackedModels.Builder.PooledString)
    }

    init(_ names: [String], keepsEmpty: Bool = false) {
        self.names = names
        self.keepsEmpty = keepsEmpty
        slots = Array(repeating: .unseen, count: names.count)
    }

    /// Adds the cell of name `index` to `builder`.
    mutating func add(_ index: Int, to builder: inout PackedModels.Builder) {
        switch slots[index] {
        case .pooled(let string): builder.add(string)
        case .empty: builder.addNull()
        case .unseen:
            let name = names[index]
            if name.isEmpty && !keepsEmpty {
                slots[index] = .empty
                builder.addNull()
            } else {
                let string = builder.pool(name.utf8)
                slots[index] = .pooled(string)
                builder.add(string)
            }
        }
    }
}
