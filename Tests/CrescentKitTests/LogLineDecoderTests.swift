@testable import CrescentKit
import NIOCore
import Testing

/// A process plugin's stderr, as lines for the log: a line past the bound is cut with its rest
/// dropped, however it arrives, and the lines after it come through whole.
@Suite struct LogLineDecoderTests {
    private func lines(_ chunks: [String], bound: Int = 8) throws -> [String] {
        var decoder = LogLineDecoder(maximumLength: bound)
        var buffer = ByteBuffer()
        var lines: [String] = []
        for chunk in chunks {
            buffer.writeString(chunk)
            while let line = try decoder.decode(buffer: &buffer) {
                lines.append(String(buffer: line.text) + (line.isCut ? " [cut]" : ""))
            }
        }
        while let line = try decoder.decodeLast(buffer: &buffer, seenEOF: true) {
            lines.append(String(buffer: line.text) + (line.isCut ? " [cut]" : ""))
        }
        return lines
    }

    @Test func linesUpToTheBoundComeWhole() throws {
        #expect(try lines(["one\r\ntwo\n\nthr", "ee\nlast"]) == ["one", "two", "three", "last"])
        #expect(try lines(["12345678\n"]) == ["12345678"])
    }

    @Test func aLongerLineIsCutAndItsRestDropped() throws {
        #expect(try lines(["123456789\nnext\n"]) == ["12345678 [cut]", "next"])
        // The rest arrives in pieces, after the head was logged; nothing of it is kept.
        #expect(try lines(["abcdefghij", "klmnop", "qrstu\nnext\n"]) == ["abcdefgh [cut]", "next"])
        #expect(try lines(["abcdefghij", "klmnop"]) == ["abcdefgh [cut]"])
    }
}
