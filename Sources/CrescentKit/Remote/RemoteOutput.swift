import Foundation
package import Model

/// The bytes of an `output` notification (DESIGN.md "Remote control"), encoded and decoded here
/// only. Output that is UTF-8 goes as `text`. Other bytes (`io.write("\xff\xfe")`, a UTF-8
/// character cut between two writes) go exactly as `base64`, and `text` then shows them with
/// U+FFFD in place of each invalid sequence, for a client that only displays: a client that
/// writes the output out (`crescent attach`, `crescent eval`) writes `base64`'s bytes when it is
/// there.
///
/// ```swift
/// connection.send(RemoteOutput.notification(Array("\u{FF}".utf8), stream: .output))
/// let bytes = RemoteOutput.bytes(of: params)   // on the client
/// ```
package enum RemoteOutput {
    /// `output { text, base64?, stream }` for `bytes` written to `stream`.
    static func notification(_ bytes: [UInt8], stream: Console.Stream) -> JSONRPCMessage {
        var params: Fields = ["stream": .string(stream == .error ? "stderr" : "stdout")]
        if let text = String(validating: bytes, as: UTF8.self) {
            params["text"] = .string(text)
        } else {
            params["text"] = .string(String(decoding: bytes, as: UTF8.self))
            params["base64"] = .string(Data(bytes).base64EncodedString())
        }
        return .notification(method: "output", params: .object(params))
    }

    /// The exact bytes an `output` notification's `params` carry.
    package static func bytes(of params: Value) -> [UInt8] {
        if let encoded = params["base64"].stringValue, let data = Data(base64Encoded: encoded) { return Array(data) }
        return Array((params["text"].stringValue ?? "").utf8)
    }
}
