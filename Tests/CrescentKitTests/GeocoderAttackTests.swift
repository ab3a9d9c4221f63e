import CrescentKit
import Foundation
import Model
@testable import Services
import Testing

/// The defects attack new28p found in the geocoder (issue 37), each pinned: a damaged data file,
/// Bronx neighbourhoods named Manhattan, search ranking and other scripts, proxy tables read raw,
/// the batch limit hit late, punctuation-only queries.
@Suite struct GeocoderAttackTests {
    static let database: GeoNamesDatabase? = try? GeoNamesLoader.load()

    /// D1: any byte of the file changed is refused as `invalid_data` naming the file; before the
    /// checksum, 4 bytes changed at 947,553 answered the centre of Paris with White River, Ontario
    /// (longitude 1082°), and others with Wissous or the wrong arrondissement.
    @Test func aDamagedDataFileFailsEveryCallNamingTheFile() throws {
        let path = try GeoNamesLoader.locate()
        let original = try FileBytes.read(path)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geocoder-attack-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // The attack's offsets, and one byte in each tenth of the file.
        let offsets = [947_553, 3_980_987, 4_378_718, 1_980_114] + (0..<10).map { original.count * $0 / 10 + 13 }
        for offset in offsets where offset + 4 <= original.count {
            var damaged = original
            for index in offset..<offset + 4 { damaged[index] ^= 0x5A }
            let file = folder.appendingPathComponent("damaged-\(offset).cgeo").path
            try Data(damaged).write(to: URL(fileURLWithPath: file))
            do {
                let database = try GeoNamesLoader.load(path: file)
                let paris = database.reverse(GeoPoint(latitude: 48.8566, longitude: 2.3522)).first
                Issue.record("offset \(offset): loaded, the centre of Paris answered \(String(describing: paris))")
            } catch {
                #expect(error.code == .invalidData, "offset \(offset): \(error)")
                #expect(error.message.hasPrefix(file + ": "), "offset \(offset): \(error.message)")
            }
        }
    }

    /// D2: a neighbourhood is a section of the borough (the city of its county) it lies in, not of
    /// the nearest or biggest one: Fordham, Hunts Point and Van Nest are in the Bronx, not Manhattan.
    @Test func newYorkNeighbourhoodsBelongToTheirBorough() throws {
        let database = try #require(Self.database)
        let cases: [(Double, Double, String)] = [
            (40.8615, -73.8907, "The Bronx"),    // Fordham
            (40.8126, -73.8844, "The Bronx"),    // Hunts Point
            (40.8448, -73.8648, "The Bronx"),    // Van Nest
            (40.6701, -73.9860, "Brooklyn"),     // Park Slope
            (40.6943, -73.9188, "Brooklyn"),     // Bushwick
            (40.8079, -73.9454, "Manhattan"),    // Harlem
            (40.7721, -73.9301, "Queens"),       // Astoria
        ]
        for (lat, lon, borough) in cases {
            let place = try #require(database.reverse(GeoPoint(latitude: lat, longitude: lon)).first)
            #expect(place.locality == borough, "\(lat),\(lon): \(place.locality) / \(place.subLocality ?? "-") / \(place.admin2 ?? "-")")
        }
        // Sections of other cities with wards or districts keep their city.
        let others: [(Double, Double, String)] = [
            (48.8566, 2.3522, "Paris"), (48.8635, 2.2769, "Paris"), (35.6812, 139.7671, "Tokyo"),
            (35.6762, 139.6503, "Tokyo"), (52.5200, 13.4050, "Berlin"), (51.5072, -0.1276, "London"),
        ]
        for (lat, lon, city) in others {
            let place = try #require(database.reverse(GeoPoint(latitude: lat, longitude: lon)).first)
            #expect(place.locality == city, "\(lat),\(lon): \(place.locality) / \(place.subLocality ?? "-")")
        }
    }

    /// D4: among matches equally good, bigger places first (a place found by an alternate name
    /// counts a twentieth of its size), a section found by its name within its city as big as it is.
    @Test func searchRanksBiggerPlacesFirst() throws {
        let database = try #require(Self.database)
        let koln = try database.search("Köln", limit: 8).map(\.name)
        let porz = try #require(koln.firstIndex(of: "Köln"))
        #expect(porz == 0, "\(koln)")
        let sections = try database.search("Köln", limit: 8)
        let firstKolno = try #require(sections.firstIndex { $0.name == "Kolno" }, "\(koln)")
        let firstPorz = try #require(sections.firstIndex { $0.subLocality == "Porz am Rhein" }, "\(sections.map { $0.subLocality ?? $0.name })")
        #expect(firstPorz < firstKolno, "\(sections.map { $0.subLocality ?? $0.name })")
        let petersburg = try #require(try database.search("St. Petersburg").first)
        #expect(petersburg.countryCode == "RU", "\(petersburg)")
        let roma = try #require(try database.search("Roma").first)
        #expect(roma.countryCode == "IT", "\(roma)")
        // A town sometimes called by a name still comes after one named so.
        let paris = try database.search("Paris", limit: 100)
        let parys = try #require(paris.firstIndex { $0.name == "Parys" })
        let texas = try #require(paris.firstIndex { $0.name == "Paris" && $0.countryCode == "US" })
        #expect(paris.first?.countryCode == "FR" && texas < parys)
    }

    /// D4: the names of large places in other scripts find them.
    @Test func namesInOtherScriptsFindTheCity() throws {
        let database = try #require(Self.database)
        let cases = [("Москва", "RU", "Moscow"), ("東京", "JP", "Tokyo"), ("Αθήνα", "GR", "Athens"), ("القاهرة", "EG", "Cairo"),
                     ("北京", "CN", "Beijing"), ("서울", "KR", "Seoul"), ("МОСКВА", "RU", "Moscow")]
        for (query, country, name) in cases {
            let first = try database.search(query).first
            #expect(first?.countryCode == country && first?.name == name, "\(query): \(String(describing: first))")
        }
    }

    /// D7: a query of punctuation alone is one clear error, whatever the punctuation ("-" was
    /// "empty", "[" and "(" answered places whose alternate names contain it).
    @Test func punctuationAloneIsOneClearError() throws {
        let database = try #require(Self.database)
        for query in ["[", "(", ")", "-", "/", "'", ".", "%", "--", "[ ]"] {
            #expect(throws: ServiceError(.invalidArgument, "the query has no letter or digit (punctuation alone names no place): search for a place's name"),
                    "\(query)") { try database.search(query) }
            #expect(database.completions(query).isEmpty, "\(query)")
        }
        #expect(try database.search("(Saale)").isEmpty == false)
    }

    /// D5: a location or options given as a proxy table (fields through `__index`) is refused
    /// naming what it is, not answered as an empty batch.
    @Test func aProxyTableIsRefusedNotAnEmptyBatch() async {
        let run = await GeoScriptRun.run("""
            task(function()
              local proxy = setmetatable({}, { __index = { lat = 48.85, lon = 2.35 } })
              print(services.geocoder:reverse(proxy))
              print(services.geocoder:reverse(setmetatable({}, { __index = function() error("boom idx") end })))
              print(services.geocoder:reverse({ lat = 48.85, lon = 2.35 }, setmetatable({}, { __index = { count = 3 } })))
              print(services.geocoder:reverse({ proxy }))
              -- A table with fields of its own and a metatable is read as before.
              local p = services.geocoder:reverse(setmetatable({ lat = 48.85, lon = 2.35 }, { __index = {} }))
              print(p[1].locality)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        let message = "is a table with no fields of its own whose metatable has __index (a proxy): a service reads a table's own fields, "
            + "not its metatable's; pass a plain table with the fields (for a location, {lat = t.lat, lon = t.lon})"
        #expect(run.lines == [
            "nil\tgeocoder.reverse: invalid_argument: location \(message)",
            "nil\tgeocoder.reverse: invalid_argument: location \(message)",
            "nil\tgeocoder.reverse: invalid_argument: options \(message)",
            "nil\tgeocoder.reverse: invalid_argument: location[1] \(message)",
            "Paris",
        ], "\(run.lines)")
    }

    /// D6: a batch of more than 500,000 locations is refused before it is converted, naming the
    /// limit and the fix (it took 10 s and 380 MB to be refused).
    @Test func aBatchPastTheLimitIsRefusedBeforeItIsConverted() async {
        let run = await GeoScriptRun.run("""
            task(function()
              local points = {}
              for i = 1, 500001 do points[i] = false end
              print(services.geocoder:reverse(points))
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            "nil\tgeocoder.reverse: invalid_argument: location has 500001 items, more than the 500000 one call takes: split it into calls of at most 500000 each",
        ], "\(run.lines)")
    }
}
