import Foundation
import Testing

/// A script's output that is not UTF-8 reaches remote clients byte for byte (issue 33's one
/// codec): an `output` notification carries such bytes as `base64` beside a `text` with U+FFFD,
/// and `crescent eval` and `crescent attach` write the bytes themselves. Before, `text` alone
/// carried them, each invalid byte silently replaced.
@Suite struct RemoteOutputBytesTests {
    static let script = """
        timer.every(60, function() end)
        """

    /// What `output` notifications brought a client: the bytes of each stream, and every
    /// notification's params.
    private struct Outputs {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var params: [[String: Any]] = []
    }

    /// Reads `client`'s messages until `done` holds for what came (or 20 s pass).
    private static func outputs(_ client: RemoteTestClient, until done: (Outputs, [String: Any]?) -> Bool) -> Outputs {
        var outputs = Outputs()
        let deadline = Date().addingTimeInterval(20)
        var last: [String: Any]?
        while !done(outputs, last), let message = client.next(until: deadline) {
            last = message
            guard message["method"] as? String == "output", let params = message["params"] as? [String: Any] else { continue }
            outputs.params.append(params)
            var bytes = Array((params["text"] as? String ?? "").utf8)
            if let encoded = params["base64"] as? String, let data = Data(base64Encoded: encoded) { bytes = Array(data) }
            if params["stream"] as? String == "stderr" { outputs.stderr += bytes } else { outputs.stdout += bytes }
        }
        return outputs
    }

    private static func contains(_ bytes: [UInt8], _ part: [UInt8]) -> Bool {
        guard bytes.count >= part.count else { return false }
        return (0...(bytes.count - part.count)).contains { Array(bytes[$0..<($0 + part.count)]) == part }
    }

    @Test func aFollowerAndAnEvalGetTheExactBytes() async throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("bytes.lua", Self.script)
        let host = try await ListeningHost(script: path, name: "bytes", sandbox: sandbox)
        let follower = try host.client()
        #expect(follower.call("hello", ["output": true])?["result"] != nil)
        let evaluator = try host.client()
        let id = evaluator.request("eval", ["code": #"""
            timer.after(0.05, function() io.write("A\255\254B") io.stderr:write("C\195") print("plain é") end)
            print("D\255")
            """#])

        // The chunk's own print, to the client that sent it, before the answer.
        let printed = Self.outputs(evaluator) { _, last in last?["id"] as? Int == id }
        #expect(printed.stdout == [0x44, 0xFF, 0x0A], "\(printed.params)")
        #expect(printed.params.first?["text"] as? String == "D\u{FFFD}\n", "\(printed.params)")

        // What a timer wrote, to the follower: io.write and io.stderr:write byte for byte, UTF-8 as text only.
        let followed = Self.outputs(follower) { outputs, _ in
            Self.contains(outputs.stdout, Array("plain é\n".utf8)) && Self.contains(outputs.stderr, [0x43, 0xC3])
        }
        #expect(Self.contains(followed.stdout, [0x41, 0xFF, 0xFE, 0x42]), "\(followed.params)")
        #expect(Self.contains(followed.stderr, [0x43, 0xC3]), "\(followed.params)")
        #expect(followed.params.contains { $0["base64"] != nil && ($0["text"] as? String ?? "").contains("A\u{FFFD}\u{FFFD}B") },
                "\(followed.params)")
        #expect(followed.params.contains { $0["base64"] == nil && $0["text"] as? String == "plain é\n" }, "\(followed.params)")

        // crescent eval writes what the chunk printed as it was printed.
        let run = try await crescent(["-c", #"exec "$0" eval bytes 'print("E\255\254")' > out.bin"#, CrescentProcess.binaryPath],
                                     executable: "/bin/sh", in: sandbox, environment: host.environment, timeLimit: 30)
        #expect(run.status == 0, "\(run)")
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: sandbox.path + "/out.bin")))
        #expect(written == [0x45, 0xFF, 0xFE, 0x0A], "\(written)")
        _ = await host.stop()
    }

    /// `crescent attach` writes a chunk's output that is not UTF-8 to its terminal as it was written.
    @Test func attachWritesTheExactBytes() async throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("bytes.lua", Self.script)
        let host = try await ListeningHost(script: path, name: "bytes", sandbox: sandbox)
        let terminal = try InteractiveTerminal(["attach", "bytes"], directory: sandbox.path,
                                               environment: host.environment.merging(["CRESCENT_HISTORY": sandbox.path + "/history"]) { $1 })
        await terminal.waitFor(line: "Attached to bytes")
        terminal.type(#"print("F\255\254G") timer.after(0.05, function() io.write("H\255I\n") end)"# + "\r")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && !(Self.contains(terminal.bytes, [0x46, 0xFF, 0xFE, 0x47]) && Self.contains(terminal.bytes, [0x48, 0xFF, 0x49])) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Self.contains(terminal.bytes, [0x46, 0xFF, 0xFE, 0x47]), "\(terminal.text)")
        #expect(Self.contains(terminal.bytes, [0x48, 0xFF, 0x49]), "\(terminal.text)")
        terminal.type("\u{4}")
        #expect(await terminal.finish() == 0)
        _ = await host.stop()
    }
}
