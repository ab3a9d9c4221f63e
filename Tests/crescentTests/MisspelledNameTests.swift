import Testing

/// DESIGN.md "Names are checked": every misspelled name a script looks up raises at the call site
/// with the declared names and the closest one; a controller method spelled like a lifecycle step
/// is warned about; tracebacks put the script's frames first and fold the host's into one line.
@Suite struct MisspelledNameTests {
    /// One misspelling: the Lua expression that makes it, and how its message starts and ends
    /// (the middle lists the declared names, which grow with the services).
    struct Case: Sendable, CustomStringConvertible {
        let code: String
        let starts: String
        let ends: String
        var description: String { code }
    }

    static let cases: [Case] = [
        Case(code: "services.location.locaton",
             starts: "no property 'locaton' on location (properties: ", ends: "; did you mean 'location'?)"),
        Case(code: "services.store:colection('x')",
             starts: "no method 'colection' on store (methods: ", ends: "; did you mean 'collection'?)"),
        Case(code: "services.store:collection('x').cout",
             starts: "no property 'cout' on collection (properties: ", ends: "; did you mean 'count'?)"),
        Case(code: "services.location.frobnicate",
             starts: "no property or method 'frobnicate' on location (properties: ", ends: ")"),
        Case(code: "on('location.didUpdate', function() end)",
             starts: "bad argument #1 to 'on' ('didUpdate' is not an event of location (events: ",
             ends: "; did you mean 'didUpdateLocations'?))"),
        Case(code: "services.location:on('didFial', function() end)",
             starts: "location:on(event, handler[, options]): argument #1: 'didFial' is not an event of location (events: ",
             ends: "; did you mean 'didFail'?)"),
        Case(code: "observe(services.location, 'locaton', function() end)",
             starts: "bad argument #2 to 'observe' ('locaton' is not a property of location (properties: ",
             ends: "; did you mean 'location'?))"),
        Case(code: "services.locaton",
             starts: "no service 'locaton' (services: ", ends: "; did you mean 'location'?)"),
        Case(code: "view.txt { text = 'hi' }",
             starts: "no view component 'view.txt' (components: ", ends: "; did you mean 'text'?)"),
    ]

    /// Each case on its own line of one script, so each message must name that line.
    @Test func eachMisspellingRaisesWithTheDeclaredNamesAndTheClosestOne() async throws {
        let source = Self.cases.map { "print(select(2, pcall(function() return \($0.code) end)))" }.joined(separator: "\n")
        let result = try await runScript(source, options: ["--data-dir", "data", "--location", "fixed:48.85,2.35"])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        for (index, expected) in Self.cases.enumerated() {
            let line = index < lines.count ? lines[index] : ""
            let place = "script.lua:\(index + 1): "
            #expect(line.hasPrefix(place + expected.starts) && line.hasSuffix(expected.ends), "\(expected): \(line)")
        }
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// What is declared, and names a script posts itself, read and subscribe as before.
    @Test func declaredNamesAndAScriptsOwnEventsStillWork() async throws {
        let result = try await runScript("""
            print(services.location.location == nil, type(services.location.start))
            local sub = on("my.event", function(payload) print("got", payload) end, { once = true })
            on("location.didFail", function() end):cancel()
            post("my.event", 7)
            """, options: ["--location", "fixed:48.85,2.35"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["true\tfunction", "got\t7"], "\(result)")
    }

    @Test func aControllerMethodSpelledLikeALifecycleStepIsWarnedAbout() async throws {
        let result = try await runScript("""
            local Tracker = controller("Tracker")
            function Tracker:viewDidLoaded() print("never") end
            function Tracker:initRows() end
            function Tracker:viewDidAppear() app.exit(0) end
            app.push(Tracker)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrLines.filter { !$0.isEmpty } == [
            "crescent: warning: script.lua:2: Tracker:viewDidLoaded is not a lifecycle step, so it is never called as one; did you mean 'viewDidLoad'?",
        ], "\(result)")
    }

    /// An error in a lifecycle method: the script's frames, then one line for the prelude's.
    @Test func aTracebackShowsTheScriptsFramesAndFoldsTheHosts() async throws {
        let result = try await runScript("""
            local function fail() error("broken") end
            local Tracker = controller("Tracker")
            function Tracker:viewDidLoad() fail() end
            function Tracker:viewDidAppear() app.exit(0) end
            app.push(Tracker)
            """)
        let lines = result.stderrLines.filter { !$0.isEmpty }
        #expect(lines.first == "crescent: error in Tracker:viewDidLoad: script.lua:1: broken", "\(result)")
        guard let header = lines.firstIndex(of: "stack traceback:") else {
            Issue.record("no traceback: \(result)")
            return
        }
        let frames = Array(lines[(header + 1)...])
        #expect(frames.count >= 3, "\(result)")
        #expect(frames.dropLast().allSatisfy { $0.hasPrefix("\tscript.lua:") }, "\(result)")
        #expect(frames.last?.hasPrefix("\t(") == true && frames.last?.contains("host frames: ") == true, "\(result)")
        #expect(frames.last?.contains("[crescent controllers") == true, "\(result)")
    }
}
