public import Model
import Synchronization

/// The loaded places with their two lookups: nearest places (``reverse(_:count:)``) and names
/// (``search(_:country:limit:)``). Immutable and thread-safe once made.
public final class GeoNamesDatabase: Sendable {
    package let data: GeoNamesData
    package let index: GeoNamesIndex
    /// Every name and alternate name folded, made by the first search (folding 170,000 names
    /// would otherwise be paid by every load, reverse lookups included).
    private let foldedNames = Mutex<FoldedNames?>(nil)

    /// The most results one call may ask for.
    public static let maximumCount = 1000

    /// Decodes a data file's bytes (see ``GeoNamesData``) and builds the nearest-place lookup.
    public init(bytes: [UInt8]) throws(ServiceError) {
        data = try GeoNamesData(bytes: bytes)
        index = GeoNamesIndex(data)
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

    /// Places whose folded name or alternate name (`Munich` and `München` alike) equals, starts
    /// with or contains the folded `query`, in that order; within each, the most important first
    /// (``importance(_:)``), then by country code.
    ///
    /// - Parameters:
    ///   - country: an ISO 3166-1 alpha-2 code or a country name, any case; nil for all.
    /// - Throws: `invalid_argument` for an empty query, one with no letter or digit (`[`, `-`) or
    ///   an unknown country.
    public func search(_ query: String, country: String? = nil, limit: Int = 10) throws(ServiceError) -> [Placemark] {
        try searchRows(query, country: country, limit: limit).map { data.placemark($0) }
    }

    /// The rows ``search(_:country:limit:)`` answers, in order.
    package func searchRows(_ query: String, country: String? = nil, limit: Int = 10) throws(ServiceError) -> [Int] {
        let text = TextFolding.fold(query)
        guard !query.allSatisfy(\.isWhitespace) else { throw ServiceError(.invalidArgument, "the query is empty") }
        // Punctuation alone ("[", "(", "-") names no place; matched as a substring it found names
        // that merely contain it, and "-" (folded to a space) was "empty": one rule for all.
        guard Self.hasLetterOrDigit(text) else {
            throw ServiceError(.invalidArgument, "the query has no letter or digit (punctuation alone names no place): search for a place's name")
        }
        let folded = Array(text.utf8)
        let countryIndex = try country.map { name throws(ServiceError) in try self.countryIndex(name) }
        let classes = names.matches(folded, among: data, country: countryIndex)
        var results: [Int] = []
        for rows in classes where results.count < limit {
            results += rank(rows).prefix(limit - results.count)
        }
        return results
    }

    /// Place names that continue `prefix` as a person types it, for completion: the places whose
    /// folded name or alternate name equals or starts with the folded prefix, ranked by importance
    /// as ``search(_:country:limit:)`` ranks each class, each place by its own name (`Mün`, `Muen` and
    /// `Muni` all offer `München`), without repeats; empty for an empty prefix.
    public func completions(_ prefix: String, limit: Int = 20) -> [String] {
        let text = TextFolding.fold(prefix)
        guard Self.hasLetterOrDigit(text), limit > 0 else { return [] }
        let folded = Array(text.utf8)
        var seen = Set<String>()
        var offered: [String] = []
        // Equal and prefix matches ranked together (a substring does not continue a prefix): an
        // alternate name equal to the prefix (`MUN`, an airport's code) is no better a completion
        // than a city whose name continues it.
        // A place whose own name continues the prefix counts in full, although an alternate name
        // equals it (Paris is also called `Pari`).
        let names = self.names
        let continuing = names.matches(folded, among: data, country: nil).prefix(2).flatMap { $0 }.map { found in
            FoldedNames.Found(row: found.row, byAlternate: found.byAlternate && !names.ownName(of: found.row, startsWith: folded))
        }
        for row in rank(continuing) where offered.count < limit {
            let name = data.name(row)
            if seen.insert(name).inserted { offered.append(name) }
        }
        return offered
    }

    /// Whether `text` has a letter or a digit of any script: a query without one names no place.
    static func hasLetterOrDigit(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.isAlphabetic || $0.properties.numericType != nil }
    }

    /// Every name folded, made by the first search that needs it.
    private var names: FoldedNames {
        foldedNames.withLock { names in
            if let names { return names }
            let made = FoldedNames(data)
            names = made
            return made
        }
    }

    /// The rows by importance, most first, then by country code and row. A section whose city is
    /// among the rows ranks with its city, right after it (`Paris`, then its arrondissements, then
    /// smaller places); any other ranks by its own importance (`Parione`, a section of Rome, does
    /// not lead a search for `Pari`).
    private func rank(_ found: [FoldedNames.Found]) -> [Int] {
        var importances: [Int: Double] = [:]
        importances.reserveCapacity(found.count)
        for found in found { importances[found.row] = importance(found.row, byAlternate: found.byAlternate) }
        return found.map { found in
            let locality = data.localityRow(found.row)
            let own = importances[found.row] ?? 0
            let key = locality == found.row ? own : importances[locality] ?? own
            return (row: found.row, key: key, section: locality != found.row, own: own)
        }.sorted { left, right in
            if left.key != right.key { return left.key > right.key }
            if left.section != right.section { return !left.section }
            if left.own != right.own { return left.own > right.own }
            return (data.countryCodes[Int(data.country[left.row])], left.row)
                < (data.countryCodes[Int(data.country[right.row])], right.row)
        }.map(\.row)
    }

    /// A place's population, divided by 20 when only an alternate name matched: a city known
    /// abroad by another name (Köln, 1 million, also called Cologne) comes before a town of that
    /// name (Cologne, Lombardy, 7,000), and a city of 5 million called St. Petersburg in English
    /// before the city of 260,000 named so; a town that is only sometimes called by a name
    /// (Parys, 71,000, also Paris) comes after a place that bears it (Paris, Texas, 25,000), and
    /// "Mun" lists towns named Mun… before Montevideo (1.3 million, also `Munt…` in a language).
    /// A section's alternate names count in full: they are its names within its city
    /// (`Köln-Porz` for Porz am Rhein, 113,000, before Kolno, 10,000, for "Köln").
    private func importance(_ row: Int, byAlternate: Bool) -> Double {
        let population = Double(data.population[row])
        return byAlternate && !data.isSection(row) ? population / 20 : population
    }

    private func countryIndex(_ name: String) throws(ServiceError) -> UInt8 {
        let folded = TextFolding.fold(name)
        if let position = data.countryCodes.firstIndex(where: { $0.lowercased() == folded })
            ?? data.countryNames.firstIndex(where: { TextFolding.fold($0) == folded })
        {
            return UInt8(position)
        }
        let meant = name.count <= 64 ? NameSuggestion.closest(to: name, among: data.countryNames, prefixes: false) : nil
        throw ServiceError(.invalidArgument, "country '\(name)' is not the two-letter ISO 3166-1 code (FR, US) or the name "
                           + "(as the data spells it: France, United States) of a country with places in the data"
                           + (meant.map { "; did you mean '\($0)'?" } ?? ""))
    }
}
