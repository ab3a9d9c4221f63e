import Foundation
import Testing

/// Issue 39's fifth attack (new27m), D10–D15: the near-name hint through remote code and
/// plugin methods, a misspelled observer method, NaN as Lua writes it, and `--data-dir`
/// swallowing the script. Each test is one finding, run through the `crescent` binary.
@Suite struct HardeningNamedMistakesSeventhBTests {
    /// D10: a misspelled global got its "did you mean" in a script and the REPL, not in
    /// `crescent eval` (nor `attach`, which evaluates the same way).
    @Test func aMisspelledGlobalInRemoteCodeIsNamed() async throws {
        let host = try await ListeningHost(script: RemoteControlTests.groceries, name: "h1", options: ["--data-dir", "data"])
        let result = try await host.crescentCommand(["eval", "h1", "print(servies.x)"])
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("attempt to index a nil value (global 'servies'); did you mean 'services'?"), "\(result)")
        let ended = await host.stop()
        #expect(ended.status == 143 && !ended.killedBySignal, "\(ended)")
    }

    /// D10, D11: inside a Lua plugin's method, a misspelled global and a script's global
    /// (`view`) got neither hint that the plugin's main gets.
    @Test func aPluginMethodsGlobalsAreNamedAsInItsMain() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin(main: """
            local g = service("greet", "says hi")
            g:method("loc", {}, "string", "misspelled", function() return servies.location end)
            g:method("view", {}, "string", "no view", function() return view.text {} end)
            """)
        let result = try await crescent(["-e", """
            task(function()
              print(select(2, services.greet:loc()))
              print(select(2, services.greet:view()))
            end)
            """], in: sandbox)
        #expect(result.stdoutLines.count == 2, "\(result)")
        #expect(result.stdoutLines.first?.hasSuffix("plugins/greet/main.lua:2: attempt to index a nil value (global 'servies'); "
                                                    + "did you mean 'services'?") == true, "\(result)")
        #expect(result.stdoutLines.dropFirst().first?.hasSuffix("plugins/greet/main.lua:3: attempt to index a nil value (global 'view'); "
                                                                + "a plugin has no view, app or controller: it serves its service's "
                                                                + "properties, methods and events, and the script that uses the service "
                                                                + "shows them") == true, "\(result)")
    }

    /// D13: an observer with a right method and a misspelled one (`didfail`) was not warned,
    /// and the failures it meant to hear were skipped in silence.
    @Test func aMisspelledObserverMethodBesideARightOneIsWarned() async throws {
        let result = try await runScript("""
            services.location:addObserver({ didfail = function() end, didUpdateLocations = function() end })
            services.location:addObserver({ didFail = function() end, didUpdateLocations = function() end, helper = function() end })
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("crescent: warning: script.lua:1: location:addObserver(observer): the observer's method 'didfail' is "
                                       + "named after no event of location, so it is never called (events: didUpdateLocations, didFail; "
                                       + "did you mean 'didFail'?)"), "\(result)")
        #expect(!result.stderr.contains("script.lua:2:"), "\(result)")
    }

    /// D14: NaN was written `-nan` (Swift's and C's form) or `null` (JSON's); Lua reads neither.
    @Test func notANumberIsWrittenAsLuaReadsIt() async throws {
        let result = try await runScript("""
            print(select(2, pcall(timer.after, 0/0, function() end)))
            print(inspect({ 1/0, -1/0, 0/0 }))
            local C = controller("C")
            function C:loadView() return view.progress { id = "p", total = 10, value = 1 } end
            function C:viewDidLoad()
              print(select(2, pcall(function() self.view.p:update { value = 0/0 } end)))
              app.exit(0)
            end
            app.push(C)
            """, options: ["--ui", "plain"])
        #expect(result.stdoutLines.count == 3, "\(result)")
        #expect(result.stdoutLines.first?.hasSuffix("bad argument #1 to 'timer.after' (seconds must be a finite number >= 0, got nan (0/0))")
                == true, "\(result)")
        #expect(result.stdoutLines.dropFirst().first == "{ math.huge, -math.huge, 0/0 }", "\(result)")
        #expect(result.stdoutLines.dropFirst(2).first?.contains("view.progress: value nan (0/0) is outside 0 to total (10)") == true,
                "\(result)")
    }

    /// D15: `crescent --data-dir app.lua` took the script's name as the data folder, read the
    /// script from stdin and exited 0 with nothing said.
    @Test func aDataDirThatIsAScriptIsRefused() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app.lua", "print('ran')\n")
        let file = try await crescent(["--data-dir", "app.lua"], in: sandbox, stdin: "")
        #expect(file.status == 2, "\(file)")
        #expect(file.stderr.contains("--data-dir takes a folder, got app.lua, which is a file: give the folder before the script "
                                     + "(crescent --data-dir DIR SCRIPT.lua), or leave --data-dir out to use the default one"), "\(file)")
        let missing = try await crescent(["--data-dir", "other.lua", "app.lua"], in: sandbox, stdin: "")
        #expect(missing.status == 2, "\(missing)")
        #expect(missing.stderr.contains("--data-dir takes a folder, got other.lua, which is a Lua script's name"), "\(missing)")
        // A folder is fine, whatever its name.
        _ = try sandbox.makeFolder("data.lua")
        let folder = try await crescent(["--data-dir", "data.lua", "app.lua"], in: sandbox, stdin: "")
        #expect(folder.status == 0 && folder.stdout == "ran\n", "\(folder)")
    }
}
