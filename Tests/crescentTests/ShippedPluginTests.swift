import Foundation
import Testing

/// The plugins shipped in `plugins/`, through the binary run from the repository (whose
/// `plugins/` folder holds them).
@Suite struct ShippedPluginTests {
    static let root = CrescentProcess.packageRoot.path

    @Test func placesSavesPlacesAndTellsWhenTheLocationEntersOne() async throws {
        let result = try await crescent(["--data-dir", ":memory:", "--location", "fixed:48.8566,2.3522", "-e", """
            local places = services.places
            local delegate = {}
            function delegate:didEnter(payload) print("delegate", payload.place.name) end
            places:addObserver(delegate)
            observe(places, "near", function(near) print("near", near and near.name) end, { initial = false })
            places:on("didEnter", function(payload)
              print("entered", payload.place.name)
              task(function()
                local list = places:list()
                print("list", #list, list[1].name)
                print("remove", places:remove("hotel"))
                local _, err = places:remove("hotel")
                print("again", err.code)
                services.location:stop()
              end)
            end, { once = true })
            task(function()
              local saved, err = places:add("hotel", { lat = 48.8567, lon = 2.3523 })
              print("add", saved and saved.name, err)
              local _, bad = places:add("")
              print("empty", bad.code)
              services.location:start()
            end)
            """], directory: Self.root, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.prefix(2) == ["add\thotel\tnil", "empty\tinvalid_argument"], "\(result)")
        #expect(lines.contains("near\thotel"), "\(result)")
        #expect(lines.contains("entered\thotel") && lines.contains("delegate\thotel"), "\(result)")
        #expect(lines.contains("list\t1\thotel"), "\(result)")
        #expect(lines.contains("remove\ttrue\tnil") && lines.contains("again\tnot_found"), "\(result)")
    }

    /// The system plugin asks to read /proc: it runs once granted (in a HOME of the test's own).
    @Test func systemReadsProcAndListsProcesses() async throws {
        let home = try Sandbox()
        let refused = try await inHome(["-e", "local ok, err = pcall(function() return services.system.uptime end) print(ok, type(err) == 'table' and err.message or err)"],
                                       home, directory: Self.root)
        #expect(refused.stdout.contains("plugin 'system' asks for permissions not granted (read /proc)"), "\(refused)")
        let allowed = try await inHome(["plugins", "allow", "system"], home, directory: Self.root)
        #expect(allowed.status == 0 && allowed.stdout.contains("read /proc: may read the files in /proc"), "\(allowed)")
        let result = try await inHome(["-e", """
            local system = services.system
            print(type(system.load.one), system.memory.total > 0, system.uptime > 0)
            task(function()
              local list = system:processes("python")
              print(#list > 0, type(list[1].pid), list[1].command:find("system.py") ~= nil or #list > 1)
            end)
            """], home, directory: Self.root, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["number\ttrue\ttrue", "true\tnumber\ttrue"], "\(result)")
    }

    @Test func pluginsListsTheShippedPlugins() async throws {
        let result = try await crescent(["plugins"], directory: Self.root)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.first?.hasPrefix("NAME") == true, "\(result)")
        #expect(lines.contains { $0.hasPrefix("standard") && $0.contains("builtin") && $0.contains("location") }, "\(result)")
        #expect(lines.contains { $0.hasPrefix("places") && $0.contains("lua") && $0.contains("plugins/places") && $0.hasSuffix("ok") }, "\(result)")
        #expect(lines.contains { $0.hasPrefix("system") && $0.contains("process") && $0.hasSuffix("ok") }, "\(result)")
    }

    @Test func skeletonsLoadAndWorkWithNoEdits() async throws {
        let sandbox = try Sandbox()
        for (name, kind) in [("hello_lua", "--lua"), ("hello_py", "--process")] {
            let made = try await crescent(["plugin", "new", name, kind], in: sandbox)
            #expect(made.status == 0, "\(made)")
            let checked = try await crescent(["plugin", "check", "plugins/\(name)"], in: sandbox, timeLimit: 60)
            #expect(checked.status == 0, "\(checked)")
            #expect(checked.stdout.contains("hello(name, completion)") && checked.stdout.hasSuffix("ok\n"), "\(checked)")
            let used = try await crescent(["-e", "task(function() print(services.\(name):hello('ada'), services.\(name).count) end)"],
                                          in: sandbox, timeLimit: 60)
            #expect(used.stdout == "hello, ada\t1\n", "\(used)")
        }
        let again = try await crescent(["plugin", "new", "hello_lua", "--lua"], in: sandbox)
        #expect(again.status == 1 && again.stderr.contains("exists already"), "\(again)")
    }

    /// A skeleton named after a builtin service would be skipped by every run: `plugin new`
    /// refuses the name, and `plugin check` reports a folder that provides such a service.
    @Test func aBuiltinServiceNameIsRefusedByNewAndReportedByCheck() async throws {
        let sandbox = try Sandbox()
        let made = try await crescent(["plugin", "new", "location", "--lua"], in: sandbox)
        #expect(made.status == 1 && made.stderr.contains("'location' is the name of a builtin service"), "\(made)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/plugins/location/plugin.toml"), "\(made)")
        let written = try await crescent(["plugin", "new", "mylocation", "--lua"], in: sandbox)
        #expect(written.status == 0, "\(written)")
        let manifest = try String(contentsOfFile: sandbox.path + "/plugins/mylocation/plugin.toml", encoding: .utf8)
        try sandbox.write("plugins/mylocation/plugin.toml", manifest.replacingOccurrences(of: "services = [\"mylocation\"]", with: "services = [\"location\"]"))
        let checked = try await crescent(["plugin", "check", "plugins/mylocation"], in: sandbox, timeLimit: 60)
        #expect(checked.status == 1, "\(checked)")
        #expect(checked.stdout.contains("service 'location' is already provided by the builtin plugins"), "\(checked)")
        #expect(checked.stdout.hasSuffix("not usable\n"), "\(checked)")
    }

    @Test func checkReportsABrokenPlugin() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("broken/plugin.toml", "name = \"broken\"\nversion = \"1\"\n")
        let result = try await crescent(["plugin", "check", "broken"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("broken/plugin.toml: field 'version' must be a version like 1.0.0"), "\(result)")
    }
}
