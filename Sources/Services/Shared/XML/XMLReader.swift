import Model

/// A streaming XML reader: start tags, end tags and text, one at a time, from a document in
/// memory or a file read in pieces (so a large GPX track is replayed as it is read, in bounded
/// memory). The one XML reader of the services: feeds and GPX both read through it, and it
/// needs neither Foundation nor libxml2.
///
/// What it reads:
/// - the encodings of ``XMLEncoding`` (UTF-8 by default, UTF-16 with its byte order mark,
///   ISO-8859-1 and others as the XML declaration says), always giving UTF-8 text;
/// - namespaces (see ``XMLElement``), CDATA (as text), comments, processing instructions and
///   the doctype (skipped, internal subset included);
/// - XML's five entities and character references; HTML 4.01's named entities too (`&nbsp;`,
///   which feeds written by HTML tools use). Other entities, including those a doctype
///   declares, are never expanded ("billion laughs", external files): they stay as written, as
///   does an `&` that starts no reference (`AT&T`).
///
/// It checks what makes the structure unambiguous: every element closes in order, tags and
/// attributes are complete and quoted, one root element. A document that breaks one of these
/// fails with `invalid_data`: `malformed XML at line 3, column 14: the end tag </item> does not
/// match <title>`. Reading stops when the root element closes; what follows it is not read.
///
/// ```swift
/// var reader = try XMLReader(bytes: Array(document.utf8))
/// while let event = try reader.next() {
///     if case .start(let element) = event, element.name == "trkpt" { print(element.attribute("lat") ?? "?") }
/// }
/// ```
struct XMLReader {
    /// What ``next()`` returns.
    enum Event {
        /// A start tag. A self-closing tag (`<br/>`) gives a start and then an end.
        case start(XMLElement)
        /// An end tag, with the local name and namespace of the element it closes.
        case end(name: String, namespace: String)
        /// Character data, references decoded, line breaks normalized to `\n`. An element's text
        /// can come in several pieces (around CDATA sections, comments, at the reader's
        /// buffer boundaries); join them.
        case text(String)
    }

    /// An element that is open, for matching its end tag and ending its namespace declarations.
    private struct OpenElement {
        let qualifiedName: String
        let name: String
        let namespace: String
        let scopeMark: Int
    }

    /// How much of a file is read at a time.
    static let chunkSize = 64 * 1024

    /// The default for ``maxMarkupBytes``: a megabyte, thousands of times a GPX point's tag.
    static let defaultMaxMarkupBytes = 1 << 20

    /// The most bytes one tag, comment, processing instruction, CDATA section or doctype may take
    /// in a file read in pieces: it is held whole until it ends, so a longer one (a hostile
    /// 400 MiB attribute) fails with `invalid_data` instead of growing memory and being read
    /// again at every piece. Text between tags is given in pieces and needs no limit.
    var maxMarkupBytes = XMLReader.defaultMaxMarkupBytes

    /// The document so far, as UTF-8; bytes before `position` are read.
    var buffer: [UInt8]
    var position: Int
    /// Where more bytes come from; nil once everything is in `buffer`.
    private var file: FileStream?
    private var decoder: XMLDecoder
    /// Lines and columns (in characters) of the bytes dropped from the front of `buffer`, for
    /// error locations.
    private var droppedLines = 0
    private var droppedColumns = 0

    private var open: [OpenElement] = []
    var scope = XMLNamespaceScope()
    private var closesNext = false
    private var sawRoot = false
    private var finished = false

    /// Whether ``next()`` returns text. When false, text and CDATA are skipped, which is
    /// faster; a reader sets it while it is outside the elements whose text it wants.
    var collectsText = true

    /// A document in memory.
    init(bytes: [UInt8]) throws(ServiceError) {
        let (encoding, bom) = try XMLEncoding.detect(bytes[...])
        decoder = XMLDecoder(encoding)
        if encoding == .utf8 {
            buffer = bytes
            position = bom
        } else {
            buffer = []
            buffer.reserveCapacity(bytes.count)
            decoder.decode(bytes[bom...], into: &buffer, final: true)
            position = 0
        }
    }

    /// A file, read in pieces of ``chunkSize`` as the reading goes.
    ///
    /// - Throws: `unavailable` when it cannot be opened, `io` when reading fails,
    ///   `invalid_data` for an encoding it does not read.
    init(path: String) throws(ServiceError) {
        let file = try FileStream(path: path)
        var head = try file.read(upTo: Self.chunkSize)
        // Enough to see the XML declaration whole, unless the file is that short.
        while head.count < 512 {
            let more = try file.read(upTo: Self.chunkSize)
            if more.isEmpty { break }
            head += more
        }
        let (encoding, bom) = try XMLEncoding.detect(head[...])
        decoder = XMLDecoder(encoding)
        self.file = file
        buffer = []
        position = 0
        decoder.decode(head[bom...], into: &buffer, final: false)
    }

    /// Whether every byte of the document is in the buffer.
    var isFinal: Bool { file == nil }

    /// The next event, or nil when the root element has closed.
    ///
    /// - Throws: `invalid_data` for a malformed document, `io` when a file cannot be read.
    mutating func next() throws(ServiceError) -> Event? {
        if closesNext {
            closesNext = false
            return closeElement()
        }
        while !finished {
            // A refill can add nothing (an empty file's last read, bytes that end mid-character).
            while position == buffer.count {
                guard try refill() else { return try endOfDocument() }
            }
            let start = position
            switch try step() {
            case .event(let event): return event
            case .skipped: continue
            case .needsMore:
                position = start
                _ = try refill()
            }
        }
        return nil
    }

    /// What one step of reading gave: an event, nothing to report (a comment, skipped text), or
    /// a construct the buffer ends in the middle of (possible only while more bytes can come).
    enum Step {
        case event(Event)
        case skipped
        case needsMore
    }

    /// Reads one construct at `position`, moving past it.
    private mutating func step() throws(ServiceError) -> Step {
        guard buffer[position] == UInt8(ascii: "<") else { return try characterData() }
        guard position + 1 < buffer.count else { return try incomplete("a '<' ends the document") }
        switch buffer[position + 1] {
        case UInt8(ascii: "/"): return try endTag()
        case UInt8(ascii: "?"): return try processingInstruction()
        case UInt8(ascii: "!"): return try markupDeclaration()
        default: return try startTag()
        }
    }

    /// `.needsMore` while the document goes on; at its end, `problem` (said of the construct
    /// at `position`).
    /// A construct longer than ``maxMarkupBytes`` fails with `problem` and the limit.
    func incomplete(_ problem: @autoclosure () -> String) throws(ServiceError) -> Step {
        guard isFinal else {
            guard buffer.count - position <= maxMarkupBytes else {
                throw ServiceError(.invalidData, "XML too large to read at \(location()): \(problem()) within \(maxMarkupBytes) bytes, "
                                   + "the most one tag, comment or declaration may take")
            }
            return .needsMore
        }
        throw malformed(problem())
    }

    /// Moves the unread bytes to the front of the buffer and reads more after them; false at
    /// the end of the file (or when there is no file).
    private mutating func refill() throws(ServiceError) -> Bool {
        guard let file else { return false }
        if position > 0 {
            countDropped(buffer[..<position])
            buffer.removeFirst(position)
            position = 0
        }
        let bytes = try file.read(upTo: Self.chunkSize)
        decoder.decode(bytes[...], into: &buffer, final: bytes.isEmpty)
        if bytes.isEmpty { self.file = nil }
        return true
    }

    private mutating func countDropped(_ bytes: ArraySlice<UInt8>) {
        if let lastBreak = bytes.lastIndex(of: UInt8(ascii: "\n")) {
            droppedLines += bytes.count { $0 == UInt8(ascii: "\n") }
            droppedColumns = Self.characters(bytes[(lastBreak + 1)...])
        } else {
            droppedColumns += Self.characters(bytes)
        }
    }

    private static func characters(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.count { $0 & 0xC0 != 0x80 }
    }

    /// At the end of the bytes: the root element is still open, or there never was one.
    private mutating func endOfDocument() throws(ServiceError) -> Event? {
        if let innermost = open.last {
            throw malformed("the document ends before <\(innermost.qualifiedName)> is closed")
        }
        throw malformed(sawRoot ? "the document ends early" : "the document has no root element")
    }

    // MARK: Elements

    /// Opens `element`, whose declarations are already in `scope` above `mark`.
    mutating func openElement(_ element: XMLElement, scopeMark: Int, selfClosing: Bool) -> Event {
        sawRoot = true
        open.append(OpenElement(qualifiedName: element.qualifiedName, name: element.name, namespace: element.namespace,
                                scopeMark: scopeMark))
        closesNext = selfClosing
        return .start(element)
    }

    /// Whether an element is open (text outside the root element is not allowed).
    var isInsideRoot: Bool { !open.isEmpty }

    /// Whether the root element was read already (a doctype must come before it).
    var hasRoot: Bool { sawRoot }

    /// The element an end tag written `name` must close.
    var innermostName: String? { open.last?.qualifiedName }

    mutating func closeElement() -> Event {
        // Invariant: called for an end tag matched against `open.last`, or right after the
        // self-closing start tag that pushed it, so `open` is not empty.
        let element = open.removeLast()
        scope.pop(to: element.scopeMark)
        if open.isEmpty { finished = true }
        return .end(name: element.name, namespace: element.namespace)
    }

    // MARK: Errors

    /// `invalid_data`: `malformed XML at line L, column C: problem`, at `offset` in the buffer
    /// (the reading position by default).
    func malformed(_ problem: String, at offset: Int? = nil) -> ServiceError {
        ServiceError(.invalidData, "malformed XML at \(location(at: offset)): \(problem)")
    }

    /// `line L, column C` of `offset` in the buffer (the reading position by default).
    private func location(at offset: Int? = nil) -> String {
        let offset = min(offset ?? position, buffer.count)
        let before = buffer[..<offset]
        var line = droppedLines + 1
        var column: Int
        if let lastBreak = before.lastIndex(of: UInt8(ascii: "\n")) {
            line += before.count { $0 == UInt8(ascii: "\n") }
            column = Self.characters(before[(lastBreak + 1)...])
        } else {
            column = droppedColumns + Self.characters(before)
        }
        column += 1
        return "line \(line), column \(column)"
    }
}
