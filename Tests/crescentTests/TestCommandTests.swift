import Foundation
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `crescent test` through the binary: outcomes and their messages, isolation, virtual time,
/// fakes, golden files, --filter and --junit.
@Suite struct TestCommandTests {
    /// Writes `specs` (name → source) under `spec/` in a fresh sandbox and runs `crescent test ARGS` there.
    static func run(_ specs: [String: String], _ arguments: [String] = [], sandbox: Sandbox? = nil,
                    timeLimit: Double = 60) async throws -> (RunResult, Sandbox) {
        let sandbox = try sandbox ?? Sandbox()
        for (name, source) in specs { try sandbox.write("spec/" + name, source) }
        let result = try await crescent(["test"] + arguments, in: sandbox, timeLimit: timeLimit)
        return (result, sandbox)
    }

    @Test func passingFailingErroringAndPendingTestsAreReportedWithTheSummaryLast() async throws {
        let (result, _) = try await Self.run(["outcomes_spec.lua": """
            describe("math", function()
              it("adds", function() assert.equals(4, 2 + 2) end)
              it("subtracts wrongly", function()
                assert.equals(1, 3 - 1)
              end)
              it("errors", function()
                local t = nil
                return t.x
              end)
              pending("divides")
              it("has no body yet")
            end)
            """])
        #expect(result.status == 1, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.last == "1 passed, 2 failed, 2 pending", "\(result)")
        #expect(lines.contains("ok      math adds  (spec/outcomes_spec.lua:2)"), "\(result)")
        #expect(lines.contains("FAIL    math subtracts wrongly  (spec/outcomes_spec.lua:3)"), "\(result)")
        #expect(result.stdout.contains("spec/outcomes_spec.lua:4: expected the values to be equal"), "\(result)")
        #expect(result.stdout.contains("expected: 1") && result.stdout.contains("actual:   2"), "\(result)")
        #expect(result.stdout.contains("spec/outcomes_spec.lua:8: attempt to index a nil value (local 't')"), "\(result)")
        #expect(result.stdout.contains("stack traceback:"), "\(result)")
        #expect(lines.contains("pending math divides  (spec/outcomes_spec.lua:10)"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func everyAssertionKindFailsWithItsFileLineAndTheValues() async throws {
        let (result, _) = try await Self.run(["assertions_spec.lua": """
            it("same", function() assert.same({ a = 1, list = { 1, 2 } }, { a = 1, list = { 1, 3 }, extra = true }) end)
            it("truthy", function() assert.truthy(false) end)
            it("falsy", function() assert.falsy("yes") end)
            it("is_nil", function() assert.is_nil(0) end)
            it("error", function() assert.error(function() end) end)
            it("error message", function() assert.has_error(function() error("boom") end, "bang") end)
            it("matches", function() assert.matches("^%d+$", "12a") end)
            it("called", function() local s = spy.new(); s(1); assert.spy(s).was.called(2) end)
            it("called_with", function() local s = spy.new(); s("a", 2); assert.spy(s).was.called_with("a", 3) end)
            it("plain assert", function() assert(nil, "the value was missing") end)
            it("passes", function()
              local s = spy.new(function(x) return x * 2 end)
              assert.equals(6, s(3))
              assert.spy(s).was.called_with(3)
              assert.same({ 1, { 2 } }, { 1, { 2 } })
              assert.error(function() error("boom") end, "boom")
              assert.is_not.equals(1, 2)
            end)
            """])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 10 failed", "\(result)")
        let out = result.stdout
        #expect(out.contains("spec/assertions_spec.lua:1: expected the values to be the same: the tables differ"), "\(result)")
        #expect(out.contains(".extra") && out.contains("(missing)  |  true"), "\(result)")
        #expect(out.contains(".list[2]") && out.contains("2  |  3"), "\(result)")
        #expect(out.contains("spec/assertions_spec.lua:2: expected a truthy value, got false"), "\(result)")
        #expect(out.contains("spec/assertions_spec.lua:3: expected a falsy value, got \"yes\""), "\(result)")
        #expect(out.contains("spec/assertions_spec.lua:4: expected nil, got 0"), "\(result)")
        #expect(out.contains("spec/assertions_spec.lua:5: expected an error, but the function returned"), "\(result)")
        #expect(out.contains("spec/assertions_spec.lua:6: the error differs"), "\(result)")
        #expect(out.contains("spec/assertions_spec.lua:7: expected the string to match"), "\(result)")
        #expect(out.contains("spec/assertions_spec.lua:8: expected the spy to be called 2 times, it was called 1 time"), "\(result)")
        #expect(out.contains("spec/assertions_spec.lua:9: expected the spy to be called with (\"a\", 3)"), "\(result)")
        #expect(out.contains("(\"a\", 2)"), "\(result)")
        #expect(out.contains("spec/assertions_spec.lua:10: the value was missing"), "\(result)")
    }

    @Test func filterRunsOnlyTheMatchingTests() async throws {
        let (result, _) = try await Self.run(["filter_spec.lua": """
            describe("store", function()
              it("adds", function() end)
              it("removes", function() error("not this one") end)
            end)
            it("other adds", function() end)
            """], ["--filter", "store adds"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["ok      store adds  (spec/filter_spec.lua:2)", "1 passed, 0 failed"], "\(result)")
    }

    @Test func eachTestRunsInAFreshHost() async throws {
        let (result, _) = try await Self.run(["isolation_spec.lua": """
            local deliveries = 0
            it("leaves a global, a subscription and a record behind", function()
              leftover = "from the first test"
              on("ping", function() deliveries = deliveries + 1 end)
              observe(services.store:collection("notes"), "count", function() end)
              local _, err = services.store:collection("notes"):add({ text = "hi" })
              assert.is_nil(err)
              assert.equals(1, services.store:collection("notes").count)
            end)
            it("sees none of them", function()
              assert.is_nil(leftover)
              assert.equals(0, #subscriptions())
              post("ping")
              clock.advance(1)
              assert.equals(0, deliveries)
              assert.equals(0, services.store:collection("notes").count)
              assert.equals(0, clock.now() - 1)
            end)
            """])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.last == "2 passed, 0 failed", "\(result)")
    }

    @Test func anHourOfAMinuteTimerFiresSixtyTimesInWellUnderASecond() async throws {
        let (result, _) = try await Self.run(["time_spec.lua": """
            it("fires every minute", function()
              local fired, times = 0, {}
              timer.every(60, function() fired = fired + 1; times[#times + 1] = clock.now() end)
              local started = os.clock()
              clock.advance(3600)
              local took = os.clock() - started
              assert.equals(60, fired)
              assert.equals(60, times[1])
              assert.equals(3600, times[60])
              assert.truthy(took < 0.5, "took " .. took .. " s of CPU")
              print(("took %.4f s"):format(took))
            end)
            it("lets a task sleep through virtual time", function()
              local woke
              task(function() sleep(90); woke = clock.now() end)
              clock.advance(89)
              assert.is_nil(woke)
              clock.advance(1)
              assert.equals(90, woke)
            end)
            it("awaits in the test body itself", function()
              sleep(30)
              assert.equals(30, clock.now())
            end)
            """])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.last == "3 passed, 0 failed", "\(result)")
        #expect(result.elapsed < 30, "\(result)")
    }

    /// `os.time()` and `os.date()` read the test's clock, which starts at 2026-01-01T00:00:00Z;
    /// with an explicit time they are Lua's own.
    @Test func theTimeOfDayIsVirtualTime() async throws {
        let (result, _) = try await Self.run(["date_spec.lua": """
            it("reads the clock of the test", function()
              local start = os.time()
              assert.equals(math.type(start), "integer")
              assert.equals("2026-01-01T00:00:00Z", os.date("!%Y-%m-%dT%H:%M:%SZ"))
              clock.advance(90.5)
              assert.equals(start + 90, os.time())
              assert.equals("2026-01-01T00:01:30Z", os.date("!%Y-%m-%dT%H:%M:%SZ"))
              assert.equals(2026, os.date("!*t").year)
              assert.equals("1970-01-01 00:00:10", os.date("!%Y-%m-%d %H:%M:%S", 10))
              assert.equals(os.time(os.date("*t", 12345)), 12345)
            end)
            it("starts again from the same time", function()
              assert.equals("2026-01-01T00:00:00Z", os.date("!%Y-%m-%dT%H:%M:%SZ"))
            end)
            """])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.last == "2 passed, 0 failed", "\(result)")
    }

    @Test func anUnmatchedFakeRouteFailsTheTestListingTheRoutes() async throws {
        let (result, _) = try await Self.run(["http_spec.lua": """
            it("fetches", function()
              fake.http {
                ["GET https://example.org/a"] = { status = 200, body = "A" },
                ["GET https://example.org/b"] = function(request) return { status = 201, body = request.url } end,
              }
              local a = services.http:get("https://example.org/a")
              assert.equals("A", a.body)
              local b = services.http:get("https://example.org/b")
              assert.same({ 201, "https://example.org/b" }, { b.status, b.body })
              local c, err = services.http:get("https://example.org/c")
              assert.is_nil(c)
              assert.equals("network", err.code)
            end)
            """])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("no fake.http route for GET https://example.org/c (routes: GET https://example.org/a, GET https://example.org/b)"), "\(result)")
        #expect(result.stdoutLines.last == "0 passed, 1 failed", "\(result)")
    }

    /// harden4 H11: an answer no server can give is refused naming the route (at fake.http for
    /// a table, at the request for a function's answer), never turned into a 200.
    @Test func aFakeHTTPAnswerNoServerCanGiveIsRefusedNamingTheRoute() async throws {
        let (result, _) = try await Self.run(["answers_spec.lua": #"""
            local function refused(answer)
              local ok, err = pcall(fake.http, { ["GET http://x.test/"] = answer })
              return ok and "accepted" or err
            end
            it("refuses impossible answers", function()
              print(refused({ status = "abc" }))
              print(refused({ status = 1.5 }))
              print(refused({ status = 99999 }))
              print(refused({ status = 200, body = 5 }))
              print(refused({ headers = { ["a\nb"] = "c" } }))
              print(refused({ headers = { a = "c\r\nd" } }))
              print(refused({ status = 404, body = { n = 1 }, headers = { ["X-Ok"] = "yes" } }))
              fake.http { ["GET http://x.test/f"] = function() return { status = 0 } end }
              local response, err = services.http:get("http://x.test/f")
              print(response, err and err.message)
            end)
            """#])
        let lines = result.stdoutLines
        let expected = [
            #"fake.http: route GET http://x.test/: status must be an integer 100-999 (an HTTP status such as 200 or 404), got "abc""#,
            "fake.http: route GET http://x.test/: status must be an integer 100-999 (an HTTP status such as 200 or 404), got 1.5",
            "fake.http: route GET http://x.test/: status must be an integer 100-999 (an HTTP status such as 200 or 404), got 99999",
            "fake.http: route GET http://x.test/: body must be a string or a table (sent as JSON), got number (write it as a string)",
            "fake.http: route GET http://x.test/: header name \"a\\nb\" is not an HTTP header name",
            "fake.http: route GET http://x.test/: header a's value \"c\\13\\nd\" holds a CR, LF or NUL, which no server can send",
            "accepted",
            "nil\tfake.http: route GET http://x.test/f's function answered a table whose: status must be an integer 100-999",
        ]
        for (index, prefix) in expected.enumerated() {
            #expect(lines.contains { $0.contains(prefix) }, "line \(index + 1): \(prefix)\n\(result)")
        }
        // The function's impossible answer fails the test too, as an unmatched route does.
        #expect(result.status == 1 && result.stdoutLines.last == "0 passed, 1 failed", "\(result)")
    }

    @Test func reachingTheNetworkOrTheDeviceWithoutAFakeFailsNamingTheFake() async throws {
        let (result, _) = try await Self.run(["real_spec.lua": """
            it("reaches the network", function()
              services.http:get("https://example.org/", function() end)
              clock.advance(1)
            end)
            it("reaches the location device", function()
              services.location:start()
              clock.advance(1)
            end)
            """])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("the code under test reached the network (GET https://example.org/); give it a fake: fake.http"), "\(result)")
        #expect(result.stdout.contains("started services.location without a fake; use fake.location"), "\(result)")
        #expect(result.stdoutLines.last == "0 passed, 2 failed", "\(result)")
    }

    @Test func fakeServicesAnswerCallsEmitEventsAndSetProperties() async throws {
        let (result, _) = try await Self.run(["fake_spec.lua": """
            it("fakes any service", function()
              local weather = fake.service("weather", {
                properties = { temperature = 21 },
                methods = { forecast = function(city) return { city = city, sky = "clear" } end, broken = function() error({ code = "unavailable", message = "down" }) end },
                events = { "didChange" },
              })
              assert.equals(21, services.weather.temperature)
              local forecast = services.weather:forecast("Paris")
              assert.same({ city = "Paris", sky = "clear" }, { city = forecast.city, sky = forecast.sky })
              local _, err = services.weather:broken()
              assert.equals("unavailable", err.code)
              local seen, changed = {}, spy.new()
              observe(services.weather, "temperature", function(new) seen[#seen + 1] = new end, { initial = false })
              services.weather:on("didChange", function(payload) changed(payload.by) end)
              weather:set("temperature", 25)
              weather:emit("didChange", { by = 4 })
              clock.advance(0)
              assert.same({ 25 }, seen)
              assert.spy(changed).was.called_with(4)
              assert.equals("forecast", weather.calls[1].method)
            end)
            it("keeps a declared service's signatures", function()
              fake.service("geocoder", { methods = { reverse = function() return { { name = "Nowhere" } } end } })
              assert.has_error(function() services.geocoder:reverse("here", function() end) end)
              local places = services.geocoder:reverse({ lat = 1, lon = 2 })
              assert.equals("Nowhere", places[1].name)
            end)
            """])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.last == "2 passed, 0 failed", "\(result)")
    }

    @Test func goldenFilesFailWhenTheViewDiffersAndUpdateRewritesThem() async throws {
        let spec = """
            it("shows a greeting", function()
              local Hello = controller("Hello")
              function Hello:loadView() return view.stack { view.text("Hello"), view.text { id = "name", text = os.getenv("WHO") or "world" } } end
              app.push(Hello)
              assert.view("spec/hello.txt")
            end)
            """
        let (missing, sandbox) = try await Self.run(["golden_spec.lua": spec])
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stdout.contains("the golden file spec/hello.txt does not exist (golden paths are read from the folder crescent test runs in ("),
                "\(missing)")
        #expect(missing.stdout.contains("; run `crescent test --update` to write it from this view"), "\(missing)")
        let updated = try await crescent(["test", "--update"], in: sandbox)
        #expect(updated.status == 0, "\(updated)")
        #expect(updated.stdout.contains("updated 1 golden file: spec/hello.txt"), "\(updated)")
        #expect(try String(contentsOfFile: sandbox.path + "/spec/hello.txt", encoding: .utf8) == "Hello\nworld\n")
        let passing = try await crescent(["test"], in: sandbox)
        #expect(passing.status == 0, "\(passing)")
        try sandbox.write("spec/hello.txt", "Hello\nthere\n")
        let differing = try await crescent(["test"], in: sandbox)
        #expect(differing.status == 1, "\(differing)")
        #expect(differing.stdout.contains("the view differs from spec/hello.txt"), "\(differing)")
        #expect(differing.stdout.contains("-  2| there") && differing.stdout.contains("+  2| world"), "\(differing)")
    }

    @Test func junitOutputIsXMLWithACaseAndAFailurePerTest() async throws {
        let sandbox = try Sandbox()
        let (result, _) = try await Self.run(["a_spec.lua": """
            describe("a", function()
              it("passes", function() print("said <something> & more") end)
              it("fails", function() assert.equals("x", "y") end)
              pending("later")
            end)
            """], ["--junit", "report.xml"], sandbox: sandbox)
        #expect(result.status == 1, "\(result)")
        let data = try Data(contentsOf: URL(fileURLWithPath: sandbox.path + "/report.xml"))
        let reader = JUnitReader()
        let parser = XMLParser(data: data)
        parser.delegate = reader
        #expect(parser.parse(), "\(String(decoding: data, as: UTF8.self))")
        #expect(reader.elements.filter { $0.name == "testsuite" }.count == 1)
        let cases = reader.elements.filter { $0.name == "testcase" }
        #expect(cases.map { $0.attributes["name"] ?? "" } == ["a passes", "a fails", "a later"])
        #expect(reader.elements.filter { $0.name == "failure" }.count == 1)
        #expect(reader.elements.filter { $0.name == "skipped" }.count == 1)
        #expect(reader.text.contains("said <something> & more"))
        #expect(reader.elements.first { $0.name == "testsuites" }?.attributes["failures"] == "1")
    }

    @Test func aSpecFileThatDoesNotLoadFailsAndTheOthersRun() async throws {
        let (result, _) = try await Self.run([
            "broken_spec.lua": "describe('x', function() it('y' end)",
            "fine_spec.lua": "it('works', function() assert.truthy(true) end)",
        ])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("FAIL    (loading the file)  (spec/broken_spec.lua)"), "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
    }

    @Test func aMissingPathIsAUsageError() async throws {
        let result = try await crescent(["test", "nowhere"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("no such file or folder: nowhere"), "\(result)")
    }
}

/// Collects the elements and text of an XML document.
final class JUnitReader: NSObject, XMLParserDelegate, @unchecked Sendable {
    var elements: [(name: String, attributes: [String: String])] = []
    var text = ""

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        elements.append((elementName, attributes))
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
}
