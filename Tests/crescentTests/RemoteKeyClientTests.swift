import Foundation
import Testing

/// The remote `key` method from its clients (attack new28t on issue 34): `crescent send --key`
/// with many keys took time in the square of their number in the client (10,000 keys, the most a
/// request takes, never finished within a minute), and a request whose params were a JSON array
/// was refused in Lua's words ("got table").
@Suite struct RemoteKeyClientTests {
    private func groceriesHost() async throws -> ListeningHost {
        try await ListeningHost(script: RemoteControlTests.groceries, name: "groceries", options: ["--data-dir", "data"])
    }

    /// D3: 10,000 keys are read and sent in linear time and answered promptly; 10,001 are
    /// refused at once by the client, before it connects, naming the limit, with nothing pressed.
    @Test func tenThousandKeysAreSentPromptlyAndOneMoreIsRefusedAtOnce() async throws {
        let host = try await groceriesHost()
        _ = try await host.crescentCommand(["send", "groceries", "add", "milk"])
        let full = try await host.crescentCommand(["send", "groceries", "--key"] + Array(repeating: ["down", "up"], count: 5_000).flatMap { $0 })
        #expect(full.status == 0 && full.stderr.isEmpty, "\(full)")
        #expect(full.elapsed < 15, "10,000 keys took \(full.elapsed) s")
        let tooMany = try await host.crescentCommand(["send", "groceries", "--key"] + Array(repeating: "d", count: 10_001))
        #expect(tooMany.status == 2, "\(tooMany)")
        #expect(tooMany.stderr.contains("crescent: send --key: at most 10000 keys per request, got 10001; nothing was pressed"), "\(tooMany)")
        #expect(tooMany.elapsed < 5, "the refusal took \(tooMany.elapsed) s")
        // Two `d`s would have deleted the item after its confirmation.
        let view = try await host.crescentCommand(["view", "groceries", "--width", "40"])
        #expect(view.stdout.contains("milk"), "\(view)")
        // A command's many arguments are read in linear time too.
        let words = try await host.crescentCommand(["send", "groceries", "nosuch"] + Array(repeating: "x", count: 5_000))
        #expect(words.status == 1 && words.stderr.contains("unknown command 'nosuch'"), "\(words)")
        #expect(words.elapsed < 15, "5,000 arguments took \(words.elapsed) s")
        _ = await host.stop()
    }

    /// D8: params that are no JSON object are refused in JSON's words, for every method.
    @Test func paramsThatAreNoObjectAreNamedInJSONsWords() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        let methods = ["hello", "eval", "interrupt", "complete", "send", "key", "observe", "on", "unsubscribe", "view",
                       "services", "subscriptions"]
        var id = 1_000
        for method in methods {
            id += 1
            client.send(line: #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":[["down"]]}"#)
            let answer = client.response(to: id)
            let error = answer?["error"] as? [String: Any]
            #expect(error?["code"] as? Int == -32602, "\(method): \(String(describing: answer))")
            #expect(error?["message"] as? String == "invalid params: \(method): params must be an object, got an array",
                    "\(method): \(String(describing: answer))")
        }
        // Params that are neither (JSON-RPC allows only those two) are an invalid request, in JSON's words too.
        client.send(line: #"{"jsonrpc":"2.0","id":2000,"method":"key","params":"down"}"#)
        let scalar = client.response(to: 2000)?["error"] as? [String: Any]
        #expect((scalar?["message"] as? String)?.contains(#""params" must be an array or an object, got string"#) == true,
                "\(String(describing: scalar))")
        let args = client.call("send", ["command": "add", "args": ["not": "an array"]])
        #expect((args?["error"] as? [String: Any])?["message"] as? String == "invalid params: send: args must be an array, got an object",
                "\(String(describing: args))")
        let code = client.call("eval", ["code": ["x"]])
        #expect((code?["error"] as? [String: Any])?["message"] as? String == "invalid params: eval: \"code\" must be a string, got an array",
                "\(String(describing: code))")
        _ = await host.stop()
    }
}
