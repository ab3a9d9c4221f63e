import Model
import Testing

/// The TOML reader against the TOML 1.0 specification's examples, and what it refuses: each
/// malformed document an error naming its line, never a trap (the parser it replaced aborted on
/// several, found by fuzzing the config file).
@Suite struct TOMLReaderTests {
    private func read(_ text: String) throws -> Fields { try TOMLReader.read(text) }

    private func error(_ text: String) -> TOMLError? {
        do {
            _ = try TOMLReader.read(text)
            return nil
        } catch {
            return error
        }
    }

    /// Each text is refused with an error on that line whose message starts so.
    private func expectRefused(_ cases: [(text: String, line: Int, message: String)], sourceLocation: SourceLocation = #_sourceLocation) {
        for (text, line, message) in cases {
            let found = error(text)
            #expect(found?.line == line && found?.message.hasPrefix(message) == true, "\(text.debugDescription): \(String(describing: found))",
                    sourceLocation: sourceLocation)
        }
    }

    @Test func readsTablesKeysAndValues() throws {
        let root = try read("""
            # a comment
            title = "TOML \\"Example\\"" # after a value
            [owner]
            name = 'Tom \\ Preston-Werner'
            "quoted key" = 1
            site."google.com" = true
            [database]
            ports = [ 8000, 8001, 8002, ]
            data = [ ["delta", "phi"], [3.14], ]
            temp_targets = { cpu = 79.5, case = 72.0 }
            nested = [
              1, # one
              { a.b = 2 },
            ]
            [servers.alpha]
            ip = "10.0.0.1"
            [[products]]
            name = "Hammer"
            [[products]]
            [[products]]
            name = "Nail"
            """)
        #expect(root["title"] == .string("TOML \"Example\""))
        #expect(root["owner"] == .object(["name": "Tom \\ Preston-Werner", "quoted key": 1, "site": .object(["google.com": true])]))
        #expect(root["database"]?["ports"] == .array([8000, 8001, 8002]))
        #expect(root["database"]?["data"] == .array([.array(["delta", "phi"]), .array([3.14])]))
        #expect(root["database"]?["temp_targets"] == .object(["cpu": 79.5, "case": 72.0]))
        #expect(root["database"]?["nested"] == .array([1, .object(["a": .object(["b": 2])])]))
        #expect(root["servers"] == .object(["alpha": .object(["ip": "10.0.0.1"])]))
        #expect(root["products"] == .array([.object(["name": "Hammer"]), .object([:]), .object(["name": "Nail"])]))
    }

    @Test func readsNumbersBooleansAndDates() throws {
        let root = try read("""
            a = +99
            b = -17
            c = 1_000
            d = 0xDEAD_beef
            e = 0o755
            f = 0b1101
            g = 6.626e-34
            h = -0.01
            i = 5e+22
            j = 9_224_617.445_991
            k = true
            l = -inf
            m = 1979-05-27T07:32:00Z
            n = 1979-05-27 00:32:00.999-07:00
            o = 1979-05-27t07:32:00
            p = 1979-05-27
            q = 07:32:00.5
            r = 9223372036854775807
            s = -9223372036854775808
            t = 0
            """)
        let expected: Fields = [
            "a": 99, "b": -17, "c": 1_000, "d": .integer(0xDEAD_BEEF), "e": 0o755, "f": 0b1101, "g": 6.626e-34,
            "h": -0.01, "i": 5e22, "j": 9_224_617.445_991, "k": true, "l": .number(-.infinity),
            "m": "1979-05-27T07:32:00Z", "n": "1979-05-27T00:32:00.999-07:00", "o": "1979-05-27T07:32:00",
            "p": "1979-05-27", "q": "07:32:00.5", "r": .integer(.max), "s": .integer(.min), "t": 0,
        ]
        for (key, value) in expected { #expect(root[key] == value, "\(key)") }
        #expect(try read("x = nan")["x"]?.doubleValue?.isNaN == true)
        #expect(try read("\u{FEFF}x = 1")["x"] == 1, "a byte order mark is no key")
    }

    @Test func readsStringsOfEveryKind() throws {
        let root = try read(#"""
            a = "tab\tnew\nquote\" \u00E9 \U0001F600"
            b = 'C:\Users\nodejs'
            c = """
            Roses are red
            Violets are blue"""
            d = """\
                The quick brown \
                fox."""
            e = """Here are two quotation marks: "". Simple enough."""
            f = """""five"""""
            g = '''
            The first newline is
            trimmed in raw strings.
               All other whitespace
               is preserved.
            '''
            h = ''''That,' she said, 'is still pointless.''''
            "ß € 😀" = 'ß € 😀'
            """#)
        #expect(root["a"] == .string("tab\tnew\nquote\" é 😀"))
        #expect(root["b"] == .string(#"C:\Users\nodejs"#))
        #expect(root["c"] == .string("Roses are red\nViolets are blue"))
        #expect(root["d"] == .string("The quick brown fox."))
        #expect(root["e"] == .string(#"Here are two quotation marks: "". Simple enough."#))
        #expect(root["f"] == .string("\"\"five\"\""))
        #expect(root["g"] == .string("The first newline is\ntrimmed in raw strings.\n   All other whitespace\n   is preserved.\n"))
        #expect(root["h"] == .string("'That,' she said, 'is still pointless.'"))
        #expect(root["ß € 😀"] == .string("ß € 😀"), "scalars of two, three and four UTF-8 bytes, in a key and a value")
    }

    /// Strings are taken whole from the document until an escape; after one they are built, the
    /// characters before it (of several bytes too) included.
    @Test func stringsWithEscapesAfterWideCharacters() throws {
        let root = try read(#"""
            a = "é€😀\n!"
            b = "ß\u00DF"
            "ké\t" = 'é\t'
            c = """é\
                ß"""
            """#)
        #expect(root["a"] == .string("é€😀\n!"))
        #expect(root["b"] == .string("ßß"))
        #expect(root["ké\t"] == .string("é\\t"))
        #expect(root["c"] == .string("éß"))
    }

    /// A byte order mark is skipped; a table takes any number of keys; tables are added to
    /// after other tables, through dotted keys and through arrays of tables.
    @Test func wideTablesAndTablesAddedToLater() throws {
        #expect(try read("\u{FEFF}a = 1\n") == ["a": 1])
        #expect(try read("a = 0\nb = 7\nc = 123456789012345678\nd = 9223372036854775807\ne = 1979-05-27\n")
                == ["a": 0, "b": 7, "c": 123_456_789_012_345_678, "d": .integer(9_223_372_036_854_775_807), "e": "1979-05-27"])
        let keys = (0..<40).map { "k\($0) = \($0)" }.joined(separator: "\n")
        let wide = try read("[t]\n" + keys + "\n[t.sub]\nx = 1\n")
        guard case .object(let table)? = wide["t"] else {
            Issue.record("no table t: \(wide)")
            return
        }
        #expect(table.count == 41 && table["k0"] == 0 && table["k39"] == 39 && table["sub"]?["x"] == 1)
        let later = try read("""
            [a.b]
            c = 1
            [a.d]
            e = 2
            [a]
            f.g = 3
            f.h = 4
            [[list]]
            x.y = 1
            [list.z]
            w = 2
            [[list]]
            x.y = 3
            """)
        #expect(later["a"] == .object(["b": .object(["c": 1]), "d": .object(["e": 2]), "f": .object(["g": 3, "h": 4])]))
        #expect(later["list"] == .array([.object(["x": .object(["y": 1]), "z": .object(["w": 2])]), .object(["x": .object(["y": 3])])]))
        expectRefused([
            ("[a]\nb = 1\n[c]\n[a.x]\nb = 2\n[a]", 6, "the table [a] is defined twice"),
            ("[[l]]\nx = 1\nx = 2", 3, "the key 'x' is defined twice"),
            ("t = { a.b = 1, a.b = 2 }", 1, "the key 'a.b' is defined twice"),
        ])
    }

    @Test func tablesAreDefinedOnceAndInOneWay() throws {
        // Allowed: a super-table after its sub-table, a sub-table of a table made by dotted keys.
        #expect(try read("[x.y.z.w]\n[x]\na = 1")["x"]?["a"] == 1)
        #expect(try read("[fruit]\napple.color = 'red'\n[fruit.apple.texture]\nsmooth = true")["fruit"]?["apple"]["texture"]["smooth"] == true)
        let refused: [(String, Int, String)] = [
            ("a = 1\na = 2", 2, "the key 'a' is defined twice"),
            ("[a]\nb = 1\n[a]", 3, "the table [a] is defined twice"),
            ("[fruit]\napple.color = 'red'\n[fruit.apple]", 3, "the table [fruit.apple] was made by dotted keys already"),
            ("[a.b.c]\nz = 9\n[a]\nb.c.t = 1", 4, "'b' is a table defined elsewhere"),
            ("x = { a = 1 }\n[x]", 2, "'x' is a value already, not a table"),
            ("x = { a = 1 }\nx.b = 2", 2, "'x' is a value already, not a table"),
            ("a = [1]\n[[a]]", 2, "'a' is defined already, not as an array of tables"),
            ("[[a]]\n[a]", 2, "[a] is an array of tables ([[a]]), not a table"),
            ("x = { a = 1, a = 2 }", 1, "the key 'a' is defined twice"),
            ("a.b = 1\na.b.c = 2", 2, "'a.b' is a value already, not a table"),
        ]
        expectRefused(refused)
    }

    /// Each of these made the parser the reader replaced assert (abort) or read it wrongly.
    @Test func malformedDocumentsAreErrorsWithTheirLine() {
        let refused: [(String, Int, String)] = [
            ("[locaton]\nx = [1, {a = [}]", 2, "expected a value, found '}'"),
            ("x = [}", 1, "expected a value, found '}'"),
            ("[[[1]]]", 1, "a table name cannot start with '['"),
            ("[\u{1}", 1, "a table name cannot start with 'U+1'"),
            ("[\u{369}]", 1, "a table name cannot start with 'U+369'"),
            ("x = ", 1, "expected a value after '='"),
            ("x = 1 2", 1, "expected the end of the line"),
            ("x = \"abc", 1, "a string is not closed on its line"),
            ("x = \"\"\"abc\n\n", 1, "a multi-line string is not closed"),
            ("x = [1,\n2\n", 1, "an array is not closed"),
            ("x = { a = 1\n}", 1, "an inline table must end on its line"),
            ("x = { a = 1, }", 1, "expected a key, found '}'"),
            ("x = 012", 1, "'012' is not a valid number"),
            ("x = 1__0", 1, "'1__0' is not a valid number"),
            ("x = 9223372036854775808", 1, "the number 9223372036854775808 is out of range"),
            ("x = 1e400", 1, "the number 1e400 is out of range"),
            ("x = 0x", 1, "'0x' is not a valid number"),
            ("x = 1979-02-30", 1, "'1979-02-30' is not a valid number or date"),
            ("x = \"\\q\"", 1, "unknown escape \\q"),
            ("x = \"\\uD800\"", 1, "\\uD800 is not a Unicode scalar value"),
            ("x = \"a\u{7F}\"", 1, "a string cannot hold the control character 'U+7F'"),
            ("# \u{0}\n", 1, "a comment cannot hold the control character 'U+0'"),
            ("x = yes", 1, "expected a value, found yes"),
            ("\n\n\"\"\"x\"\"\" = 1", 3, "a key cannot be a multi-line string"),
            ("x = 1\r", 1, "expected the end of the line, found 'U+D'"),
            ("[store\nx = 1", 1, "expected ']' after the table name store, found the end of the line"),
            ("[store\r\nx = 1", 1, "expected ']' after the table name store, found the end of the line"),
        ]
        expectRefused(refused)
    }

    @Test func nestingAndKeyLengthAreBounded() {
        let deepKey = "x" + String(repeating: ".a", count: 200_000) + " = 1"
        #expect(error(deepKey)?.message == "a key has more than 101 dotted parts")
        let deepArray = "x = " + String(repeating: "[", count: 100_000)
        #expect(error(deepArray)?.message == "tables and arrays are nested more than 100 levels deep")
        let deepInline = "[a]\nx = " + String(repeating: "{ a = ", count: 150) + "1" + String(repeating: " }", count: 150)
        #expect(error(deepInline)?.line == 2 && error(deepInline)?.message == "tables and arrays are nested more than 100 levels deep")
        #expect((try? TOMLReader.read("[store]\nx" + String(repeating: ".a", count: 98) + " = 1")) != nil, "100 levels are allowed")
    }
}
