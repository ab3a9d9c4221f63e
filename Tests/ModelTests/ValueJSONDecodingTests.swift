import Model
import Testing

@Suite struct ValueJSONDecodingTests {
    @Test func readsEveryKindOfValue() throws {
        let value = try Value(jsonText: #" {"a":[1,-2.5e1,true,false,null,"x\"\u00e9\n"],"b":{},"c":[]} "#)
        #expect(value == .object(["a": [1, -25.0, true, false, nil, "x\"é\n"], "b": .object([:]), "c": .array([])]))
    }

    @Test func keepsIntegersAndFloatsApart() throws {
        #expect(try Value(jsonText: "3") == .integer(3))
        #expect(try Value(jsonText: "3.0") == .number(3))
        #expect(try Value(jsonText: "-0") == .integer(0))
        #expect(try Value(jsonText: "1e2") == .number(100))
        #expect(try Value(jsonText: "9223372036854775807") == .integer(.max))
        // Past 64 bits an integer reads as a float, as Lua's json does.
        #expect(try Value(jsonText: "9223372036854775808") == .number(9223372036854775808))
    }

    @Test func roundTripsWhatTheEncoderWrites() throws {
        let original: Value = .object(["n": 1, "x": 1.5, "big": 1e300, "s": "tab\t\u{1}é😀", "list": [nil, true, .object([:])]])
        #expect(try Value(jsonText: original.jsonText) == original)
    }

    /// A lone surrogate is text that is not Unicode: refused, as the encoder refuses a string that
    /// is not UTF-8, never replaced.
    @Test func joinsSurrogatePairsAndRefusesLoneOnes() throws {
        #expect(try Value(jsonText: #""\ud83d\ude00""#) == "😀")
        #expect(throws: ServiceError(.invalidData, #"invalid JSON: a lone surrogate \ud83d at line 1, column 2 (byte 1) (a \uD800-\uDBFF escape must be followed by a \uDC00-\uDFFF one)"#)) {
            try Value(jsonText: #""\ud83d x""#)
        }
        #expect(throws: ServiceError.self) { try Value(jsonText: #""\ud83d\u0041""#) }
        #expect(throws: ServiceError.self) { try Value(jsonText: #""\udc00""#) }
        #expect(throws: ServiceError(.invalidData, "invalid JSON: a string that is not valid UTF-8 at line 1, column 2 (byte 1) (JSON text is UTF-8)")) {
            try Value(jsonBytes: Array(#""a"#.utf8) + [0xFF] + Array(#"""#.utf8))
        }
    }

    @Test func refusesWhatRFC8259Refuses() {
        for bad in ["", "nul", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "01", "1.", ".5", "+1", "-", "1e", "\"\u{1}\"",
                    "\"abc", "{'a':1}", "[1] x", "\"\\x\"", "\"\\u12\"", "1e400", "NaN", "{1:2}"] {
            #expect(throws: ServiceError.self, "\(bad)") { try Value(jsonText: bad) }
        }
    }

    @Test func errorsNameThePlaceAndWhatWasExpected() {
        #expect(throws: ServiceError(.invalidData, "invalid JSON: unexpected ']' at line 1, column 4 (byte 3) (expected a value)")) {
            try Value(jsonText: "[1,]")
        }
        #expect(throws: ServiceError(.invalidData, "invalid JSON: the text ends at line 1, column 7 (byte 6) (expected ',' or '}')")) {
            try Value(jsonText: #"{"a":1"#)
        }
        #expect(throws: ServiceError(.invalidData, "invalid JSON: unexpected 'x' at line 1, column 5 (byte 4) (expected the end of the document)")) {
            try Value(jsonText: "[1] x")
        }
    }

    @Test func limitsNesting() throws {
        let deep = String(repeating: "[", count: Value.jsonMaxDepth) + String(repeating: "]", count: Value.jsonMaxDepth)
        _ = try Value(jsonText: deep)
        let tooDeep = "[" + deep + "]"
        #expect(throws: ServiceError.self) { try Value(jsonText: tooDeep) }
        // A hostile document deeper than the stack could hold is refused, not a crash.
        #expect(throws: ServiceError.self) { try Value(jsonText: String(repeating: "[", count: 1_000_000)) }
    }

    @Test func readsBytesAndSkipsAByteOrderMark() throws {
        #expect(try Value(jsonBytes: [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == [1])
        #expect(try Value(jsonBytes: "{\"k\":\"v\"}".utf8) == .object(["k": "v"]))
        #expect(try Value(jsonBytes: ArraySlice(Array("  true".utf8))) == true)
    }
}
