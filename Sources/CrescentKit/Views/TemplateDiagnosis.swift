import Mustache

/// Why a Mustache source does not parse, said in the template's own terms: the template's name,
/// the line and column of the tag at fault, and what to write
/// (`bad.mustache:3:1: {{#items}} is never closed: add {{/items}} where its section ends`).
///
/// The Mustache library reports an error case and a position inside the text it parsed (which
/// starts with crescent's `{{% CONTENT_TYPE: TEXT}}`); the tags are scanned here once more to
/// find the section at fault and where it opened. A source that changes its delimiters
/// (`{{=<% %>=}}`) is not scanned: its message keeps the library's position.
struct TemplateDiagnosis {
    /// The template as messages name it: its file, or `source` for one given inline.
    let name: String
    let source: String

    /// The message for `error`, thrown by parsing `prefix + source`.
    func message(for error: any Error, prefixLength: Int) -> String {
        if !source.contains("{{="), let found = scanned() { return found }
        guard let parserError = error as? MustacheTemplate.ParserError else {
            return "\(name): the Mustache source does not parse: \(error)"
        }
        let context = parserError.context
        let column = context.lineNumber == 1 ? max(1, context.columnNumber - prefixLength + 1) : context.columnNumber + 1
        return "\(place(context.lineNumber, column)): \(Self.words(for: parserError.error))"
    }

    /// `name:LINE:COLUMN`.
    private func place(_ line: Int, _ column: Int) -> String { "\(name):\(line):\(column)" }

    /// One tag of the source: what is between its braces, trimmed, and where it starts.
    private struct Tag {
        let text: String
        let line: Int
        let column: Int
        var sigil: Character? { text.first }
        var sectionName: Substring { text.dropFirst().drop { $0 == " " }.prefix { $0 != " " } }
        var shown: String { "{{\(text)}}" }
    }

    /// The fault the tags show: a tag left open, a close that matches no open section or the
    /// wrong one, a section never closed; nil when the tags nest well.
    private func scanned() -> String? {
        var open: [Tag] = []
        var line = 1
        var column = 1
        var index = source.startIndex
        while index < source.endIndex {
            if source[index...].hasPrefix("{{") {
                let (tagLine, tagColumn) = (line, column)
                let triple = source[index...].hasPrefix("{{{")
                let bodyStart = source.index(index, offsetBy: triple ? 3 : 2)
                let closer = triple ? "}}}" : "}}"
                guard let end = Self.position(of: closer, in: source[bodyStart...]) else {
                    let shown = source[index...].prefix { $0 != "\n" }.prefix(20)
                    return "\(place(tagLine, tagColumn)): the tag \(shown) is never closed: end it with \(closer)"
                }
                let tag = Tag(text: source[bodyStart..<end].trimmingSpaces, line: tagLine, column: tagColumn)
                if !triple, let fault = nest(tag, into: &open) { return fault }
                let after = source.index(end, offsetBy: closer.count)
                for character in source[index..<after] { advance(character, &line, &column) }
                index = after
                continue
            }
            advance(source[index], &line, &column)
            index = source.index(after: index)
        }
        guard let unclosed = open.last else { return nil }
        return "\(place(unclosed.line, unclosed.column)): \(unclosed.shown) is never closed: add {{/\(unclosed.sectionName)}} where its section ends"
    }

    /// Opens or closes a section for `tag`; the fault when it closes none or the wrong one.
    private func nest(_ tag: Tag, into open: inout [Tag]) -> String? {
        switch tag.sigil {
        case "#", "^", "$", "<":
            if tag.sectionName.isEmpty { return "\(place(tag.line, tag.column)): \(tag.shown) opens a section without a name" }
            open.append(tag)
        case "/":
            guard let last = open.last else {
                return "\(place(tag.line, tag.column)): \(tag.shown) closes no section: remove it, or open one before it with {{#\(tag.sectionName)}}"
            }
            guard last.sectionName == tag.sectionName else {
                return "\(place(tag.line, tag.column)): \(tag.shown) does not close \(last.shown), opened at line \(last.line): "
                    + "close that one first with {{/\(last.sectionName)}}"
            }
            open.removeLast()
        default:
            break
        }
        return nil
    }

    /// Where `needle` first starts in `text`.
    private static func position(of needle: String, in text: Substring) -> String.Index? {
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix(needle) { return index }
            index = text.index(after: index)
        }
        return nil
    }

    private func advance(_ character: Character, _ line: inout Int, _ column: inout Int) {
        if character == "\n" {
            line += 1
            column = 1
        } else {
            column += 1
        }
    }

    /// The library's error case in words.
    private static func words(for error: any Error) -> String {
        guard let error = error as? MustacheTemplate.Error else { return "\(error)" }
        return switch error {
        case .sectionCloseNameIncorrect: "this {{/name}} does not close the section open here: close the last one opened first"
        case .unfinishedName: "a tag's name is not finished: a tag reads {{name}}"
        case .expectedSectionEnd: "a section is never closed: add {{/name}} where it ends"
        case .invalidSetDelimiter: "a set-delimiter tag must read {{=<% %>=}} (two delimiters, no spaces inside one)"
        case .transformAppliedToInheritanceSection: "a transform cannot be applied to an inheritance section"
        case .illegalTokenInsideInheritSection, .textInsideInheritSection:
            "inside {{<partial}} ... {{/partial}} only {{$block}} sections may appear"
        case .invalidConfigVariableSyntax, .unrecognisedConfigVariable:
            "a {{% }} pragma crescent does not read: leave it out (views render plain text)"
        }
    }
}
