import Foundation
import Model
@testable import Services
import Testing

/// User names have one form (NFC, trimmed, no invisible characters), and the time a login takes
/// never tells whether a name exists, whatever rounds the stored hashes were made with.
@Suite struct SessionNameTests {
    @Test func namesThatLookAlikeAreOneUser() async throws {
        let folder = try TemporaryFolder()
        let (_, session) = try SessionTests.makeSession(folder: folder)
        #expect(try session.register("caf\u{E9}", password: "correct horse") == "caf\u{E9}")
        #expect(throws: ServiceError(.invalidArgument, "the name 'caf\u{E9}' is taken")) {
            try session.register("cafe\u{301}", password: "another one")
        }
        #expect(throws: ServiceError(.invalidArgument, "the name 'caf\u{E9}' is taken")) {
            try session.register("  caf\u{E9} ", password: "another one")
        }
        let user = try await session.login("cafe\u{301} ", password: "correct horse")
        #expect(user["name"] == "caf\u{E9}", "the stored form, whatever form was typed")
    }

    @Test func namesThatOnlyLookAlikeAreOneUser() throws {
        let folder = try TemporaryFolder()
        let (_, session) = try SessionTests.makeSession(folder: folder)
        #expect(try session.register("admin", password: "correct horse") == "admin")
        // Cyrillic а, fullwidth ａ, mathematical bold 𝐚, and rn for m; Greek ο in "bοb" below.
        // Fullwidth letters anywhere (NFKC folds them), and an i carrying a second dot above.
        for lookalike in ["\u{430}dmin", "\u{FF41}dmin", "\u{1D41A}dmin", "adrnin",
                          "\u{FF41}\u{FF44}\u{FF4D}\u{FF49}\u{FF4E}", "\u{FF41}\u{FF44}min", "admi\u{FF4E}", "admi\u{307}n"] {
            #expect(throws: ServiceError(.invalidArgument, "the name '\(lookalike)' is taken: it looks like the name 'admin'")) {
                try session.register(lookalike, password: "another one")
            }
        }
        #expect(try session.register("b\u{3BF}b", password: "correct horse") == "b\u{3BF}b")
        #expect(throws: ServiceError(.invalidArgument, "the name 'bob' is taken: it looks like the name 'b\u{3BF}b'")) {
            try session.register("bob", password: "another one")
        }
        #expect(try session.register("alice", password: "correct horse") == "alice")
    }

    @Test func aNameIsBoundedInBytesAsWellAsCharacters() throws {
        let folder = try TemporaryFolder()
        let (_, session) = try SessionTests.makeSession(folder: folder)
        // One character of a million combining marks: 1,000,001 bytes.
        let huge = "a" + String(repeating: "\u{301}", count: 500_000)
        #expect(throws: ServiceError(.invalidArgument, "a name must be at most 256 bytes of UTF-8 (and 64 characters), got 1000001 bytes")) {
            try session.register(huge, password: "long enough")
        }
        let heavy = "x" + String(repeating: "\u{301}", count: 200)
        #expect(throws: ServiceError(.invalidArgument, "a name must be at most 256 bytes of UTF-8 (and 64 characters), got 401 bytes")) {
            try session.register(heavy, password: "long enough")
        }
        let widest = String(repeating: "\u{1F600}", count: 64)
        #expect(try session.register(widest, password: "long enough") == .string(widest))
    }

    @Test func invalidUTF8IsNamedAsSuch() async throws {
        let folder = try TemporaryFolder()
        let (_, session) = try SessionTests.makeSession(folder: folder)
        let invalid = Value.bytes([0x61, 0xFF, 0x62])
        let cases: [(String, [Value], String)] = [
            ("register", [invalid, "long enough"], "the name is not valid UTF-8 text"),
            ("register", ["ann", .bytes(Array("long enough".utf8) + [0xC3])], "the password is not valid UTF-8 text"),
            ("login", [invalid, "long enough"], "the name is not valid UTF-8 text"),
        ]
        for (method, arguments, message) in cases {
            do {
                _ = try await invokeMethod(session, method, arguments)
                Issue.record("\(method) accepted invalid UTF-8")
            } catch {
                #expect(error.code == .invalidArgument && error.message.hasSuffix(message), "\(method): \(error)")
            }
        }
    }

    @Test(arguments: [
        ("   ", "a name must have a character that is not a space"),
        ("ad\u{200B}min", "a name cannot hold control or invisible formatting characters (found U+200B): names that print alike must be one name"),
        ("\u{202E}nimda", "a name cannot hold control or invisible formatting characters (found U+202E): names that print alike must be one name"),
        ("a\u{7}b", "a name cannot hold control or invisible formatting characters (found U+0007): names that print alike must be one name"),
        (String(repeating: "x", count: 65), "a name must be 1 to 64 characters, got 65"),
        // Default-ignorable code points print as nothing: variation selectors, the combining
        // grapheme joiner, a Mongolian free variation selector, Hangul fillers.
        ("admin\u{FE0F}", "a name cannot hold control or invisible formatting characters (found U+FE0F): names that print alike must be one name"),
        ("admin\u{FE00}", "a name cannot hold control or invisible formatting characters (found U+FE00): names that print alike must be one name"),
        ("admin\u{34F}", "a name cannot hold control or invisible formatting characters (found U+034F): names that print alike must be one name"),
        ("admin\u{180B}", "a name cannot hold control or invisible formatting characters (found U+180B): names that print alike must be one name"),
        ("admin\u{115F}", "a name cannot hold control or invisible formatting characters (found U+115F): names that print alike must be one name"),
        ("admin\u{1160}", "a name cannot hold control or invisible formatting characters (found U+1160): names that print alike must be one name"),
        ("admin\u{3164}", "a name cannot hold control or invisible formatting characters (found U+3164): names that print alike must be one name"),
        ("admin\u{FFA0}", "a name cannot hold control or invisible formatting characters (found U+FFA0): names that print alike must be one name"),
        ("\u{430}dmin\u{34F}", "a name cannot hold control or invisible formatting characters (found U+034F): names that print alike must be one name"),
    ])
    func namesThatHideWhatTheyAreAreRefusedSayingWhy(name: String, message: String) throws {
        let folder = try TemporaryFolder()
        let (_, session) = try SessionTests.makeSession(folder: folder)
        #expect(throws: ServiceError(.invalidArgument, message)) { try session.register(name, password: "long enough") }
    }

    @Test func anUnknownNameCostsWhatTheDearestStoredHashCosts() async throws {
        let folder = try TemporaryFolder()
        // Ann's hash is cheap (made before kdf_rounds was raised); the session now runs with
        // far more rounds. Before, an unknown name cost the new rounds and a wrong password for
        // ann the old ones: 200 times apart.
        do {
            let (store, session) = try SessionTests.makeSession(folder: folder, rounds: 1_000)
            _ = try session.register("ann", password: "correct horse")
            store.close()
        }
        let (_, session) = try SessionTests.makeSession(folder: folder, rounds: 200_000)
        func seconds(_ name: String, _ password: String) async -> Double {
            let started = Date()
            _ = try? await session.login(name, password: password)
            return Date().timeIntervalSince(started)
        }
        var wrong: [Double] = [], unknown: [Double] = []
        for round in 0..<3 {
            wrong.append(await seconds("ann", "wrong \(round)"))
            unknown.append(await seconds("nobody\(round)", "correct horse"))
            _ = try await session.login("ann", password: "correct horse")   // resets ann's failures
        }
        let wrongMedian = wrong.sorted()[1], unknownMedian = unknown.sorted()[1]
        // Equal work; a loaded machine blurs the times, but never by the factor the bug made.
        #expect(wrongMedian * 4 > unknownMedian && unknownMedian * 4 > wrongMedian,
                "wrong password \(wrong), unknown name \(unknown)")
    }
}
