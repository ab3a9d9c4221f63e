import Foundation
import Testing

/// Results and messages that say what happened: exit statuses, usage errors, option tables
/// checked by one rule, the end of piped commands, and errors that name the bad part.
@Suite struct HardeningMessageTests {
    @Test func quitOrExitZeroAfterAHandlerErrorExitsOne() async throws {
        let failing = """
            timer.after(0, function() error("handler failed") end)
            timer.after(0.05, function() app.exit(%@) end)
            """
        let zero = try await runScript(failing.replacingOccurrences(of: "%@", with: "0"))
        #expect(zero.status == 1, "\(zero)")
        let explicit = try await runScript(failing.replacingOccurrences(of: "%@", with: "3"))
        #expect(explicit.status == 3, "an explicit status wins: \(explicit)")
        let clean = try await runScript("timer.after(0, function() app.exit(0) end)")
        #expect(clean.status == 0, "\(clean)")
    }

    @Test func emptyOrNegativeOptionValuesAreUsageErrorsThatSayWhy() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", "print(1)")
        let dataDir = try await crescent(["--data-dir", "", "script.lua"], in: sandbox)
        #expect(dataDir.status == 2 && dataDir.stderr.contains("--data-dir must name a folder, got an empty string"), "\(dataDir)")
        let timeout = try await crescent(["--timeout", "-1", "script.lua"], in: sandbox)
        #expect(timeout.status == 2 && timeout.stderr.contains("--timeout must be a positive number of seconds, got -1"), "\(timeout)")
        let fixed = try await crescent(["--location", "fixed", "script.lua"], in: sandbox)
        #expect(fixed.stderr.contains("location fixed: needs a position") && !fixed.stderr.contains("fixed::"), "\(fixed)")
    }

    @Test func everyOptionTableFollowsOneRule() async throws {
        let result = try await runScript("""
            local function try(f) local ok, err = pcall(f) print(ok, err) end
            try(function() services.location:start({ distance = -1 }) end)
            try(function() services.location:start({ distance = 0/0 }) end)
            try(function() services.location:start({ distance = "far" }) end)
            try(function() services.location:start({ bogus = 1 }) end)
            try(function() inspect(1, { bogus = 1 }) end)
            try(function() services.geocoder:reverse({ lat = 1, lon = 2 }, { bogus = 1 }, function() end) end)
            try(function() services.geocoder:search("Paris", { limit = 2, contry = "FR" }, function() end) end)
            """, options: ["--location", "fixed:1,2"])
        let lines = result.stdoutLines
        #expect(lines.count == 7, "\(result)")
        #expect(lines[0].hasSuffix("options.distance must be a number >= 0, got -1"), "\(result)")
        #expect(lines[1].hasSuffix("options.distance must be a number >= 0, got nan") || lines[1].contains("options.distance must be a number >= 0"), "\(result)")
        #expect(lines[2].hasSuffix("options.distance must be a number, got string"), "\(result)")
        #expect(lines[3].hasSuffix("unknown option 'bogus' (options: distance)"), "\(result)")
        #expect(lines[4].contains("inspect: unknown option 'bogus' (options: depth, indent, length, newline, string, width)"), "\(result)")
        // A misspelled option is a name, raised at the line by every service (not a value the
        // service rejects, which comes back through the completion).
        #expect(lines[5].hasSuffix("argument #2: unknown option 'bogus' (options: count)"), "\(result)")
        #expect(lines[6].hasSuffix("argument #2: unknown option 'contry' (options: country, limit; did you mean 'country'?)"), "\(result)")
    }

    @Test func theEndOfPipedCommandsEndsAControllerApp() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", """
            local Hello = controller("Hello")
            function Hello:loadView() return view.text { text = "hi" } end
            function Hello:viewDidLoad() self:command("greet", "greet", "say hello") end
            function Hello:greet(name) print("hello " .. (name or "?")) end
            app.push(Hello)
            """)
        let ended = try await crescent(["--ui", "json", "script.lua"], in: sandbox, stdin: "greet ann\n", timeLimit: 30)
        #expect(!ended.timedOut && ended.status == 0, "\(ended)")
        #expect(ended.stdout.contains("hello ann"), "the commands before the end ran: \(ended)")
        let empty = try await crescent(["--ui", "json", "script.lua"], in: sandbox, stdin: "", timeLimit: 30)
        #expect(!empty.timedOut && empty.status == 0, "\(empty)")
        let kept = try await crescent(["--ui", "json", "--keep-running", "--timeout", "1", "script.lua"], in: sandbox, stdin: "", timeLimit: 30)
        #expect(kept.status == 1 && kept.stderr.contains("--timeout"), "--keep-running keeps it until the time limit: \(kept)")
    }

    @Test func messagesNameWhatIsWrong() async throws {
        let result = try await runScript("""
            print(pcall(view.text, "\\xff\\xfe"))
            print(pcall(function() services.store:collection("") end))
            services.http:get("http://127.0.0.1:9/", { headers = { X = "a\\0b" } }, function(r, err) print(err.message) end)
            """, options: ["--data-dir", "data"])
        let lines = result.stdoutLines
        #expect(lines.count == 3, "\(result)")
        #expect(lines.first?.contains("string that is not valid UTF-8") == true && lines.first?.contains("got string\t") == false, "\(result)")
        #expect(lines.dropFirst().first?.hasPrefix("false\tscript.lua:2: store.collection: invalid_argument:") == true, "\(result)")
        #expect(lines.last == "header 'X' has a NUL byte in its value: header values are one line of text", "\(result)")
    }

    /// A collection name that is not UTF-8 is refused for that, not for its length (attack D9).
    @Test func aCollectionNameThatIsNotUTF8IsRefusedForItsEncoding() async throws {
        let result = try await runScript("""
            print(pcall(function() services.store:collection("\\xff\\xfe") end))
            print(pcall(function() services.store:collection("notes\\xe9") end))
            print(pcall(function() services.store:collection("") end))
            """, options: ["--data-dir", ":memory:"])
        let lines = result.stdoutLines
        #expect(lines.count == 3, "\(result)")
        let encoding = "store.collection: invalid_argument: a collection name must be valid UTF-8 text; this one has bytes that are not UTF-8"
        for (index, line) in lines.prefix(2).enumerated() {
            #expect(line == "false\tscript.lua:\(index + 1): \(encoding)", "\(result)")
        }
        #expect(lines.last?.hasSuffix("a collection name must be 1 to 200 bytes long") == true, "an empty name is still refused for its length: \(result)")
    }
}

