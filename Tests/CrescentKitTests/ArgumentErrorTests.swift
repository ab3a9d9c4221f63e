import CrescentKit
import Model
import Testing

/// DESIGN.md "Services", bad arguments: a wrong type or a missing argument raises at the call
/// site with the method's signature; a well-typed value the service rejects comes back through
/// the completion as `invalid_argument`.
@Suite struct ArgumentErrorTests {
    /// Runs each line of `calls` as `pcall(function() <call> end)` on line N+1 of test.lua and
    /// returns the error messages.
    private func errors(_ calls: [String]) throws -> [String] {
        let test = try TestHost(thermostat: Thermostat())
        var source = "local t = services.thermostat\n"
        for call in calls { source += "print((select(2, pcall(function() \(call) end))))\n" }
        test.run(source)
        return test.lines
    }

    @Test func wrongTypesNameTheSignatureAndThePosition() throws {
        #expect(try errors([
            "t:set('hot', print)",
            "t:set({}, print)",
            "t:alarm(1.5)",
            "t:alarm('x')",
            "t:rename(42)",
            "t:locate({ lat = 1, lon = 2 }, 5, print)",
            "t:echo(io.stdout, print)",
            "t:echo(coroutine.create(print), print)",
            "t.readings:record('x', print)",
        ]) == [
            "test.lua:2: thermostat:set(degrees, completion): argument #1 must be a number, got string",
            "test.lua:3: thermostat:set(degrees, completion): argument #1 must be a number, got table",
            "test.lua:4: thermostat:alarm(level): argument #1 must be an integer, got number",
            "test.lua:5: thermostat:alarm(level): argument #1 must be an integer, got string",
            "test.lua:6: thermostat:rename(label): argument #1 must be a string, got number",
            "test.lua:7: thermostat:locate(place[, options], completion): argument #2 must be a table, got number",
            "test.lua:8: thermostat:echo(value, completion): argument #1 must be a value, got a FILE*",
            "test.lua:9: thermostat:echo(value, completion): argument #1 must be a value, got a thread",
            "test.lua:10: readings:record(value, completion): argument #1 must be a number, got string",
        ])
    }

    /// A table is well typed whatever it holds: what cannot leave Lua inside it (a function, a
    /// cycle, mixed keys) is the call's invalid_argument, named from the argument.
    @Test func badContentsOfAWellTypedTableComeBackThroughTheCompletion() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            local function done(result, err) print(result, err.code, err.message, err.method) end
            local loop = {}
            loop.again = loop
            print((pcall(t.echo, t, { f = print }, done)))
            t:echo({ 1, 2, { deep = loop } }, done)
            t:locate({ lat = 1, lon = 2, note = { 1, x = 1 } }, done)
            t:locate({ lat = 1, lon = 2 }, { name = print }, done)
            print((select(2, pcall(t.locate, t, { lat = print, lon = 2 }, done))))
            """)
        test.settle()
        #expect(test.lines == [
            "true",
            "thermostat:locate(place[, options], completion): argument #1 must be a location {lat=, lon=}, got a function at .lat",
            "nil\tinvalid_argument\tvalue.f is a function: values given to a service hold only strings, numbers, booleans and tables\techo",
            "nil\tinvalid_argument\tvalue[3].deep.again is a table that contains itself: values given to a service cannot have cycles\techo",
            "nil\tinvalid_argument\tlocation.note mixes array items and named fields: a table is either an array {a, b, ...} or an object {name = value, ...}\tlocate",
            "nil\tinvalid_argument\toptions.name is a function: values given to a service hold only strings, numbers, booleans and tables\tlocate",
        ], "\(test.stderr)")
        #expect(test.exitStatus == 0)
    }

    /// Third permissions attack, R: a table nested past the binding's depth named a path of
    /// 375 characters (`value[1][1][1]...`); a path keeps its first and last four steps and says
    /// how many it left out.
    @Test func aTooDeepTableNamesAShortPath() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local deep = {}
            local inner = deep
            for _ = 1, 150 do inner[1] = {} inner = inner[1] end
            t:echo(deep, function(result, err) print(err.message) end)
            """)
        test.settle()
        #expect(test.lines.count == 1, "\(test.lines) \(test.stderr)")
        let message = test.lines.first ?? ""
        #expect(message.hasPrefix("value[1][1][1][1]…(") && message.contains(" more)…[1][1][1][1] is nested too deeply (more than"), "\(message)")
        #expect(message.count < 120, "\(message.count): \(message)")
    }

    @Test func aRecordMissingAFieldShowsTheRecordShape() throws {
        #expect(try errors([
            "t:locate({ lat = 1 }, print)",
            "t:locate({ lat = 'north', lon = 2 }, print)",
            "t:locate('Paris', print)",
        ]) == [
            "test.lua:2: thermostat:locate(place[, options], completion): argument #1 must be a location {lat=, lon=}, got table without lon (it has lat)",
            "test.lua:3: thermostat:locate(place[, options], completion): argument #1 must be a location {lat=, lon=}, got table whose lat is a string",
            "test.lua:4: thermostat:locate(place[, options], completion): argument #1 must be a location {lat=, lon=}, got string",
        ])
    }

    @Test func missingAndExtraArguments() throws {
        #expect(try errors([
            "t:set(print)",
            "t:set(nil, print)",
            "t:alarm()",
            "t:set(1, 2, print)",
            "t:alarm(1, 2)",
        ]) == [
            "test.lua:2: thermostat:set(degrees, completion): argument #1 (degrees) is missing: it must be a number",
            "test.lua:3: thermostat:set(degrees, completion): argument #1 (degrees) is missing: it must be a number",
            "test.lua:4: thermostat:alarm(level): argument #1 (level) is missing: it must be an integer",
            "test.lua:5: thermostat:set(degrees, completion): argument #2 is one too many (it takes degrees and a completion)",
            "test.lua:6: thermostat:alarm(level): argument #2 is one too many (it takes level)",
        ])
    }

    @Test func aNonFunctionWhereTheCompletionGoes() throws {
        #expect(try errors([
            "t:set(1, 2)",
            "t:set(1, {})",
            "t:locate({ lat = 1, lon = 2 }, {}, 'done')",
        ]) == [
            "test.lua:2: thermostat:set(degrees, completion): argument #2 (completion) must be a function(result, err), got number",
            "test.lua:3: thermostat:set(degrees, completion): argument #2 (completion) must be a function(result, err), got table",
            "test.lua:4: thermostat:locate(place[, options], completion): argument #3 (completion) must be a function(result, err), got string",
        ])
    }

    @Test func callingWithADotInsteadOfAColon() throws {
        #expect(try errors([
            "t.set(1, print)",
            "t.rename('x')",
            "t.set()",
            "t.readings.record(t, 1, print)",
        ]) == [
            "test.lua:2: thermostat:set(degrees, completion): call it with ':' on the object (got number as self)",
            "test.lua:3: thermostat:rename(label): call it with ':' on the object (got string as self)",
            "test.lua:4: thermostat:set(degrees, completion): call it with ':' on the object (got no value as self)",
            "test.lua:5: readings:record(value, completion): call it with ':' on the object (got thermostat as self)",
        ])
    }

    @Test func optionalArgumentsMayBeLeftOutOrNil() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            t:locate({ lat = 1, lon = 2 }, function(p) print(p.name) end)
            t:locate({ lat = 1, lon = 2 }, nil, function(p) print(p.name) end)
            t:locate({ lat = 1, lon = 2, extra = "fields are fine" }, { name = "n" }, function(p) print(p.name) end)
            """)
        test.settle()
        #expect(test.lines == ["somewhere", "somewhere", "n"])
    }

    @Test func aWellTypedValueTheServiceRejectsComesBackThroughTheCompletion() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local ok, request = pcall(function()
              return services.thermostat:set(300, function(result, err) print(result, err.code, err.message) end)
            end)
            print(ok, request)
            """)
        test.settle()
        #expect(test.lines == [
            "true\tRequest(thermostat.set, pending)",
            "nil\tinvalid_argument\ttemperature 300.0 is outside [-50, 100]",
        ])
        #expect(test.exitStatus == 0)
    }

    @Test func anActionRaisesTheServiceErrorAtTheCallSite() throws {
        let thermostat = Thermostat()
        let test = try TestHost(thermostat: thermostat)
        test.run("""
            local t = services.thermostat
            local ok, err = pcall(function() t:rename("") end)
            print(ok, type(err), err.code, err.message, err.service, err.method)
            print(tostring(err))
            print(t.label, pcall(t.rename, t, "den"), t.label)
            """)
        #expect(test.lines == [
            "false\ttable\tinvalid_argument\tthe label must not be empty\tthermostat\trename",
            "test.lua:2: thermostat.rename: invalid_argument: the label must not be empty",
            "nil\ttrue\tden",
        ])
        #expect(thermostat.label.value == "den")
    }

    @Test func anUncaughtArgumentErrorEndsTheMainChunkWithStatus1() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            print("before")
            services.thermostat:set("hot", print)
            print("after")
            """)
        #expect(test.lines == ["before"])
        #expect(test.stderr.contains("test.lua:2: thermostat:set(degrees, completion): argument #1 must be a number, got string"))
        #expect(test.stderr.contains("stack traceback:"))
        #expect(test.exitStatus == 1)
    }
}
