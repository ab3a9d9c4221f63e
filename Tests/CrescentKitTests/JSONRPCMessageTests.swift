@testable import CrescentKit
import Model
import NIOCore
import Testing

@Suite struct JSONRPCMessageTests {
    private func parse(_ line: String) -> Result<JSONRPCMessage, JSONRPCError> {
        JSONRPCMessage.parse(line: Array(line.utf8))
    }

    @Test func readsEachKindOfMessage() throws {
        #expect(try parse(#"{"jsonrpc":"2.0","id":1,"method":"eval","params":{"code":"1"}}"#).get()
            == .request(id: 1, method: "eval", params: .object(["code": "1"])))
        #expect(try parse(#"{"jsonrpc":"2.0","id":"a","method":"hello"}"#).get() == .request(id: .string("a"), method: "hello", params: .null))
        #expect(try parse(#"{"jsonrpc":"2.0","method":"log","params":{"level":"warn","message":"x"}}"#).get()
            == .notification(method: "log", params: .object(["level": "warn", "message": "x"])))
        #expect(try parse(#"{"jsonrpc":"2.0","id":7,"result":[1,2]}"#).get() == .response(id: 7, result: [1, 2]))
        #expect(try parse(#"{"jsonrpc":"2.0","id":7,"result":null}"#).get() == .response(id: 7, result: .null))
        let failure = try parse(#"{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"gone","data":{"code":"not_found"}}}"#).get()
        guard case .failure(let id, let error) = failure else {
            Issue.record("not a failure: \(failure)")
            return
        }
        #expect(id == 3 && error.serviceError == ServiceError(.notFound, "gone"))
    }

    @Test func writesWhatItReads() throws {
        let messages: [JSONRPCMessage] = [
            .request(id: 1, method: "call", params: .object(["service": "echo", "args": [1, "x"]])),
            .notification(method: "set", params: .object(["service": "s", "property": "p", "value": 1.5])),
            .response(id: .string("z"), result: .object(["ok": true])),
            .failure(id: 4, error: JSONRPCError(ServiceError(.timeout, "slow", service: "s", method: "m"))),
        ]
        for message in messages {
            #expect(try parse(message.line).get() == message)
            #expect(!message.line.contains("\n"))
        }
        #expect(JSONRPCMessage.request(id: 1, method: "hello", params: .null).line == #"{"id":1,"jsonrpc":"2.0","method":"hello"}"#)
    }

    /// `line` writes the envelope field by field: it must stay the text of `value`, keys sorted.
    @Test func theLineIsTheTextOfTheMessagesValue() {
        let messages: [JSONRPCMessage] = [
            .request(id: 1, method: "eval", params: .object(["code": "1"])),
            .request(id: .string("a\"b"), method: "hello", params: .null),
            .request(id: 2, method: "call", params: [1, "x"]),
            .notification(method: "output", params: .object(["text": "a\nb", "stream": "stdout"])),
            .notification(method: "ping", params: .null),
            .response(id: 7, result: .object(["text": "1", "value": 1])),
            .response(id: .string("z"), result: .null),
            .failure(id: 4, error: JSONRPCError(ServiceError(.timeout, "slow", service: "s", method: "m"))),
            .failure(id: nil, error: JSONRPCError(code: JSONRPCError.parseError, message: "parse error")),
        ]
        for message in messages {
            #expect(message.line == message.value.jsonText)
        }
    }

    /// The short way for plain calls must read every line as the full reader of the decoded
    /// document does, and leave every other line to it.
    @Test func theCallScannerReadsLinesAsTheDocumentReaderDoes() {
        let taken = [
            #"{"id":1,"jsonrpc":"2.0","method":"eval","params":{"code":"1"}}"#,
            #" { "method" : "eval" , "params" : { "code" : "a\"}b]" } , "id" : -12 , "jsonrpc" : "2.0" } "#,
            #"{"jsonrpc":"2.0","id":"x y","method":"hello"}"#,
            #"{"jsonrpc":"2.0","method":"log","params":[1,{"a":[]},"]"]}"#,
            #"{"jsonrpc":"2.0","id":0,"method":"m","params":null}"#,
            #"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"}"#,
            #"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}"#,
        ]
        let left = [
            #"{"jsonrpc":"2.0","id":1,"method":"m\u0041"}"#,
            #"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            #"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            #"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
            #"{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}"#,
            #"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1]}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
            #"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            #"{"jsonrpc":"2.0","id":1,"result":1}"#,
            #"{"jsonrpc":"2.0","id":1}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"a\#u{1}b"}"#,
            "\u{FEFF}" + #"{"jsonrpc":"2.0","id":1,"method":"m"}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\"#,
        ]
        for line in taken + left {
            let bytes = Array(line.utf8)
            let scanned = bytes.withUnsafeBufferPointer { JSONRPCCallScanner.call(in: $0) }
            #expect((scanned != nil) == taken.contains(line), "\(line)")
            let full: Result<JSONRPCMessage, JSONRPCError>
            switch Result(catching: { () throws(ServiceError) in try Value(jsonBytes: bytes) }) {
            case .success(let document): full = JSONRPCMessage.parse(document)
            case .failure: full = .failure(JSONRPCError(code: JSONRPCError.parseError, message: "parse error"))
            }
            switch (parse(line), full) {
            case (.success(let quick), .success(let slow)): #expect(quick == slow, "\(line)")
            case (.failure(let quick), .failure(let slow)): #expect(quick.code == slow.code, "\(line)")
            default: Issue.record("the two readings differ for \(line)")
            }
        }
    }

    @Test func answersBadInputWithTheRightError() {
        func code(_ line: String) -> Int? {
            if case .failure(let error) = parse(line) { return error.code }
            return nil
        }
        #expect(code("{not json") == JSONRPCError.parseError)
        #expect(code("[1,2]") == JSONRPCError.invalidRequestCode)
        #expect(code(#"{"id":1,"method":"x"}"#) == JSONRPCError.invalidRequestCode)
        #expect(code(#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#) == JSONRPCError.invalidRequestCode)
        #expect(code(#"{"jsonrpc":"2.0","id":1,"method":3}"#) == JSONRPCError.invalidRequestCode)
        #expect(code(#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#) == JSONRPCError.invalidRequestCode)
        #expect(code(#"{"jsonrpc":"2.0","id":1}"#) == JSONRPCError.invalidRequestCode)
        // The id of a request that could be read travels with its error, so the answer can name it.
        if case .failure(let error) = parse(#"{"jsonrpc":"2.0","id":9,"method":3}"#) {
            #expect(error.id == 9 && error.reply.line.contains(#""id":9"#))
        }
    }

    @Test func aServiceErrorCrossesWithItsCode() {
        let original = ServiceError(.conflict, "changed meanwhile", service: "store", method: "update")
        #expect(JSONRPCError(original).serviceError == original)
        // A peer's own failure, without a known code, is internal.
        #expect(JSONRPCError(code: -32603, message: "boom").serviceError.code == .internal)
    }

    @Test func splitsLinesAndBoundsTheirLength() throws {
        var decoder = JSONRPCLineDecoder(maximumLength: 16)
        var buffer = ByteBuffer(string: "{\"a\":1}\r\n\n{\"b\"")
        #expect(try decoder.decode(buffer: &buffer).map { String(buffer: $0) } == "{\"a\":1}")
        #expect(try decoder.decode(buffer: &buffer) == nil)
        buffer.writeString(":2}\n")
        #expect(try decoder.decode(buffer: &buffer).map { String(buffer: $0) } == "{\"b\":2}")
        buffer.writeString("[1]")
        #expect(try decoder.decodeLast(buffer: &buffer, seenEOF: true).map { String(buffer: $0) } == "[1]")

        // Past the bound without a newline: refused before the rest arrives.
        var long = ByteBuffer(string: String(repeating: "x", count: 17))
        #expect(throws: JSONRPCLineTooLong.self) { try decoder.decode(buffer: &long) }
        var longLine = ByteBuffer(string: String(repeating: "y", count: 17) + "\n")
        var fresh = JSONRPCLineDecoder(maximumLength: 16)
        #expect(throws: JSONRPCLineTooLong.self) { try fresh.decode(buffer: &longLine) }
    }
}
