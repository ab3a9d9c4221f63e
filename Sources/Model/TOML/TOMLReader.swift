/// A strict reader of TOML 1.0 (https://toml.io/en/v1.0.0): the text of a document in, its
/// root table out as model values, or the first thing wrong with it and its line.
///
/// Tables become objects, arrays arrays, integers `integer`, floats `number`; dates and times
/// stay strings, as written (RFC 3339, with `T` between date and time). Nesting is bounded:
/// `maxDepth` levels of tables and arrays (a header's and a key's parts count), keys of at most
/// ``maxKeyParts`` parts, so no input makes it recurse deeply. It never traps on input: every
/// malformed document is an error.
///
/// ```swift
/// let root = try TOMLReader.read("[store]\npath = \"data/store.sqlite\"\n")
/// // root["store"] == .object(["path": .string("data/store.sqlite")])
/// ```
public struct TOMLReader {
    /// How many dotted parts a key or a table name may have.
    public static let maxKeyParts = 101

    /// Reads `text`.
    ///
    /// - Throws: ``TOMLError`` naming the 1-based line of the first problem.
    public static func read(_ text: String, maxDepth: Int = 100) throws(TOMLError) -> Fields {
        try read(validUTF8: Array(text.utf8), maxDepth: maxDepth)
    }

    /// Reads the document whose UTF-8 encoding is `bytes` (a file's contents, checked to be
    /// UTF-8 by the caller: a byte sequence that is not UTF-8 reads as replacement characters).
    ///
    /// - Throws: ``TOMLError`` naming the 1-based line of the first problem.
    public static func read(validUTF8 bytes: [UInt8], maxDepth: Int = 100) throws(TOMLError) -> Fields {
        var reader = TOMLReader(text: bytes, maxDepth: maxDepth)
        try reader.document()
        return reader.root.fields
    }

    /// The document's UTF-8 bytes. Everything TOML gives a meaning to is ASCII, and no byte of a
    /// longer UTF-8 sequence is, so the reader decides byte by byte and copies other characters
    /// whole into strings (start-up reads every plugin's manifest).
    let text: [UInt8]
    var at = 0
    var line = 1
    let maxDepth: Int
    private var root = TOMLTable(origin: .header)
    /// The table the key/value lines go to: the last header's path.
    private var current: [String] = []

    private init(text: [UInt8], maxDepth: Int) {
        self.text = text
        self.maxDepth = maxDepth
    }

    // MARK: Lines

    private mutating func document() throws(TOMLError) {
        if peek() == 0xEF && peek(1) == 0xBB && peek(2) == 0xBF { at += 3 }     // a byte order mark
        while at < text.count {
            skipWhitespace()
            switch peek() {
            case nil, UInt8(ascii: "#"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): break
            case UInt8(ascii: "["): try header()
            default: try keyValue()
            }
            try endOfLine()
        }
    }

    /// After an expression: blanks, a comment perhaps, then a line break or the end.
    mutating func endOfLine() throws(TOMLError) {
        skipWhitespace()
        if peek() == UInt8(ascii: "#") { try comment() }
        guard peek() != nil else { return }
        guard skipLineBreak() else {
            throw fail("expected the end of the line, found \(shownHere()) (one key = value or [table] per line)")
        }
    }

    private mutating func comment() throws(TOMLError) {
        at += 1
        while let next = peek(), next != UInt8(ascii: "\n"), !(next == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n")) {
            if Self.isControl(next) { throw fail("a comment cannot hold the control character \(shownHere())") }
            at += 1
        }
    }

    /// `[name]` or `[[name]]`.
    private mutating func header() throws(TOMLError) {
        at += 1
        let isArray = peek() == UInt8(ascii: "[")
        if isArray { at += 1 }
        skipWhitespace()
        guard let first = peek() else { throw fail("a table header ends before its name") }
        guard Self.isBareKey(first) || first == UInt8(ascii: "\"") || first == UInt8(ascii: "'") else {
            throw fail("a table name cannot start with \(shownHere()): use letters, digits, _ and -, or quote it ([\"name\"])")
        }
        let path = try key()
        let closing = isArray ? "]]" : "]"
        for _ in 0..<(isArray ? 2 : 1) {
            guard peek() == UInt8(ascii: "]") else {
                throw fail("expected '\(closing)' after the table name \(TOMLTable.dotted(path)), found \(shownHere())")
            }
            at += 1
        }
        guard path.count <= maxDepth else { throw nestedTooDeeply() }
        do {
            if isArray { try root.appendTable(at: path) } else { try root.defineTable(at: path) }
        } catch {
            throw fail(error.message)
        }
        current = path
    }

    /// `key = value`, into the current table.
    private mutating func keyValue() throws(TOMLError) {
        let path = try key()
        let value = try valueAfterEquals(path, depth: current.count)
        do {
            try root.withTable(at: current[...]) { table throws(TOMLTable.Problem) in try table.insert(value, at: path[...], whole: path) }
        } catch {
            throw fail(error.message)
        }
    }

    /// Blanks, `=`, blanks and the value of `key`, a table `depth` levels deep holding it.
    private mutating func valueAfterEquals(_ key: [String], depth: Int) throws(TOMLError) -> Value {
        skipWhitespace()
        guard peek() == UInt8(ascii: "=") else {
            throw fail("expected '=' after the key \(TOMLTable.dotted(key)), found \(shownHere())")
        }
        at += 1
        skipWhitespace()
        return try value(depth: depth + key.count)
    }

    // MARK: Keys

    /// A key: bare or quoted parts joined by dots (blanks allowed around the dots).
    private mutating func key() throws(TOMLError) -> [String] {
        var parts: [String] = []
        while true {
            skipWhitespace()
            parts.append(try simpleKey())
            guard parts.count <= Self.maxKeyParts else { throw fail("a key has more than \(Self.maxKeyParts) dotted parts") }
            skipWhitespace()
            guard peek() == UInt8(ascii: ".") else { return parts }
            at += 1
        }
    }

    private mutating func simpleKey() throws(TOMLError) -> String {
        switch peek() {
        case nil:
            throw fail("expected a key, found the end of the file")
        case UInt8(ascii: "\""):
            guard !(peek(1) == UInt8(ascii: "\"") && peek(2) == UInt8(ascii: "\"")) else { throw fail("a key cannot be a multi-line string") }
            return try singleLineString(literal: false)
        case UInt8(ascii: "'"):
            guard !(peek(1) == UInt8(ascii: "'") && peek(2) == UInt8(ascii: "'")) else { throw fail("a key cannot be a multi-line string") }
            return try singleLineString(literal: true)
        case _?:
            let start = at
            while let next = peek(), Self.isBareKey(next) { at += 1 }
            guard at > start else {
                throw fail("expected a key, found \(shownHere()) (bare keys are letters, digits, _ and -; quote others)")
            }
            return string(start..<at)
        }
    }

    // MARK: Values

    /// A value `depth` levels deep.
    mutating func value(depth: Int) throws(TOMLError) -> Value {
        guard depth <= maxDepth else { throw nestedTooDeeply() }
        switch peek() {
        case nil, UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "#"):
            throw fail("expected a value after '='")
        case UInt8(ascii: "\""):
            let tripled = peek(1) == UInt8(ascii: "\"") && peek(2) == UInt8(ascii: "\"")
            return .string(tripled ? try multilineString(literal: false) : try singleLineString(literal: false))
        case UInt8(ascii: "'"):
            let tripled = peek(1) == UInt8(ascii: "'") && peek(2) == UInt8(ascii: "'")
            return .string(tripled ? try multilineString(literal: true) : try singleLineString(literal: true))
        case UInt8(ascii: "["):
            return try array(depth: depth)
        case UInt8(ascii: "{"):
            return try inlineTable(depth: depth)
        default:
            return try scalar()
        }
    }

    private mutating func array(depth: Int) throws(TOMLError) -> Value {
        let opened = line
        at += 1
        var items: [Value] = []
        while true {
            try skipBlankLines()
            guard let next = peek() else { throw TOMLError(line: opened, message: "an array is not closed (a ']' is missing)") }
            if next == UInt8(ascii: "]") { break }
            items.append(try value(depth: depth + 1))
            try skipBlankLines()
            guard let after = peek() else { throw TOMLError(line: opened, message: "an array is not closed (a ']' is missing)") }
            if after == UInt8(ascii: "]") { break }
            guard after == UInt8(ascii: ",") else { throw fail("expected ',' or ']' after an array's value, found \(shownHere())") }
            at += 1
        }
        at += 1
        return .array(items)
    }

    private mutating func inlineTable(depth: Int) throws(TOMLError) -> Value {
        at += 1
        var table = TOMLTable(origin: .dotted)
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            at += 1
            return .object(table.fields)
        }
        while true {
            let path = try key()
            let value = try valueAfterEquals(path, depth: depth)
            do {
                try table.insert(value, at: path[...], whole: path)
            } catch {
                throw fail(error.message)
            }
            skipWhitespace()
            guard let next = peek(), next != UInt8(ascii: "\n"), next != UInt8(ascii: "\r") else {
                throw fail("an inline table must end on its line with '}'")
            }
            if next == UInt8(ascii: "}") {
                at += 1
                return .object(table.fields)
            }
            guard next == UInt8(ascii: ",") else { throw fail("expected ',' or '}' after an inline table's value, found \(shownHere())") }
            at += 1
        }
    }

    // MARK: Scanning

    func peek(_ offset: Int = 0) -> UInt8? {
        at + offset < text.count ? text[at + offset] : nil
    }

    /// The text of the bytes in `range`, which start and end on whole characters.
    func string(_ range: Range<Int>) -> String {
        text.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// The character at `at` for a message, or "the end of the file".
    func shownHere() -> String { shown(at: at) }

    /// The character at `index` for a message (``shown(_:)``), or "the end of the line" or "the
    /// end of the file" (a newline is not a character anyone looked for as `U+A`).
    func shown(at index: Int) -> String {
        guard index < text.count else { return "the end of the file" }
        if text[index] == UInt8(ascii: "\n") || (text[index] == UInt8(ascii: "\r") && index + 1 < text.count && text[index + 1] == UInt8(ascii: "\n")) {
            return "the end of the line"
        }
        let bytes = text[index..<min(index + 4, text.count)]
        let scalar = String(decoding: bytes, as: UTF8.self).unicodeScalars.first ?? "\u{FFFD}"
        return Self.shown(scalar)
    }

    mutating func skipWhitespace() {
        while let next = peek(), next == UInt8(ascii: " ") || next == UInt8(ascii: "\t") { at += 1 }
    }

    /// Skips a line break (`\n` or `\r\n`), counting it; false when there is none here.
    mutating func skipLineBreak() -> Bool {
        if peek() == UInt8(ascii: "\n") {
            at += 1
        } else if peek() == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n") {
            at += 2
        } else {
            return false
        }
        line += 1
        return true
    }

    /// Blanks, comments and line breaks (between an array's values).
    private mutating func skipBlankLines() throws(TOMLError) {
        while true {
            skipWhitespace()
            if peek() == UInt8(ascii: "#") { try comment() }
            guard skipLineBreak() else { return }
        }
    }

    func fail(_ message: String) -> TOMLError {
        TOMLError(line: line, message: message)
    }

    private func nestedTooDeeply() -> TOMLError {
        fail("tables and arrays are nested more than \(maxDepth) levels deep")
    }

    // MARK: Characters

    /// A character of a bare key: A-Z, a-z, 0-9, `_` and `-`.
    static func isBareKey(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    /// A character of a bare key, as a scalar (for keys already read).
    static func isBareKey(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && isBareKey(UInt8(scalar.value))
    }

    /// A control character TOML refuses outside escapes (all but tab); no byte of a longer UTF-8
    /// sequence is one.
    static func isControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7F
    }

    /// A character for a message, quoted: invisible ones (controls, combining marks, blanks)
    /// as `U+XXXX`.
    static func shown(_ scalar: Unicode.Scalar) -> String {
        let invisible = scalar.value <= 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
            || scalar.properties.generalCategory == .nonspacingMark
        return "'" + (invisible ? "U+" + String(scalar.value, radix: 16, uppercase: true) : String(scalar)) + "'"
    }
}

/// What is wrong with a TOML document, and on which line.
public struct TOMLError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The 1-based line.
    public let line: Int
    public let message: String

    public var description: String { "line \(line): \(message)" }
}
