import Foundation
import Model
@testable import Services
import Testing

/// The XML reader feeds and GPX share: events, namespaces, references, encodings, streaming from
/// a file, and malformed documents.
@Suite struct XMLReaderTests {
    /// The events of a document, written compactly: `<{ns}name a=v>`, `</name>`, `"text"`
    /// (adjacent text pieces joined).
    static func events(_ reader: inout XMLReader) throws -> [String] {
        var events: [String] = []
        var text = ""
        while let event = try reader.next() {
            if case .text(let piece) = event {
                text += piece
                continue
            }
            if !text.isEmpty { events.append("\"\(text)\"") }
            text = ""
            switch event {
            case .start(let element):
                let namespace = element.namespace.isEmpty ? "" : "{\(element.namespace)}"
                let attributes = element.attributes.map { " \($0.namespace.isEmpty ? "" : "{\($0.namespace)}")\($0.name)=\($0.value)" }
                events.append("<\(namespace)\(element.name)\(attributes.joined())>")
            case .end(let name, _): events.append("</\(name)>")
            case .text: break
            }
        }
        return events
    }

    static func events(_ bytes: [UInt8]) throws -> [String] {
        var reader = try XMLReader(bytes: bytes)
        return try events(&reader)
    }

    static func events(_ text: String) throws -> [String] { try events(Array(text.utf8)) }

    static func failure(_ text: String) -> String? {
        do {
            _ = try events(text)
            return nil
        } catch {
            return (error as? ServiceError)?.message
        }
    }

    @Test func namespacesResolveForElementsAndPrefixedAttributesOnly() throws {
        let events = try Self.events("""
            <?xml version="1.0"?><rss xmlns:a="urn:a" xmlns="urn:default" a:x="1" y='2'>
            <a:link a:href="h" href="g"/><item xmlns="" xml:base="/b/"><title>T</title></item><un:known/></rss>
            """)
        #expect(events == [
            "<{urn:default}rss {urn:a}x=1 y=2>", "\"\n\"", "<{urn:a}link {urn:a}href=h href=g>", "</link>",
            "<item {http://www.w3.org/XML/1998/namespace}base=/b/>", "<title>", "\"T\"", "</title>", "</item>",
            "<un:known>", "</un:known>", "</rss>",
        ])
    }

    @Test func referencesAreDecodedAndEverythingElseStaysAsWritten() throws {
        let events = try Self.events("""
            <!DOCTYPE r [ <!ENTITY e "expanded"> <!-- a '>' in a comment --> <!ATTLIST r a CDATA "x>y"> ]>
            <r a="1&amp;2&#10;three\tfour\r\nfive">&lt;&gt;&amp;&quot;&apos; &#233;&#xE9; &eacute;&nbsp;| AT&T &e; &bogus; &#0;&#xD800;&#x110000; &#12 &;\
            line\r\nbreak\rend<![CDATA[<b>&amp;</b>]]><!-- skipped --><?pi skipped?></r>
            """)
        #expect(events == [
            "<r a=1&2\nthree four five>", // a line break written as a reference stays one
            "\"<>&\"' éé é\u{A0}| AT&T &e; &bogus; \u{FFFD}\u{FFFD}\u{FFFD} &#12 &;line\nbreak\nend<b>&amp;</b>\"", "</r>",
        ])
    }

    @Test func readingStopsAtTheEndOfTheRootElement() throws {
        #expect(try Self.events("<a/>") == ["<a>", "</a>"])
        #expect(try Self.events("<a></a> trailing <b>whatever</c>") == ["<a>", "</a>"])
    }

    @Test func textIsSkippedWhenNotCollected() throws {
        var reader = try XMLReader(bytes: Array("<a>one<b>two</b><![CDATA[three]]></a>".utf8))
        reader.collectsText = false
        #expect(try Self.events(&reader) == ["<a>", "<b>", "</b>", "</a>"])
    }

    @Test(arguments: [
        ("<a><b></a>", "malformed XML at line 1, column 11: the end tag </a> does not match <b>"),
        ("<a>\n  <b>text", "malformed XML at line 2, column 10: the document ends before <b> is closed"),
        ("<a x=1/>", "malformed XML at line 1, column 6: the value of attribute x of <a> is not quoted"),
        ("<a checked>", "malformed XML at line 1, column 4: the attribute checked of <a> has no value (write checked=\"…\")"),
        ("<a x=\"1></a>", "malformed XML at line 1, column 1: the value of attribute x of <a> is not closed"),
        ("<a>1 < 2</a>", "malformed XML at line 1, column 6: a '<' that starts no tag (text writes it &lt;)"),
        ("<a/ >", "malformed XML at line 1, column 3: a '/' in the start tag <a> that is not followed by '>'"),
        ("<a></a b>", "malformed XML at line 1, column 8: the end tag </a> is not closed with '>'"),
        ("</a>", "malformed XML at line 1, column 5: the end tag </a> closes no element"),
        ("text<a/>", "malformed XML at line 1, column 1: text before the root element"),
        ("<a><![CDATA[x</a>", "malformed XML at line 1, column 4: a CDATA section (<![CDATA[) is not closed with ']]>'"),
        ("<?xml version='1.0'", "malformed XML at line 1, column 1: a processing instruction (<?…) is not closed with '?>'"),
        ("<!DOCTYPE a [ <!ENTITY x '>'>", "malformed XML at line 1, column 1: the doctype is not closed"),
        ("<a><!DOCTYPE a></a>", "malformed XML at line 1, column 4: a doctype inside the root element"),
        ("<!ELEMENT a><a/>", "malformed XML at line 1, column 1: '<!' starts no comment, CDATA section or doctype"),
        ("  \n ", "malformed XML at line 2, column 2: the document has no root element"),
        ("<", "malformed XML at line 1, column 1: a '<' ends the document"),
        ("<é>", "malformed XML at line 1, column 4: the document ends before <é> is closed"),
    ])
    func malformedDocumentsSayWhatAndWhere(document: String, message: String) {
        #expect(Self.failure(document) == message, "\(document)")
    }

    // MARK: Encodings

    static let sample = "<?xml version=\"1.0\" encoding=\"ENC\"?><r a=\"é\">Zoë € 𝄞</r>"
    static let sampleEvents = ["<r a=é>", "\"Zoë € 𝄞\"", "</r>"]

    static func utf16(_ text: String, bigEndian: Bool, bom: Bool) -> [UInt8] {
        var bytes: [UInt8] = bom ? (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []
        for unit in text.utf16 {
            let pair = [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            bytes += bigEndian ? pair.reversed() : pair
        }
        return bytes
    }

    @Test func utf16WithAndWithoutItsByteOrderMark() throws {
        let text = Self.sample.replacingOccurrences(of: "ENC", with: "UTF-16")
        for bigEndian in [false, true] {
            for bom in [false, true] {
                #expect(try Self.events(Self.utf16(text, bigEndian: bigEndian, bom: bom)) == Self.sampleEvents, "\(bigEndian) \(bom)")
            }
        }
        #expect(try Self.events([0xEF, 0xBB, 0xBF] + Array(Self.sample.replacingOccurrences(of: "ENC", with: "utf-8").utf8)) == Self.sampleEvents)
    }

    @Test func eightBitEncodingsTheDeclarationNames() throws {
        // "é" is E9 in all three; "€" is 80 in windows-1252 and A4 in ISO-8859-15.
        func document(_ encoding: String, euro: UInt8) -> [UInt8] {
            Array("<?xml version='1.0' encoding='\(encoding)'?><r a='".utf8) + [0xE9] + Array("'>".utf8) + [0x5A, 0x6F, 0xEB, 0x20, euro]
                + Array("</r>".utf8)
        }
        #expect(try Self.events(document("ISO-8859-1", euro: 0xA4)) == ["<r a=é>", "\"Zoë ¤\"", "</r>"])
        #expect(try Self.events(document("iso-8859-15", euro: 0xA4)) == ["<r a=é>", "\"Zoë €\"", "</r>"])
        #expect(try Self.events(document("windows-1252", euro: 0x80)) == ["<r a=é>", "\"Zoë €\"", "</r>"])
        #expect(try Self.events(document("UTF-8", euro: 0x80)) == ["<r a=\u{FFFD}>", "\"Zo\u{FFFD} \u{FFFD}\"", "</r>"],
                "bytes invalid in UTF-8 become U+FFFD")
        #expect(throws: ServiceError(.invalidData, "the document's encoding \"Shift_JIS\" is not supported "
            + "(UTF-8, UTF-16, ISO-8859-1, ISO-8859-15, windows-1252 and US-ASCII are)")) {
            try Self.events("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><r/>")
        }
        #expect(throws: ServiceError(.invalidData, "the document is UTF-32, which is not supported (UTF-8 and UTF-16 are)")) {
            try Self.events([0xFF, 0xFE, 0, 0, 0x3C, 0, 0, 0])
        }
    }

    // MARK: Files

    /// A document much larger than the reader's buffer, whose tags, references and characters
    /// fall across its piece boundaries, reads from a file exactly as from memory.
    @Test(arguments: [false, true])
    func aFileReadsInPiecesAsItWouldWhole(utf16: Bool) throws {
        var text = "<?xml version=\"1.0\"?>\r\n<log xmlns:x=\"urn:x\">"
        for number in 0..<6_000 {
            text += "<x:entry n=\"\(number)\" note='a&amp;b'>é\(number)&#x1D11E;\r\n<![CDATA[<c>]]></x:entry><!-- \(number) -->"
        }
        text += "<long>" + String(repeating: "long text é ", count: 20_000) + "</long></log>"
        let bytes = utf16 ? Self.utf16(text, bigEndian: true, bom: true) : Array(text.utf8)
        #expect(bytes.count > 5 * XMLReader.chunkSize)
        let folder = try ScratchFolder()
        let path = "\(folder.path)/log.xml"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        var fromFile = try XMLReader(path: path)
        let events = try Self.events(&fromFile)
        #expect(events == (try Self.events(bytes)))
        #expect(events.count == 6_000 * 3 + 5, "a start, the joined text and CDATA, an end per entry")
        #expect(events[1] == "<{urn:x}entry n=0 note=a&b>" && events[2] == "\"é0𝄞\n<c>\"")
    }

    @Test func aFileThatIsMalformedLateSaysWhere() throws {
        let folder = try ScratchFolder()
        let lines = (0..<20_000).map { "<p n=\"\($0)\"/>" }.joined(separator: "\n")
        let path = try folder.write("late.xml", "<r>\n" + lines + "\n<p n='x'></q></r>")
        var reader = try XMLReader(path: path)
        var starts = 0
        do {
            while let event = try reader.next() { if case .start = event { starts += 1 } }
            Issue.record("no error")
        } catch {
            #expect(error.message == "malformed XML at line 20002, column 14: the end tag </q> does not match <p>")
        }
        #expect(starts == 20_002, "every element before the error was read")
    }
}
