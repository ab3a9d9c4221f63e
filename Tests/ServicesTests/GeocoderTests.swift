import Model
@testable import Services
import Testing

/// The geocoder's data, nearest-place search and the `reverse` method.
@Suite struct GeocoderTests {
    static func database() async throws -> GeoNamesDatabase {
        try await GeoNamesLoader.bundled.database()
    }

    @Test func theShippedDataHasEveryGeoNamesPlace() async throws {
        let database = try await Self.database()
        // cities500's 234,908 places less 249 of no population that duplicate a peopled place of
        // their name, and the 738 places of GeoNames' 2016 cities1000 it lacks (not its places
        // cities500 lists under another spelling or a few kilometres off).
        #expect(database.count == 235_397)
        #expect(database.data.countryCodes.count == 247)
        #expect(database.data.countryNames[database.data.countryCodes.firstIndex(of: "FR") ?? 0] == "France")
        #expect(database.data.countryNames[database.data.countryCodes.firstIndex(of: "XK") ?? 0] == "Kosovo")
        #expect(database.data.countryNames[database.data.countryCodes.firstIndex(of: "KR") ?? 0] == "South Korea")
        let sections = (0..<database.count).filter { database.data.isSection($0) }
        #expect(sections.count == 4_307)
        #expect(sections.allSatisfy { !database.data.isSection(database.data.localityRow($0)) }, "a city is not itself a section")
        #expect((0..<database.count).filter { database.data.timeZoneNames[Int(database.data.timeZone[$0])].isEmpty }.isEmpty,
                "every place has a time zone")
    }

    /// Named points across continents: city centres, sections of cities, small towns and the sea,
    /// each with the locality, sub-locality and time zone a person expects.
    @Test func reverseNamesKnownPlacesAsPeopleDo() async throws {
        let database = try await Self.database()
        typealias Case = (lat: Double, lon: Double, locality: String, section: String?, country: String, zone: String, within: Double)
        let cases: [Case] = [
            // The centre of Paris is in its 4th arrondissement; a point in Tokyo is in Eifuku.
            (48.8566, 2.3522, "Paris", "Paris 04 Hôtel-de-Ville", "FR", "Europe/Paris", 1_000),
            (48.8534, 2.3488, "Paris", nil, "FR", "Europe/Paris", 10),
            (35.6762, 139.6503, "Tokyo", "Eifuku", "JP", "Asia/Tokyo", 1_000),
            (35.6895, 139.6917, "Tokyo", nil, "JP", "Asia/Tokyo", 10),
            (52.4542, 13.1445, "Berlin", "Kladow", "DE", "Europe/Berlin", 100),
            (50.8864, 7.0583, "Köln", "Porz am Rhein", "DE", "Europe/Berlin", 100),
            (30.0444, 31.2357, "Cairo", "Būlāq Abū al ‘Ilā", "EG", "Africa/Cairo", 2_000),
            // Towns beside a city are towns of their own.
            (48.8239, 2.2117, "Sèvres", nil, "FR", "Europe/Paris", 1_000),
            (48.8353, 2.2410, "Boulogne-Billancourt", nil, "FR", "Europe/Paris", 1_000),
            (51.5072, -0.1276, "London", nil, "GB", "Europe/London", 1_000),
            (40.7128, -74.0060, "New York City", nil, "US", "America/New_York", 1_000),
            (21.3069, -157.8583, "Honolulu", nil, "US", "Pacific/Honolulu", 1_000),
            (19.4326, -99.1332, "Mexico City", nil, "MX", "America/Mexico_City", 1_000),
            (-34.6037, -58.3816, "Buenos Aires", nil, "AR", "America/Argentina/Buenos_Aires", 2_000),
            (-22.9068, -43.1729, "Rio de Janeiro", nil, "BR", "America/Sao_Paulo", 2_000),
            (-1.2864, 36.8172, "Nairobi", nil, "KE", "Africa/Nairobi", 1_000),
            (55.7558, 37.6173, "Moscow", nil, "RU", "Europe/Moscow", 1_000),
            (-33.8688, 151.2093, "Sydney", nil, "AU", "Australia/Sydney", 1_000),
            (64.1466, -21.9426, "Reykjavík", nil, "IS", "Atlantic/Reykjavik", 3_000),
            // A village of the outback GeoNames now counts under 500 (kept from its 2016 list).
            (-27.7073, 140.7370, "Innamincka", nil, "AU", "Australia/Adelaide", 100),
            // McMurdo Station (kept from the 2016 list: cities500 has no place in Antarctica).
            (-77.85, 166.67, "McMurdo Station", nil, "AQ", "Pacific/Auckland", 1_000),
            // Mid-Atlantic: the nearest place is on the Azores, 1,300 km away.
            (30.0, -40.0, "Lajes das Flores", nil, "PT", "Atlantic/Azores", 1_400_000),
        ]
        for place in cases {
            let found = try #require(database.reverse(GeoPoint(latitude: place.lat, longitude: place.lon)).first)
            let got = (found.name, found.locality, found.subLocality, found.countryCode, found.timeZone)
            #expect(got == (place.locality, place.locality, place.section, place.country, place.zone),
                    "\(place.lat),\(place.lon) gave \(found)")
            #expect((found.distance ?? .infinity) < place.within, "\(place.lat),\(place.lon) gave \(found)")
        }
    }

    /// A place of GeoNames' 2016 list that cities500 still lists, a few kilometres off or under
    /// another spelling, is not added a second time: there were two Abidjans 5 km apart (the
    /// second with no population answered `reverse` near it instead of the section Marcory), two
    /// Freetowns and a Japanese Otrada on the Russian one; nor is a place of no population beside
    /// a peopled one of its name (Nishitōkyō, 1 km from Nishi-Tokyo-shi, both in cities500).
    @Test func placesOfThe2016ListAreNotListedTwice() async throws {
        let database = try await Self.database()
        for (query, country) in [("Abidjan", "CI"), ("Freetown", "SL")] {
            let found = try database.search(query, country: country, limit: 20).filter { $0.name == query }
            #expect(found.count == 1, "\(query): \(found)")
            #expect(found.first.map { $0.population > 100_000 } == true, "\(query): \(found)")
        }
        let nishitokyo = database.reverse(GeoPoint(latitude: 35.73355, longitude: 139.54761), count: 20).filter {
            TextFolding.fold($0.name).filter { $0 != " " }.hasPrefix("nishitokyo")
        }
        #expect(nishitokyo.count == 1, "\(nishitokyo)")
        let otrada = try database.search("Otrada", limit: 50).filter { $0.name == "Otrada" }
        #expect(Set(otrada.map(\.point)).count == otrada.count, "two places at one point: \(otrada)")
        let abidjan = try #require(database.reverse(GeoPoint(latitude: 5.30966, longitude: -4.01266)).first)
        #expect(abidjan.locality == "Abidjan" && abidjan.population > 0, "\(abidjan)")
    }

    /// The tree answers exactly what a scan of every place answers, on 10,000 points uniform over
    /// the sphere (chord distance between unit vectors orders places as great-circle distance does).
    @Test func reverseEqualsBruteForceOnTenThousandRandomPoints() async throws {
        let index = try await Self.database().index
        var random = GeoRandom(seed: 6)
        let points = (0..<10_000).map { _ in random.point() }
        // The scans take seconds in a debug build: they run on a thread of their own, so they do
        // not hold the (few) threads Swift tasks share, and on one core, so the timing tests that
        // run beside them keep the other.
        let (mismatches, batchMismatches) = await onOwnThread {
            var found: [String] = []
            var rows: [Int] = []
            for point in points {
                let tree = index.nearest(point)
                let scan = index.bruteForceNearest(point)
                if tree.row != scan.row || tree.chordSquared != scan.chordSquared {
                    found.append("\(point): tree \(tree), scan \(scan)")
                }
                rows.append(scan.row)
            }
            // The batch search (cell order, seeded with the previous answer) answers the same.
            return (found, zip(index.nearestRows(points), rows).filter { $0 != $1 }.count)
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(batchMismatches == 0)
    }

    /// `count` places agree with scans of every place (haversine).
    @Test func nearestManyEqualsScans() async throws {
        let database = try await Self.database()
        let data = database.data
        var random = GeoRandom(seed: 8)
        let points = (0..<12).map { _ in random.point() }
        let scans = await onOwnThread {
            points.map { point in
                (0..<data.count).map { (row: $0, metres: point.distance(to: data.point($0))) }
                    .sorted { ($0.metres, $0.row) < ($1.metres, $1.row) }.prefix(9).map(\.row)
            }
        }
        for (point, scan) in zip(points, scans) {
            #expect(database.index.nearest(point, count: 9).map(\.row) == scan, "\(point)")
        }
    }

    @Test func countAnswersTheNearestPlacesInOrder() async throws {
        let database = try await Self.database()
        var random = GeoRandom(seed: 7)
        for _ in 0..<50 {
            let point = random.point()
            let places = database.reverse(point, count: 7)
            #expect(places.count == 7)
            let distances = places.compactMap(\.distance)
            #expect(distances == distances.sorted())
            let nearest = database.index.bruteForceNearest(point)
            #expect(places[0].point == database.data.point(nearest.row))
            // The distance is the haversine great-circle distance.
            #expect(abs(distances[0] - point.distance(to: places[0].point)) < 1e-6)
        }
    }

    @Test func reverseWorksAtThePolesAndTheAntimeridian() async throws {
        let database = try await Self.database()
        for (latitude, longitude) in [(90.0, 0.0), (-90.0, 0.0), (0.0, 180.0), (0.0, -180.0), (-17.7, 179.99), (-17.7, -179.99)] {
            let point = GeoPoint(latitude: latitude, longitude: longitude)
            let place = try #require(database.reverse(point).first)
            #expect(place.point == database.data.point(database.index.bruteForceNearest(point).row))
        }
        // Fiji lies across the antimeridian: both sides find a Fijian town.
        #expect(database.reverse(GeoPoint(latitude: -16.8, longitude: 179.9)).first?.countryCode == "FJ")
        #expect(database.reverse(GeoPoint(latitude: -16.8, longitude: -179.9)).first?.countryCode == "FJ")
    }

    @Test func theReverseMethodAnswersPlacemarksAndBatches() async throws {
        let geocoder = GeocoderService()
        let single = try await invokeMethod(geocoder, "reverse", [["lat": 48.8534, "lon": 2.3488], ["count": 3]])
        let places = try #require(single.arrayValue)
        #expect(places.count == 3)
        let first = places[0]
        #expect(first["name"] == "Paris" && first["countryCode"] == "FR" && first["country"] == "France")
        #expect(first["admin1"] == "Île-de-France")
        #expect(first["population"] == 2_138_551)
        guard case .model(let model) = first else { Issue.record("not a model: \(first)"); return }
        #expect(model.typeName == "placemark")
        #expect(Set(model.fields.keys) == ["name", "locality", "admin1", "countryCode", "country", "timeZone", "lat", "lon",
                                           "population", "distance"])
        #expect(first["locality"] == "Paris" && first["subLocality"] == .null && first["timeZone"] == "Europe/Paris")
        // The centre of Paris lies in a section: the placemark is named after the city.
        let centre = try await invokeMethod(geocoder, "reverse", [["lat": 48.8566, "lon": 2.3522]])
        let section = try #require(centre.arrayValue?.first)
        #expect(section["name"] == "Paris" && section["locality"] == "Paris")
        #expect(section["subLocality"] == "Paris 04 Hôtel-de-Ville", "\(section)")
        let sevres = try await invokeMethod(geocoder, "reverse", [["lat": 48.8239, "lon": 2.2117]])
        #expect(sevres.arrayValue?.first?["name"] == "Sèvres")
        #expect(sevres.arrayValue?.first?["admin2"] == "Hauts-de-Seine", "\(sevres)")

        let batch = try await invokeMethod(geocoder, "reverse", [[["lat": 51.5072, "lon": -0.1276], ["lat": 48.8534, "lon": 2.3488]]])
        let names = try #require(batch.arrayValue).map { $0.arrayValue?.first?["name"] }
        #expect(names == ["London", "Paris"])
        // A batch is answered packed: its placemarks reach Lua in one call (GeocoderBatchLuaTests).
        guard case .packed(let packed) = batch else {
            Issue.record("a batch is answered as \(batch.typeName), not packed")
            return
        }
        #expect(packed.count == 2 && packed.wrapsEach)
        #expect(try await invokeMethod(geocoder, "reverse", [[]]) == .array([]))
    }

    /// A batch big enough to be searched in two halves at once answers, in order, what one
    /// search of each point answers (the placemarks, distances included).
    @Test func aBigBatchAnswersAsOneSearchPerPoint() async throws {
        let database = try await Self.database()
        var random = GeoRandom(seed: 18)
        let points = (0..<(GeocoderService.parallelBatchCount + 501)).map { _ in random.point() }
        let answers = GeocoderService.nearestEach(points, in: database).values
        #expect(answers.count == points.count)
        let mismatches = zip(points, answers).filter { point, answer in
            answer != .array(database.reverse(point).map(\.value))
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
        #expect(GeocoderService.nearestEach(Array(points.prefix(3)), in: database).values == points.prefix(3).map { .array(database.reverse($0).map(\.value)) })
    }

    @Test func badLocationsAreInvalidArgumentsNamingTheField() async {
        let geocoder = GeocoderService()
        let cases: [(Value, String)] = [
            (["lat": 123, "lon": 0], "latitude 123 is outside [-90, 90]"),
            (["lat": 0, "lon": -180.5], "longitude -180.5 is outside [-180, 180]"),
            (["lat": .number(.nan), "lon": 0], "latitude is NaN (field 'lat')"),
            (["lat": 0, "lon": .number(.infinity)], "longitude inf is outside [-180, 180]"),
            (["lon": 0], "latitude is missing (field 'lat')"),
            ([["lat": 1, "lon": 1], ["lat": 1]], "location #2: longitude is missing (field 'lon')"),
        ]
        for (location, message) in cases {
            let error = await serviceError { () async throws(ServiceError) in try await invokeMethod(geocoder, "reverse", [location]) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == message)
        }
        for count: Value in [0, 1001, 2.5, "3"] {
            let error = await serviceError { () async throws(ServiceError) in
                try await invokeMethod(geocoder, "reverse", [["lat": 1, "lon": 1], ["count": count]])
            }
            #expect(error?.code == .invalidArgument && error?.message.hasPrefix("options.count must be an integer in [1, 1000]") == true)
        }
    }

    @Test func aDamagedDataFileIsInvalidData() throws {
        #expect(throws: ServiceError(.invalidData, "the geocoder data file has an unknown format, not version 4 (rebuild it with tools/fetch-geonames.sh)")) {
            try GeoNamesDatabase(bytes: Array("lat,lon,name\n".utf8))
        }
        #expect(throws: ServiceError(.invalidData, "the geocoder data file is truncated")) {
            try GeoNamesDatabase(bytes: Array("CGEO".utf8) + [4, 0, 0, 0, 1])
        }
        let bytes = try FileBytes.read(GeoNamesLoader.locate())
        // A cut or changed file no longer matches its checksum (GeocoderAttackTests changes bytes).
        #expect(throws: ServiceError(.invalidData, "the geocoder data file is damaged (its checksum does not match its contents): "
                                     + "reinstall Crescent, or rebuild the file with tools/fetch-geonames.sh")) {
            try GeoNamesDatabase(bytes: Array(bytes.prefix(bytes.count / 2)))
        }
        #expect(throws: ServiceError.self) { try GeoNamesLoader.load(path: "/nonexistent/cities.cgeo") }
    }

    @Test func aMissingFileFailsEveryCallAndTheNextCallTriesAgain() async {
        let geocoder = GeocoderService(loader: GeoNamesLoader(path: "/nonexistent/cities.cgeo"))
        for _ in 0..<2 {
            let error = await serviceError { () async throws(ServiceError) in try await invokeMethod(geocoder, "search", ["Paris"]) }
            #expect(error?.code == .unavailable)
        }
    }
}
