import Testing

/// The newcomer probe of issue 39 (/work/attack/newcomer/REPORT.md): each mistake a new script
/// author made that was silent or misleading, now named at its line with the fix.
@Suite struct HardeningNewcomerTests {
    /// Finding 1: a `self:command` whose options are refused registers nothing, so `help` and an
    /// unknown command still list the commands (they raised inside the host before); the
    /// refused type and a misspelled method name get the closest name.
    @Test func aRefusedCommandLeavesHelpWorking() async throws {
        let result = try await runScript("""
            local Hello = controller("Hello")
            function Hello:loadView() return view.stack { view.text { id = "t", text = "hi" } } end
            function Hello:viewDidLoad()
              self:command("add", "add", "add one", { args = { "item: string", "qty: integer?" } })
              self:command("bad", "add", "x", { args = { "item: strin" } })
            end
            function Hello:add(item, qty) print("added", item, qty) end
            function Hello:viewDidAppear()
              print(select(2, pcall(self.command, self, "more", "addd", "x")))
            end
            app.push(Hello)
            """, stdinText: "help\nad milk\nadd milk 2\nquit\n")
        #expect(result.stdout.contains("commands of Hello:\n  add   add one\n  help  list the commands\n  quit  exit\n"), "\(result)")
        #expect(result.stdout.contains("added\tmilk\t2\n"), "\(result)")
        #expect(result.stdout.contains("command 'more': Hello has no method 'addd'; did you mean 'add'?"), "\(result)")
        #expect(result.stderr.contains("got item: strin; did you mean 'string'?)"), "\(result)")
        #expect(result.stderr.contains("unknown command 'ad'; commands of Hello:\n  add   add one"), "\(result)")
        #expect(!result.stderr.contains("[crescent controllers]:"), "\(result)")
        #expect(!result.stderr.contains("attempt to index a nil value"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// One misspelled read of a model value or host handle: the expression, how the message
    /// starts (after `script.lua:LINE: `) and how it ends.
    struct Case: Sendable, CustomStringConvertible {
        let code: String
        let starts: String
        let ends: String
        var description: String { code }
    }

    static let cases: [Case] = [
        Case(code: "fix.speeed", starts: "no field 'speeed' on location (fields: lat, lon, time, provider, altitude, speed, ",
             ends: "; did you mean 'speed'?)"),
        Case(code: "places[1].contry", starts: "no field 'contry' on placemark (fields: name, locality, ",
             ends: "; did you mean 'country'?)"),
        Case(code: "err.mesage", starts: "no field 'mesage' on error (fields: code, message, service, method",
             ends: "; did you mean 'message'?)"),
        Case(code: "done.reslt", starts: "no field 'reslt' on Task (fields: done, result, error",
             ends: "; did you mean 'result'?)"),
        Case(code: "later.firngs", starts: "no field 'firngs' on Timer (fields: active, interval, repeats, firings, schedule",
             ends: "; did you mean 'firings'?)"),
        Case(code: "sub.actve", starts: "no field 'actve' on Subscription (fields: active, ",
             ends: "; did you mean 'active'?)"),
        Case(code: "sub:cancle()", starts: "no method 'cancle' on Subscription (methods: cancel",
             ends: "; did you mean 'cancel'?)"),
        Case(code: "fix.frobnicate", starts: "no field 'frobnicate' on location (fields: lat, ", ends: ")"),
    ]

    /// Finding 2: the README's promise ("a property or method of a service or model object")
    /// for the values services hand out and the host's own handles; declared fields a value
    /// lacks still read nil.
    @Test func aMisspelledFieldOfAModelOrHandleIsNamed() async throws {
        let header = """
            task(function()
              local fix = services.location:current()
              local places = services.geocoder:reverse({ lat = 48.85, lon = 2.35 })
              local _, err = services.geocoder:reverse({ lat = 123, lon = 0 })
              local done = task(function() end)
              local later = timer.after(60, print)
              local sub = on("my.event", print)
            """
        let lines = header.split(separator: "\n", omittingEmptySubsequences: false).count
        let body = Self.cases.map { "  print(select(2, pcall(function() return \($0.code) end)))" }.joined(separator: "\n")
        let source = header + "\n" + body + """

              print(fix.altitude, places[1].country, places[1].distance ~= nil, err.code, done.done, later.firings, sub.active)
              later:cancel(); sub:cancel()
            end)
            """
        let result = try await runScript(source, options: ["--data-dir", "data", "--location", "fixed:48.85,2.35"])
        #expect(result.status == 0, "\(result)")
        let printed = result.stdoutLines
        for (index, expected) in Self.cases.enumerated() {
            let line = index < printed.count ? printed[index] : ""
            let place = "script.lua:\(lines + index + 1): "
            #expect(line.hasPrefix(place + expected.starts) && line.hasSuffix(expected.ends), "\(expected): \(line)")
        }
        #expect(printed.last == "nil\tFrance\ttrue\tinvalid_argument\ttrue\t0\ttrue", "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }
}
