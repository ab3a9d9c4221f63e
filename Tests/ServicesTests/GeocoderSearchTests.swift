import Model
@testable import Services
import Testing

/// Forward geocoding: folding, ranking, options and bad input.
@Suite struct GeocoderSearchTests {
    @Test func foldingIgnoresCaseAccentsAndHyphens() {
        #expect(TextFolding.fold("Zürich") == "zurich")
        #expect(TextFolding.fold("ŁÓDŹ") == "lodz")
        #expect(TextFolding.fold("Straße") == "strasse")
        #expect(TextFolding.fold("  Saint-Étienne  ") == "saint etienne")
        #expect(TextFolding.fold("Hà Nội") == "ha noi")
        #expect(TextFolding.fold("Zu\u{308}rich") == "zurich", "a combining mark is dropped")
        #expect(TextFolding.fold("Ørsta_Æbelø") == "orsta aebelo")
        #expect(TextFolding.fold("Москва") == "москва", "other scripts are only lower-cased")
    }

    @Test func exactNamesComeFirstAndTheBiggestPlaceLeads() async throws {
        let geocoder = GeocoderService()
        let paris = try await geocoder.search("paris", limit: 5)
        #expect(paris.first?.countryCode == "FR")
        #expect(paris.allSatisfy { $0.name == "Paris" })
        let london = try await geocoder.search("LONDON")
        #expect(london.first?.countryCode == "GB")
        #expect(try await geocoder.search("Zürich").first.map { ($0.name, $0.countryCode) } ?? ("", "") == ("Zürich", "CH"))
        #expect(try await geocoder.search("zurich").first?.name == "Zürich")
        #expect(try await geocoder.search("saint étienne").first?.name == "Saint-Étienne")
    }

    /// Alternate names match too: GeoNames calls the city Munich, and München, Muenchen and
    /// Monaco di Baviera are among its alternate names; all of them find the city of 1.5 million first.
    @Test func alternateNamesFindTheSamePlace() async throws {
        let geocoder = GeocoderService()
        for query in ["Munich", "München", "MUENCHEN", "monaco di baviera"] {
            let first = try #require(try await geocoder.search(query).first, "\(query)")
            #expect(first.name == "Munich" && first.countryCode == "DE" && first.population > 1_000_000, "\(query): \(first)")
        }
        let cologne = try await geocoder.search("Cologne", limit: 1).first
        #expect(cologne?.name == "Köln" && cologne?.admin1 == "North Rhine-Westphalia", "\(String(describing: cologne))")
        // A name that is only an alternate counts for less: Parys (South Africa, 71,000) is also
        // called Paris, and comes after Paris, Texas (25,000).
        let paris = try await geocoder.search("Paris", limit: 100)
        let parys = try #require(paris.firstIndex { $0.name == "Parys" })
        let texas = try #require(paris.firstIndex { $0.name == "Paris" && $0.countryCode == "US" })
        #expect(paris.first?.countryCode == "FR" && texas < parys)
        // A place is listed once, under its best match, although several of its names match.
        let places = try await geocoder.search("munchen", limit: 50)
        #expect(Set(places.map(\.point)).count == places.count)
    }

    /// Airport codes and GeoNames' machine transliterations are not names: "Mun" used to lead with
    /// Maturín (airport code MUN) and put Mumbai (12.7 million, transliterated `munbai`) sixth,
    /// among towns a hundred times smaller; "LHR" found Guadalajara (`gwwdlhrh`). Names people
    /// use still find the place: old names, other languages' names, initials.
    @Test func airportCodesAndTransliterationsAreNotNames() async throws {
        let geocoder = GeocoderService()
        let mun = try await geocoder.search("Mun", limit: 10)
        #expect(mun.first?.name == "Munich", "\(mun.map(\.name))")
        #expect(mun.allSatisfy { TextFolding.fold($0.name).hasPrefix("mun") }, "\(mun.map(\.name))")
        #expect(mun.map(\.population) == mun.map(\.population).sorted(by: >), "\(mun.map(\.name))")
        for (code, place) in [("MUN", "Maturín"), ("LHR", "Guadalajara"), ("MUC", "Munich"), ("munbai", "Mumbai")] {
            let found = try await geocoder.search(code, limit: 50)
            #expect(!found.contains { $0.name == place && $0.population > 500_000 }, "\(code): \(found.map(\.name))")
        }
        for (query, name) in [("Bombay", "Mumbai"), ("NYC", "New York City"), ("Kiev", "Kyiv"), ("Peking", "Beijing")] {
            #expect(try await geocoder.search(query).first?.name == name, "\(query)")
        }
    }

    /// A division's title before a name (`Municipio de Copacabana`) is not a name: completing
    /// "Munic" offered Munich, then "Municipio Hato Corozal", Praia, Bălţi, Kalmar...
    @Test func completionsOfAPrefixAreNamesThatContinueIt() async throws {
        let database = try await GeoNamesLoader.bundled.database()
        let offered = database.completions("Munic", limit: 10)
        #expect(offered.first == "Munich", "\(offered)")
        for other in ["Praia", "Bălţi", "Kalmar", "Middletown", "La Piedad de Cabadas", "Copacabana"] {
            #expect(!offered.contains(other), "\(offered)")
        }
    }

    /// Cities by the names other languages give them (Latin script): each finds the city first.
    @Test func citiesByTheirNamesInOtherLanguages() async throws {
        let geocoder = GeocoderService()
        let cases = [("Wien", "Vienna", "AT"), ("Moskva", "Moscow", "RU"), ("Praha", "Prague", "CZ"), ("Roma", "Rome", "IT"),
                     ("Köln", "Köln", "DE"), ("Koeln", "Köln", "DE"), ("Warszawa", "Warsaw", "PL"), ("Beijing", "Beijing", "CN"),
                     ("Tokio", "Tokyo", "JP"), ("Londres", "London", "GB"), ("Mexico", "Mexico City", "MX")]
        for (query, name, country) in cases {
            let first = try #require(try await geocoder.search(query).first, "\(query)")
            #expect(first.name == name && first.countryCode == country, "\(query): \(first)")
        }
    }

    @Test func prefixesComeBeforeSubstrings() async throws {
        let geocoder = GeocoderService()
        let results = try await geocoder.search("berlin", limit: 1000)
        let classes = results.map { place -> Int in
            // A section (Berlin-Kladow) is named after its city: its own name is its sub-locality.
            let name = TextFolding.fold(place.subLocality ?? place.name)
            return name == "berlin" ? 0 : name.hasPrefix("berlin") ? 1 : name.contains("berlin") ? 2 : 3
        }
        // Class 3: found by an alternate name only, ranked among the others by its importance.
        let byOwnName = classes.filter { $0 < 3 }
        #expect(byOwnName == byOwnName.sorted())
        #expect(Set(byOwnName) == [0, 1, 2], "\(results.map(\.name))")
        #expect(results.first?.countryCode == "DE")
    }

    /// A city comes before its sections, which are named after it; a section ranks by its city's
    /// size, so Porz (a section of Köln) leads the places of that name; among places of equal
    /// names, the bigger first.
    @Test func aCityComesBeforeItsSectionsAndBiggerPlacesFirst() async throws {
        let geocoder = GeocoderService()
        let paris = try await geocoder.search("Paris", country: "FR", limit: 60)
        #expect(paris.first.map { ($0.name, $0.locality, $0.subLocality) } ?? ("", "", "") == ("Paris", "Paris", nil))
        let arrondissements = paris.filter { $0.subLocality?.hasPrefix("Paris ") == true }
        #expect(arrondissements.count >= 20, "\(paris.map { $0.subLocality ?? $0.name })")
        #expect(arrondissements.allSatisfy { $0.name == "Paris" && $0.locality == "Paris" })
        let porz = try #require(try await geocoder.search("Porz", limit: 3).first)
        #expect(porz.locality == "Köln" && porz.subLocality == "Porz am Rhein", "\(porz)")
        let springfields = try await geocoder.search("Springfield", limit: 30).filter { $0.name == "Springfield" }
        #expect(springfields.count == 30 || springfields.count > 5)
        #expect(springfields.map(\.population) == springfields.map(\.population).sorted(by: >))
    }

    /// Completion offers whole names for a prefix, accents and alternate names alike.
    @Test func completionsContinueAPrefix() async throws {
        let database = try await GeoNamesLoader.bundled.database()
        for typed in ["Mün", "MUEN", "muni"] {
            #expect(database.completions(typed, limit: 5).first == "Munich", "\(typed): \(database.completions(typed, limit: 5))")
        }
        let tokyo = database.completions("tok", limit: 10)
        #expect(tokyo.first == "Tokyo" && tokyo.count == 10 && Set(tokyo).count == 10)
        #expect(database.completions("", limit: 5).isEmpty && database.completions("Paris", limit: 0).isEmpty)
        #expect(database.completions("zzqzzq").isEmpty)
    }

    @Test func countryAndLimitFilter() async throws {
        let geocoder = GeocoderService()
        let texas = try await geocoder.search("Paris", country: "us", limit: 3)
        #expect(texas.count == 3 && texas.allSatisfy { $0.countryCode == "US" })
        let byName = try await geocoder.search("Paris", country: "United States", limit: 3)
        #expect(byName == texas)
        #expect(try await geocoder.search("Paris", country: "FR", limit: 1).count == 1)
        #expect(try await geocoder.search("xqzxqz").isEmpty)
    }

    @Test func theSearchMethodValidatesItsInput() async throws {
        let geocoder = GeocoderService()
        let found = try await invokeMethod(geocoder, "search", ["Caen", ["country": "FR", "limit": 2]])
        #expect(found.arrayValue?.first?["name"] == "Caen")
        #expect(found.arrayValue?.first?["distance"] == .null, "a forward search has no distance")
        let cases: [([Value], String)] = [
            ([""], "the query is empty"),
            (["   "], "the query is empty"),
            (["Paris", ["country": "ZZ"]], "country 'ZZ' is not the two-letter ISO 3166-1 code (FR, US) or the name "
                + "(as the data spells it: France, United States) of a country with places in the data"),
            ([.bytes(Array("Par".utf8) + [0xFF] + Array("is".utf8))], "the query is not UTF-8 text: pass a place name in UTF-8"),
            (["Paris", ["country": 33]], "options.country must be a string, got number"),
            (["Paris", ["limit": 0]], "options.limit must be an integer in [1, 1000], got 0"),
        ]
        for (arguments, message) in cases {
            let error = await serviceError { () async throws(ServiceError) in try await invokeMethod(geocoder, "search", arguments) }
            #expect(error == ServiceError(.invalidArgument, message))
        }
    }

    /// Names read from a file keep their line end ("Paris\r" from a CRLF file); a byte order mark
    /// or a zero-width space is invisible: each still finds the place.
    @Test func lineEndsAndInvisibleCharactersAroundANameAreIgnored() async throws {
        let database = try await GeocoderTests.database()
        for query in ["Paris\n", "Paris\r\n", "\t Paris \n", "\u{FEFF}Paris", "Pa\u{200B}ris", "Paris\u{3000}"] {
            let found = try database.search(query, limit: 1)
            #expect(found.first?.name == "Paris", "\(query.debugDescription): \(found.map(\.name))")
        }
        #expect(try database.search("New\nYork", limit: 1).first?.name == "New York City")
    }
}
