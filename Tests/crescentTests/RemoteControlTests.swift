import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Remote control end to end: a real host listening on a real socket, real clients (the CLI's
/// subcommands and a raw JSON-lines client).
@Suite struct RemoteControlTests {
    static let groceries = CrescentProcess.packageRoot.appendingPathComponent("scripts/groceries.lua").path

    private func groceriesHost(name: String = "groceries") async throws -> ListeningHost {
        try await ListeningHost(script: Self.groceries, name: name, options: ["--data-dir", "data"])
    }

    @Test func evalPrintsValuesAndErrorsWithExitStatus() async throws {
        let host = try await groceriesHost()
        let sum = try await host.crescentCommand(["eval", "groceries", "1 + 41"])
        #expect(sum.status == 0, "\(sum)")
        #expect(sum.stdout == "42\n")
        // What the chunk prints comes back before its value; the host's print is itself again after.
        let printed = try await host.crescentCommand(["eval", "groceries", "print('hello', 1) return 2"])
        #expect(printed.stdout == "hello\t1\n2\n", "\(printed)")
        #expect(!host.process.stdout.contains("hello"))
        let json = try await host.crescentCommand(["eval", "{ a = 1, b = { 2.5, 'x' } }", "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(json.stdout == #"{"a":1,"b":[2.5,"x"]}"# + "\n")
        let failure = try await host.crescentCommand(["eval", "groceries", "error('boom')"])
        #expect(failure.status == 1)
        #expect(failure.stderr.contains("boom"), "\(failure)")
        #expect(failure.stderr.contains("traceback"), "\(failure)")
        let syntax = try await host.crescentCommand(["eval", "groceries", "x ="])
        #expect(syntax.status == 1 && syntax.stderr.contains("<eof>"), "\(syntax)")
        // An eval may await a service: the chunk runs as a task.
        let awaited = try await host.crescentCommand(["eval", "groceries", "return sleep(0.05) or 'woke'"])
        #expect(awaited.stdout == "\"woke\"\n", "\(awaited)")
        // A host's name with nothing after it: the code (or command) is what is missing.
        let noCode = try await host.crescentCommand(["eval", "groceries"])
        #expect(noCode.status == 2 && noCode.stderr.contains("eval: 'groceries' is the name of a listening host; give the code to run after it"),
                "\(noCode)")
        let noCommand = try await host.crescentCommand(["send", "groceries"])
        #expect(noCommand.status == 2 && noCommand.stderr.contains("send: 'groceries' is the name of a listening host; give the command to send after it"),
                "\(noCommand)")
        let ended = await host.stop()
        #expect(ended.status == 143, "\(ended)")
    }

    /// A client that says `hello { output = true }` follows the host's output: what a chunk
    /// starts prints there (a timer's `print`, a `log` line as stderr), while the chunk's own
    /// `print` goes only to the client that sent it, and renders come only as `render`.
    @Test func aClientThatAsksInHelloFollowsTheHostsOutputButNotItsRenders() async throws {
        let host = try await groceriesHost()
        let follower = try host.client()
        #expect((follower.call("hello", ["output": true])?["result"] as? [String: Any])?["pid"] as? Int == Int(host.pid))
        let refused = follower.call("hello", ["output": "yes"])
        #expect((refused?["error"] as? [String: Any])?["code"] as? Int == -32602, "\(String(describing: refused))")
        let evaluator = try host.client()
        let answer = evaluator.call("eval", ["code": "timer.after(0.05, function() print('from a timer'); log.warn('careful') end) print('from the chunk')"])
        #expect(answer?["result"] != nil, "\(String(describing: answer))")

        var outputs: [(stream: String, text: String)] = []
        let deadline = Date().addingTimeInterval(20)
        while !(outputs.contains { $0.text.contains("careful") }), let message = follower.next(until: deadline) {
            guard message["method"] as? String == "output", let params = message["params"] as? [String: Any] else { continue }
            outputs.append((params["stream"] as? String ?? "", params["text"] as? String ?? ""))
        }
        #expect(outputs.contains { $0.stream == "stdout" && $0.text == "from a timer\n" }, "\(outputs)")
        #expect(outputs.contains { $0.stream == "stderr" && $0.text.contains("careful") }, "\(outputs)")
        #expect(!outputs.contains { $0.text.contains("from the chunk") }, "\(outputs)")

        let sent = try await host.crescentCommand(["send", "groceries", "add", "green tea", "1"])
        #expect(sent.status == 0, "\(sent)")
        #expect(await host.process.waitForOutput("green tea", within: 20), "\(host.process.stdout)")
        let after = Date().addingTimeInterval(1)
        while let message = follower.next(until: after) {
            let text = (message["params"] as? [String: Any])?["text"] as? String ?? ""
            #expect(!(message["method"] as? String == "output" && text.contains("green tea")), "a render came as output: \(text)")
        }
        _ = await host.stop()
    }

    @Test func sendAddsAnItemThatAnObserverAndTheViewSee() async throws {
        let host = try await groceriesHost()
        let observer = try host.client()
        let answer = observer.call("observe", ["service": #"services.store:collection("groceries")"#, "key": "count"])
        #expect((answer?["result"] as? [String: Any])?["subscription"] as? Int == 1, "\(String(describing: answer))")
        let initial = observer.notification("changed")
        #expect(initial?["value"] as? Int == 0, "\(String(describing: initial))")

        let sent = try await host.crescentCommand(["send", "groceries", "add", "oat milk", "2"])
        #expect(sent.status == 0, "\(sent)")
        let changed = observer.notification("changed", within: 20)
        #expect(changed?["value"] as? Int == 1, "\(String(describing: changed))")
        #expect(changed?["old"] as? Int == 0)

        let view = try await host.crescentCommand(["view", "groceries", "--width", "40"])
        #expect(view.status == 0, "\(view)")
        #expect(view.stdout.contains("oat milk") && view.stdout.contains("1 item"), "\(view)")
        let json = try await host.crescentCommand(["view", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["controller"] as? String == "Groceries", "\(json)")

        let listed = try await host.crescentCommand(["ls"])
        #expect(listed.stdout.contains("groceries") && listed.stdout.contains(String(host.pid)), "\(listed)")
        _ = await host.stop()
    }

    @Test func sendKeyPressesKeysOnTheTopController() async throws {
        let host = try await groceriesHost()
        _ = try await host.crescentCommand(["send", "groceries", "add", "milk"])
        _ = try await host.crescentCommand(["send", "groceries", "add", "bread"])
        let pressed = try await host.crescentCommand(["send", "groceries", "--key", "down", "d"])
        #expect(pressed.status == 0, "\(pressed)")
        #expect(await host.process.waitForOutput("delete bread? press d again", within: 20), "\(host.process.stdout)")
        let wrong = try await host.crescentCommand(["send", "--key", "downn"])
        #expect(wrong.status == 1, "\(wrong)")
        #expect(wrong.stderr.contains("unknown key 'downn'; did you mean 'down'?; key names are"), "\(wrong)")
        #expect(wrong.stderr.hasPrefix("crescent: key: "), "\(wrong)")
        #expect(wrong.stderr.split(separator: "\n").count == 1, "one line, no host traceback: \(wrong)")
        let none = try await host.crescentCommand(["send", "--key"])
        #expect(none.status == 2, "\(none)")
        _ = await host.stop()
    }

    /// A key that ends the host (`q`, `ctrl-c`) was delivered: `crescent send --key` says so
    /// with status 0 (the host answers before it closes the connection), and the host ends
    /// with the key's status.
    @Test(arguments: [("q", Int32(0)), ("ctrl-c", Int32(130))])
    func sendKeyThatEndsTheHostIsASuccess(key: String, status: Int32) async throws {
        let host = try await groceriesHost()
        let sent = try await host.crescentCommand(["send", "groceries", "--key", key])
        #expect(sent.status == 0, "\(sent)")
        #expect(sent.stderr == "", "\(sent)")
        let ended = await host.process.finish(timeLimit: 30)
        #expect(ended.status == status, "\(ended)")
    }

    /// One `key` request presses at most 10,000 keys (more is a clear error, nothing pressed),
    /// and 10,000 are answered promptly: the host's loop is never held for long by one client.
    @Test func aKeyRequestIsBoundedAndAFullOneIsAnsweredPromptly() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        let tooMany = client.call("key", ["keys": Array(repeating: "down", count: 10_001)])
        let error = tooMany?["error"] as? [String: Any]
        #expect(error?["code"] as? Int == -32602, "\(String(describing: tooMany))")
        #expect((error?["message"] as? String)?.contains("at most 10000 keys per request, got 10001; send them in several requests") == true,
                "\(String(describing: tooMany))")
        let started = Date()
        let full = client.call("key", ["keys": Array(repeating: ["down", "up"], count: 5_000).flatMap { $0 }], within: 60)
        let elapsed = Date().timeIntervalSince(started)
        #expect((full?["result"] as? [String: Any])?["pressed"] as? Int == 10_000, "\(String(describing: full))")
        #expect(elapsed < 20, "10,000 keys took \(elapsed) s")
        let sum = try await host.crescentCommand(["eval", "groceries", "1 + 1"])
        #expect(sum.stdout == "2\n", "the host answers on: \(sum)")
        _ = await host.stop()
    }

    @Test func observeCommandPrintsOneJSONLinePerChange() async throws {
        let host = try await groceriesHost()
        let watcher = CrescentProcess(["observe", "groceries", #"services.store:collection("groceries")"#, "count"],
                                      directory: host.sandbox.path, environment: host.environment)
        try watcher.start()
        #expect(await watcher.waitForOutput("0\n", within: 20), "\(watcher.stderr)")
        _ = try await host.crescentCommand(["send", "add", "bread"])
        #expect(await watcher.waitForOutput("0\n1\n", within: 20), "\(watcher.stdout)")
        _ = await host.stop()
        let ended = await watcher.finish(timeLimit: 30)
        #expect(ended.stdout == "0\n1\n", "\(ended)")
    }

    @Test func interruptStopsAnInfiniteLoopAndTheHostRunsOn() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        let id = client.request("eval", ["code": "while true do end"])
        // A second client is served meanwhile? No: the loop is busy; the interrupt is read anyway.
        try await Task.sleep(nanoseconds: 200_000_000)
        client.request("interrupt")
        let answer = client.response(to: id, within: 20)
        let error = answer?["error"] as? [String: Any]
        #expect((error?["message"] as? String)?.hasPrefix("interrupted") == true, "\(String(describing: answer))")
        let after = client.call("eval", ["code": "1"])
        #expect((after?["result"] as? [String: Any])?["value"] as? Int == 1, "\(String(describing: after))")
        // A chunk that waits is cancelled.
        let waiting = client.request("eval", ["code": "sleep(60)"])
        client.request("interrupt")
        let cancelled = client.response(to: waiting, within: 20)
        #expect(((cancelled?["error"] as? [String: Any])?["message"] as? String)?.contains("interrupted") == true)
        _ = await host.stop()
    }

    /// The same chunk sent again is a fresh call of it (the host keeps recent chunks compiled):
    /// fresh locals, its own `_ENV` even after the last call replaced it, errors and interrupts
    /// each time, and values described as `inspect` does.
    @Test func theSameChunkSentAgainIsAFreshCall() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        func eval(_ code: String) -> (text: String?, error: String?) {
            let answer = client.call("eval", ["code": code])
            let result = answer?["result"] as? [String: Any]
            return (result?["text"] as? String, (answer?["error"] as? [String: Any])?["message"] as? String)
        }
        for expected in ["1\t1", "2\t1", "3\t1"] {
            #expect(eval("local fresh; fresh = (fresh or 0) + 1; counter = (counter or 0) + 1 return counter, fresh").text == expected)
        }
        let swapEnvironment = "if swapped then return 'leaked' end debug.setupvalue(debug.getinfo(1, 'f').func, 1, { swapped = true }) return 'swapped'"
        let assignEnvironment = "if swapped then return 'leaked' end _ENV = { swapped = true } return 'swapped'"
        for code in [swapEnvironment, swapEnvironment, assignEnvironment, assignEnvironment, swapEnvironment] {
            #expect(eval(code).text == "\"swapped\"", "\(code)")
        }
        for _ in 0..<2 {
            #expect(eval("error('boom')").error?.contains("boom") == true)
            let id = client.request("eval", ["code": "while true do end"])
            try await Task.sleep(nanoseconds: 100_000_000)
            client.request("interrupt")
            let answer = client.response(to: id, within: 20)
            #expect(((answer?["error"] as? [String: Any])?["message"] as? String)?.hasPrefix("interrupted") == true, "\(String(describing: answer))")
        }
        #expect(eval("return 1, true, false, math.mininteger, 2.0, 'x', nil, 3, nil").text
            == "1\ttrue\tfalse\tmath.mininteger\t2.0\t\"x\"\tnil\t3")
        _ = await host.stop()
    }

    @Test func completeServicesSubscriptionsAndUnsubscribe() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        let completed = client.call("complete", ["line": "x = servi", "cursor": 9])?["result"] as? [String: Any]
        #expect((completed?["items"] as? [String])?.contains("services") == true, "\(String(describing: completed))")
        #expect(completed?["from"] as? Int == 4)
        // Completion runs no code: a global's __index function is never called.
        _ = client.call("eval", ["code": "probe = setmetatable({}, { __index = function() touched = true end })"])
        _ = client.call("complete", ["line": "probe.a"])
        let touched = client.call("eval", ["code": "touched"])?["result"] as? [String: Any]
        #expect(touched?["text"] as? String == "nil", "\(String(describing: touched))")

        let services = client.call("services", ["name": "geocoder"])?["result"] as? [String: Any]
        #expect((services?["text"] as? String)?.contains("reverse") == true)

        let number = (client.call("on", ["event": "custom"])?["result"] as? [String: Any])?["subscription"] as? Int
        let listed = client.call("subscriptions")?["result"] as? [[String: Any]]
        #expect(listed?.contains { ($0["owner"] as? String)?.hasPrefix("remote client") == true && $0["target"] as? String == "on custom" } == true,
                "\(String(describing: listed))")
        _ = client.call("eval", ["code": "post('custom', { n = 7 })"])
        let event = client.notification("event")
        #expect(event?["name"] as? String == "custom")
        #expect((event?["payload"] as? [String: Any])?["n"] as? Int == 7)
        let removed = client.call("unsubscribe", ["subscription": number ?? -1])
        #expect((removed?["result"] as? [String: Any])?["unsubscribed"] as? Bool == true)
        let again = client.call("unsubscribe", ["subscription": number ?? -1])
        #expect((again?["error"] as? [String: Any])?["code"] as? Int == -32602)
        let after = client.call("subscriptions")?["result"] as? [[String: Any]]
        #expect(after?.contains { $0["target"] as? String == "on custom" } == false)
        _ = await host.stop()
    }

    @Test func malformedLinesGetErrorsAndTheConnectionRunsOn() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        let lines = ["{", "[1,2]", "not json", #"{"jsonrpc":"1.0","id":1,"method":"hello"}"#, #"{"jsonrpc":"2.0","id":2}"#,
                     #"{"jsonrpc":"2.0","id":3,"method":7}"#, "\u{1}\u{2}", #"{"jsonrpc":"2.0","id":4,"method":"eval","params":[1]}"#]
        for index in 0..<1000 { client.send(line: lines[index % lines.count]) }
        var errors = 0
        let deadline = Date().addingTimeInterval(60)
        while errors < 1000, let message = client.next(until: deadline) {
            if message["error"] != nil { errors += 1 }
        }
        #expect(errors == 1000)
        let unknown = client.call("frobnicate")
        #expect((unknown?["error"] as? [String: Any])?["code"] as? Int == -32601)
        let badParams = client.call("observe", ["service": "nosuch", "key": "x"])
        #expect(((badParams?["error"] as? [String: Any])?["message"] as? String)?.contains("nosuch") == true)
        let hello = client.call("hello")
        #expect((hello?["result"] as? [String: Any])?["pid"] as? Int == Int(host.pid))
        _ = await host.stop()
    }

    /// Lines come as the client writes them: several in one write, one across writes.
    @Test func linesInOneWriteAndLinesAcrossWritesAreAnsweredInOrder() async throws {
        let host = try await groceriesHost()
        let client = try host.client()
        func request(_ id: Int, _ code: String) -> String {
            #"{"jsonrpc":"2.0","id":\#(id),"method":"eval","params":{"code":"return \#(code)"}}"#
        }
        client.send(raw: request(1, "1") + "\n" + request(2, "'two'") + "\r\n\n" + request(3, "3"))
        try await Task.sleep(nanoseconds: 100_000_000)
        let fourth = request(4, "2 + 2")
        client.send(raw: "\n" + fourth.prefix(20))
        try await Task.sleep(nanoseconds: 100_000_000)
        client.send(raw: String(fourth.dropFirst(20)) + "\n")
        var texts: [String] = []
        let deadline = Date().addingTimeInterval(15)
        while texts.count < 4, let message = client.next(until: deadline) {
            #expect(message["id"] as? Int == texts.count + 1, "\(message)")
            texts.append((message["result"] as? [String: Any])?["text"] as? String ?? "\(message)")
        }
        #expect(texts == ["1", "\"two\"", "3", "4"])
        _ = await host.stop()
    }

    @Test func connectDisconnectCyclesLeaveNothingBehind() async throws {
        let host = try await groceriesHost()
        let probe = try host.client()
        func liveSubscriptions() -> Int? {
            ((probe.call("eval", ["code": "#subscriptions()"])?["result"] as? [String: Any])?["value"] as? Int)
        }
        let subscriptionsBefore = try #require(liveSubscriptions())
        let descriptorsBefore = host.descriptorCount
        for _ in 0..<100 {
            let client = try host.client()
            _ = client.call("observe", ["service": #"services.store:collection("groceries")"#, "key": "count"])
            _ = client.call("on", ["event": "tick"])
            _ = client.call("view", ["watch": true])
        }
        // Disconnects are handled as the host reads them: wait until they all are.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && (liveSubscriptions() != subscriptionsBefore || host.descriptorCount > descriptorsBefore) {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(liveSubscriptions() == subscriptionsBefore)
        #expect(host.descriptorCount <= descriptorsBefore)
        _ = await host.stop()
    }

    @Test func aStaleSocketIsReplacedAndALiveNameIsAnError() async throws {
        let sandbox = try Sandbox()
        let runtime = try sandbox.makeFolder("run")
        let folder = runtime + "/crescent"
        mkdir(folder, 0o700)
        // A socket file nobody listens on, as a host that was killed leaves behind.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array((folder + "/dup.sock").utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(stale)

        try sandbox.write("idle.lua", "local C = controller('Idle')\nfunction C:loadView() return view.text('idle') end\napp.push(C)\n")
        let first = try await ListeningHost(script: "idle.lua", name: "dup", sandbox: sandbox, runtime: runtime)
        let hello = try first.client().call("hello")
        #expect((hello?["result"] as? [String: Any])?["name"] as? String == "dup")

        let second = try await crescent(["--listen=dup", "idle.lua"], in: sandbox, environment: first.environment, timeLimit: 30)
        #expect(second.status == 2, "\(second)")
        #expect(second.stderr.contains("pid \(first.pid)"), "\(second)")
        _ = await first.stop()
        #expect(access(first.socketPath, F_OK) != 0, "the socket is removed at exit")
    }

    @Test func defaultNamesTheConfigAndNumberedNames() async throws {
        let sandbox = try Sandbox()
        let runtime = try sandbox.makeFolder("run")
        let idle = "local C = controller('Idle')\nfunction C:loadView() return view.text('idle') end\napp.push(C)\n"
        try sandbox.write("idle.lua", idle)
        let environment: [String: String?] = ["XDG_RUNTIME_DIR": runtime]
        var hosts: [CrescentProcess] = []
        defer { for host in hosts { host.send(SIGKILL, expecting: .death) } }
        func start(_ arguments: [String], directory: String? = nil) throws {
            let host = CrescentProcess(arguments, directory: directory ?? sandbox.path, environment: environment)
            try host.start()
            hosts.append(host)
        }
        func names() async throws -> [String] {
            let listed = try await crescent(["ls"], in: sandbox, environment: environment)
            return listed.stdoutLines.dropFirst().compactMap { $0.split(separator: " ").first.map(String.init) }
        }
        // A script listens as its base name; a chunk as "crescent", then "crescent-2".
        try start(["--listen", "idle.lua"])
        try start(["--listen", "-e", idle])
        try start(["--listen", "-e", idle])
        // [host] listen = "NAME" in the config file.
        let configured = try sandbox.makeFolder("configured")
        try sandbox.write("configured/crescent.toml", "[host]\nlisten = \"from-config\"\n")
        try start([sandbox.path + "/idle.lua"], directory: configured)
        let expected = ["crescent", "crescent-2", "from-config", "idle"]
        let deadline = Date().addingTimeInterval(30)
        var seen: [String] = []
        while Date() < deadline {
            seen = try await names()
            if seen == expected { break }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        #expect(seen == expected)
        let hello = try RemoteTestClient(path: runtime + "/crescent/idle.sock").call("hello")
        let result = hello?["result"] as? [String: Any]
        #expect(result?["script"] as? String == "idle.lua")
        #expect((result?["services"] as? [[String: Any]])?.contains { $0["name"] as? String == "geocoder" } == true)
    }

    @Test(.enabled(if: getuid() == 0, "only root can hand a folder to another user"))
    func aFolderOfAnotherUserIsRefused() async throws {
        let sandbox = try Sandbox()
        let runtime = try sandbox.makeFolder("run")
        mkdir(runtime + "/crescent", 0o700)
        chown(runtime + "/crescent", 65534, 65534)
        let result = try await crescent(["--listen=x", "-e", "print(1)"], in: sandbox, environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("belongs to uid 65534"), "\(result)")
    }

    static let canDropPrivileges = getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && access("/usr/bin/python3", X_OK) == 0

    @Test(.enabled(if: canDropPrivileges, "a client of another uid needs root, /usr/bin/setpriv and /usr/bin/python3"))
    func aClientOfAnotherUserIsRefused() async throws {
        let host = try await groceriesHost()
        chmod(host.sandbox.path, 0o755)
        chmod(host.runtime, 0o755)
        let client = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(sys.argv[1])
            except OSError as e:
                print("refused:", e.strerror); sys.exit(0)
            s.settimeout(20)
            print(s.makefile().readline().strip())
            """
        func runAsNobody() throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", client, host.socketPath]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.runUnblocked()
            process.waitUntilExit()
            return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        // The folder (0700) keeps another user out.
        #expect(try runAsNobody().contains("refused: Permission denied"))
        // With the folder and socket opened up by hand, the peer check still refuses.
        chmod(host.folder, 0o777)
        chmod(host.socketPath, 0o777)
        let answer = try runAsNobody()
        #expect(answer.contains("permission") && answer.contains("uid 65534"), "\(answer)")
        #expect(!answer.contains("result"))
        _ = await host.stop()
    }
}
