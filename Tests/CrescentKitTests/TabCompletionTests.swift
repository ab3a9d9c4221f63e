@testable import CrescentKit
import Model
import Services
import Glibc
import Testing

/// The REPL's Tab completion (issue 5): what it offers, and that it never runs user code.
@Suite struct TabCompletionTests {
    /// A host that stays up as the REPL's does (a main chunk that returns would end the run).
    private func completer() throws -> (TestHost, LuaCompletion) {
        let test = try TestHost(thermostat: Thermostat())
        test.run("keepAlive = timer.every(3600, function() end)")
        return (test, LuaCompletion(host: test.host))
    }

    @Test func globalsAndKeywords() throws {
        let (test, completion) = try completer()
        test.run("myValue = 1")
        #expect(completion.complete("pri") == .init(candidates: ["print"], fragmentLength: 3))
        #expect(completion.complete("my").candidates == ["myValue"])
        #expect(completion.complete("x = fun").candidates == ["function"])
        #expect(completion.complete("ret").candidates == ["return"])
        // Names starting with "_" only when asked for.
        #expect(!completion.complete("").candidates.contains("_G"))
        #expect(completion.complete("_").candidates.contains("_VERSION"))
    }

    @Test func fieldsOfTablesAndOfTheirIndexTables() throws {
        let (test, completion) = try completer()
        test.run("""
            proto = setmetatable({ own = 1 }, { __index = setmetatable({ alpha = 1, beta = function() end },
                                                                      { __index = { gamma = true } }) })
            """)
        #expect(completion.complete("string.fo") == .init(candidates: ["format"], fragmentLength: 2))
        #expect(completion.complete("print(proto.") .candidates == ["alpha", "beta", "gamma", "own"])
        #expect(completion.complete("proto:") .candidates == ["beta"], "':' offers functions only")
        test.run("word = 'x'")
        #expect(completion.complete("word:up").candidates == ["upper"], "strings use the string library")
        #expect(completion.complete("proto.missing.x").candidates.isEmpty)
        #expect(completion.complete("print(\"proto.al").candidates.isEmpty, "nothing inside a string")
    }

    @Test func servicesFromTheirDeclarations() throws {
        let (test, completion) = try completer()
        defer { withExtendedLifetime(test) {} }
        #expect(completion.complete("services.ther").candidates == ["thermostat"])
        #expect(completion.complete("services.thermostat.te").candidates == ["temperature"])
        #expect(completion.complete("services.thermostat:s").candidates == ["set", "slow", "start", "stop"])
        #expect(completion.complete("services.thermostat:on(\"did").candidates == ["didAlarm", "didReset"])
        #expect(completion.complete("on(services.thermostat, 'didA").candidates == ["didAlarm"])
        #expect(completion.complete("observe(services.thermostat, \"la").candidates == ["label"])
        #expect(completion.complete("on(\"thermostat.didR").candidates == ["thermostat.didReset"])
        // A property's value is read (through the host's own getter) to go one level further.
        #expect(completion.complete("services.thermostat.readings.").candidates.contains("count"))
    }

    /// Inside `services.geocoder:search("…`, place names: by prefix, accents and alternate names
    /// alike, the biggest place first; other methods' strings and other objects offer nothing.
    @Test func geocoderSearchCompletesPlaceNames() throws {
        let test = try TestHost(plugins: [GeocoderPlugin()])
        test.run("keepAlive = timer.every(3600, function() end); g = services.geocoder")
        let lua = LuaCompletion(host: test.host)
        // The names are worked out off the loop, which waits for them at most 150 ms (a debug
        // build's search takes longer): Tab again, as a person would, until they come.
        let completion = SettledCompletion(lua)
        for typed in ["Mün", "Muen", "Muni"] {
            let answer = completion.complete("services.geocoder:search(\"\(typed)")
            #expect(answer.candidates.first == "Munich", "\(typed): \(answer.candidates)")
            #expect(answer.fragmentLength == typed.count)
        }
        // Only an alternate name (München) continues "Münc": a town named so (Muncie) may lead.
        #expect(completion.complete("g:search(\"Münc").candidates.contains("Munich"))
        let paris = completion.complete("local found = g:search('Pari")
        #expect(paris.candidates.first == "Paris" && paris.candidates.count == LuaCompletion.argumentCompletionLimit, "\(paris.candidates)")
        #expect(paris.candidates.dropFirst().allSatisfy { $0.hasPrefix("Paris ") }, "a city's sections follow it: \(paris.candidates)")
        #expect(paris.candidates.dropFirst().first == "Paris 15 Vaugirard", "the biggest first: \(paris.candidates)")
        #expect(completion.complete("g:search(\"New Y").candidates.first == "New York City")
        #expect(lua.complete("g:search(\"xqzxqz").candidates.isEmpty)
        #expect(lua.complete("g:reverse(\"Pari").candidates.isEmpty, "only search's query completes")
        #expect(lua.complete("string.format(\"Pari").candidates.isEmpty)
    }

    @Test func completionNeverCallsAFunction() throws {
        let (test, completion) = try completer()
        test.run("""
            calls = 0
            trap = setmetatable({}, { __index = function() calls = calls + 1 end })
            deep = { inner = trap }
            """)
        _ = completion.complete("trap.x")
        _ = completion.complete("trap:x")
        _ = completion.complete("deep.inner.x.y")
        _ = completion.complete("trap.")
        test.run("print(calls)")
        #expect(test.lines.last == "0")
    }

    @Test func dotCommandsFilesAndControllerCommands() throws {
        let (test, completion) = try completer()
        #expect(completion.complete(".he").candidates == [".help"])
        #expect(completion.complete(".e").candidates == [".editor", ".exit"])
        #expect(completion.complete(".services ther").candidates == ["thermostat"])
        #expect(completion.complete(":").candidates.isEmpty, "no controller, no commands")
        test.run("""
            local C = controller("C")
            function C:refresh() end
            function C:reset() end
            function C:viewDidLoad() self:command("refresh", "refresh", "again") self:command("reset", "reset") end
            app.push(C)
            """)
        test.settle()
        #expect(completion.complete(":re") == .init(candidates: ["refresh", "reset"], fragmentLength: 2))
        #expect(completion.complete(":").candidates == ["help", "quit", "refresh", "reset"])
    }

    @Test func filesForLoad() throws {
        let answer = LuaCompletion.files(completing: "/proc/sel")
        #expect(answer.candidates == ["/proc/self/"])
        #expect(answer.fragmentLength == "/proc/sel".count)
    }

    @Test func dotCommandsParse() {
        #expect(DotCommand(".help") == .help)
        #expect(DotCommand(".services  geocoder ") == .services("geocoder"))
        #expect(DotCommand(".load my file.lua") == .load("my file.lua"))
        #expect(DotCommand(".load") == .invalid(".load needs a file: .load FILE"))
        #expect(DotCommand(".5") == nil, "a number, not a command")
        // `.subs extra` did what `.subs` does, as if the word were a filter.
        #expect(DotCommand(".subs extra") == .invalid(".subs takes no argument, got 'extra': type .subs alone "
                                                      + "(subscriptions() returns the list to filter in Lua)"))
        #expect(DotCommand(".help me") == .invalid(".help takes no argument, got 'me': type .help alone"))
        #expect(DotCommand(".subs  ") == .subscriptions)
        #expect(DotCommand("x.y") == nil)
        #expect(DotCommand(".nope") == .invalid("unknown command .nope (commands: .help, .services, .subs, .load, .editor, .exit); .help says what each does"))
        #expect(DotCommand(".lod") == .invalid("unknown command .lod (commands: .help, .services, .subs, .load, .editor, .exit; did you mean .load?); .help says what each does"))
    }
}

/// A plugin with the geocoder only, over the shipped data.
private struct GeocoderPlugin: Plugin {
    let name = "geocoder"
    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { [GeocoderService()] }
}

/// Tab pressed again (up to 60 s) until the answer has candidates: the geocoder's names come off
/// the loop, so an early Tab may offer none.
private struct SettledCompletion {
    let completion: LuaCompletion
    init(_ completion: LuaCompletion) { self.completion = completion }

    func complete(_ line: String) -> LuaCompletion.Answer {
        let deadline = ContinuousClock.now + .seconds(60)
        var answer = completion.complete(line)
        while answer.candidates.isEmpty && ContinuousClock.now < deadline {
            usleep(100_000)
            answer = completion.complete(line)
        }
        return answer
    }
}
