import Foundation
import Testing

/// A plugin requiring `store` has collections of its own; the scripts' collections are the
/// `collections` permission, granted like the others; the shipped `places` plugin keeps the
/// places an earlier release saved in the scripts' collection.
@Suite struct PluginStoreTests {
    static let keeper = """
        local store = services.store
        local notes = store:collection("notes")
        local s = service("keeper", "Keeps notes.")
        s:method("put", { "text: string" }, "integer", "Adds a note to its own collection.", function(text)
          local _, err = notes:add({ text = text })
          if err then error(err) end
          return notes.count
        end)
        s:method("name", {}, "string", "Its collection's name in the store.", function() return notes.name end)
        s:method("scripts", { "name: string" }, "string", "Reads a scripts' collection.", function(name)
          local ok, collection = pcall(function() return store:scriptCollection(name) end)
          if not ok then return "refused " .. tostring(type(collection) == "table" and collection.message or collection) end
          local texts = {}
          for _, record in ipairs(collection.items) do texts[#texts + 1] = record.text end
          return table.concat(texts, ",")
        end)
        """

    func keeper(_ permissions: String = "") throws -> Sandbox {
        let sandbox = try luaPluginSandbox("keeper", main: Self.keeper, requires: "[\"store\"]")
        if !permissions.isEmpty {
            let manifest = try String(contentsOfFile: sandbox.path + "/plugins/keeper/plugin.toml", encoding: .utf8)
            try sandbox.write("plugins/keeper/plugin.toml", manifest + "\n[permissions]\n" + permissions + "\n")
        }
        return sandbox
    }

    /// Its `store:collection("notes")` was the scripts' `notes`: a plugin asking nothing read,
    /// wrote and could clear them. Now its own, which no script can name.
    @Test func aPluginsCollectionsAreItsOwnWithoutAGrant() async throws {
        let sandbox = try keeper()
        let result = try await inHome(["--data-dir", ":memory:", "-e", """
            local notes = services.store:collection("notes")
            task(function()
              notes:add({ text = "mine" })
              local one, two = services.keeper:put("theirs"), services.keeper:put("theirs again")
              print("put", one, two)
              print("scripts", notes.count, notes.items[1].text)
              print("name", (services.keeper:name()))
              print("reach", (services.keeper:scripts("notes")))
              local ok, err = pcall(function() return services.store:collection("plugin:keeper:notes") end)
              print("named", ok, type(err) == "table" and err.message or tostring(err))
            end)
            """], sandbox)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.contains("put\t1\t2"), "\(result)")
        #expect(lines.contains("scripts\t1\tmine"), "the scripts' collection is untouched: \(result)")
        #expect(lines.contains("name\tplugin:keeper:notes"), "\(result)")
        #expect(lines.contains { $0.hasPrefix("reach\trefused") && $0.contains("plugin 'keeper' may not use the scripts' collection 'notes': not granted (add it to [permissions] collections in its plugin.toml, then run crescent plugins allow keeper)") }, "\(result)")
        #expect(lines.contains { $0.hasPrefix("named\tfalse") && $0.contains("collection names starting with 'plugin:' are kept for plugins' own collections") }, "\(result)")
    }

    /// A plugin of the same name from another folder (a cloned project's `plugins/keeper`
    /// shadowing the one you use) read and replaced the first one's collections: they were kept
    /// under the name alone. Now under the data folder's name, as its files are.
    @Test func aPluginOfTheSameNameFromAnotherFolderHasCollectionsOfItsOwn() async throws {
        let sandbox = try keeper()
        try FileManager.default.createDirectory(atPath: sandbox.path + "/clone", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: sandbox.path + "/plugins", toPath: sandbox.path + "/clone/plugins")
        let script = #"task(function() print("put", (services.keeper:put("x"))) print("name", (services.keeper:name())) end)"#
        let first = try await inHome(["-e", script], sandbox)
        let again = try await inHome(["-e", script], sandbox)
        let clone = try await inHome(["-e", script], sandbox, directory: sandbox.path + "/clone")
        for result in [first, again, clone] { #expect(result.status == 0, "\(result)") }
        #expect(first.stdoutLines == ["put\t1", "name\tplugin:keeper:notes"], "\(first)")
        #expect(again.stdoutLines == ["put\t2", "name\tplugin:keeper:notes"], "\(again)")
        #expect(clone.stdoutLines.first == "put\t1", "the clone sees none of the first one's notes: \(clone)")
        #expect(clone.stdoutLines.last?.hasPrefix("name\tplugin:keeper-") == true, "\(clone)")
    }

    /// A plugin asking nothing may adopt your scripts' collection named after it without a
    /// grant, and nothing showed it: `plugins` listed `-`, and `plugin check`, `plugins allow`
    /// and the grant question said nothing of it. Each says it now; a plugin whose
    /// `collections` grants that collection shows only the grant.
    @Test func adoptingTheCollectionNamedAfterThePluginIsShown() async throws {
        let sandbox = try keeper()
        let line = "once: may copy your scripts' store collection 'keeper' into its own (store:adopt, which needs no grant for the "
            + "collection named after the plugin; from another folder than the first with a plugin 'keeper' it needs collections = [\"keeper\"])"
        let check = try await inHome(["plugin", "check", "plugins/keeper"], sandbox)
        #expect(check.status == 0 && check.stdout.contains(line), "\(check)")
        let allowed = try await inHome(["plugins", "allow", "keeper"], sandbox)
        #expect(allowed.status == 0 && allowed.stdout.contains(line), "\(allowed)")
        let listed = try await inHome(["plugins"], sandbox)
        #expect(listed.stdoutLines.contains { $0.hasPrefix("keeper") && $0.contains("may adopt your store collection keeper once") }, "\(listed)")
        let granted = try keeper("collections = [\"keeper\"]")
        let grantedCheck = try await inHome(["plugin", "check", "plugins/keeper"], granted)
        #expect(grantedCheck.stdout.contains("collections keeper: may read") && !grantedCheck.stdout.contains("once: may copy"), "\(grantedCheck)")
    }

    /// Asking for scripts' collections is a permission: shown by `plugin check`, `plugins` and
    /// `plugins allow`, refused until granted, then exactly the collections granted.
    @Test func theScriptsCollectionsAreAGrant() async throws {
        let sandbox = try keeper("collections = [\"groceries\"]")
        let script = """
            local groceries = services.store:collection("groceries")
            task(function()
              if groceries.count == 0 then groceries:add({ text = "milk" }) end
              local ok, err = pcall(function() return services.keeper:scripts("groceries") end)
              print(ok, type(err) == "table" and err.message or err)
              if ok then print("other", services.keeper:scripts("secrets")) end
            end)
            """
        let refused = try await inHome(["-e", script], sandbox)
        #expect(refused.stdout.contains("plugin 'keeper' asks for permissions not granted (collections groceries)"), "\(refused)")
        let check = try await inHome(["plugin", "check", "plugins/keeper"], sandbox)
        #expect(check.stdout.contains("collections groceries: may read, change and clear your scripts' store collection 'groceries'"), "\(check)")
        #expect(check.stdout.contains("always: keeps store collections of its own (plugin:keeper:NAME), apart from your scripts' and other plugins'"), "\(check)")
        let listed = try await inHome(["plugins"], sandbox)
        #expect(listed.stdoutLines.contains { $0.hasPrefix("keeper") && $0.contains("collections groceries") && $0.contains("not granted") }, "\(listed)")
        let allowed = try await inHome(["plugins", "allow", "keeper"], sandbox)
        #expect(allowed.status == 0 && allowed.stdout.contains("collections groceries: may read"), "\(allowed)")
        let grants = try String(contentsOfFile: sandbox.path + "/.local/share/crescent/plugin-grants.toml", encoding: .utf8)
        #expect(grants.contains("collections = [\"groceries\"]"), "\(grants)")
        let granted = try await inHome(["-e", script], sandbox)
        #expect(granted.stdoutLines.first == "true\tmilk", "\(granted)")
        #expect(granted.stdoutLines.contains { $0.hasPrefix("other\trefused plugin 'keeper' may not use the scripts' collection 'secrets'") }, "\(granted)")
        // An update asking for every collection asks again.
        try sandbox.write("plugins/keeper/plugin.toml", try String(contentsOfFile: sandbox.path + "/plugins/keeper/plugin.toml", encoding: .utf8)
            .replacingOccurrences(of: "collections = [\"groceries\"]", with: "collections = [\"*\"]"))
        let more = try await inHome(["-e", script], sandbox)
        #expect(more.stdout.contains("asks for more than was granted (collections *)"), "\(more)")
    }

    @Test(arguments: [
        ("collections = [\"plugin:other:notes\"]", "field 'permissions.collections' must name a collection of your scripts (plugin: names are plugins' own)"),
        ("collections = [\"\"]", "field 'permissions.collections' must be a store collection's name (1 to 200 bytes, no NUL) or *"),
    ])
    func aBadCollectionsEntryIsRefused(permissions: String, message: String) async throws {
        let sandbox = try keeper(permissions)
        let result = try await inHome(["plugin", "check", "plugins/keeper"], sandbox)
        #expect(result.status == 1 && result.stdout.contains("plugins/keeper/plugin.toml: " + message), "\(result)")
    }

    /// `collections` is reached through a Lua plugin's `services.store`: asked by a plugin that
    /// does not require `store`, its grant would be a question asked for nothing.
    @Test func collectionsWithoutRequiringStoreIsRefused() async throws {
        let sandbox = try luaPluginSandbox("keeper", main: "service('keeper', 'k')")
        let manifest = try String(contentsOfFile: sandbox.path + "/plugins/keeper/plugin.toml", encoding: .utf8)
        try sandbox.write("plugins/keeper/plugin.toml", manifest + "\n[permissions]\ncollections = [\"*\"]\n")
        let result = try await inHome(["plugin", "check", "plugins/keeper"], sandbox)
        #expect(result.status == 1 && result.stdout.contains("plugins/keeper/plugin.toml: field 'permissions.collections' needs \"store\" in requires"), "\(result)")
    }

    /// The places an earlier release kept in the scripts' collection `places` (written here as
    /// it wrote them: a script's collection of that name in the store file) are the plugin's
    /// once it starts, copied once: nothing lost, nothing doubled, and its new places go to its
    /// own collection.
    @Test func placesKeepsThePlacesAnEarlierReleaseSaved() async throws {
        let sandbox = try Sandbox()
        let data = sandbox.path + "/data"
        try await Self.placesMigration(["--data-dir", data])
        let counts = try await run("/usr/bin/sqlite3", [data + "/store.sqlite", "SELECT collection, count(*) FROM records GROUP BY collection ORDER BY collection"])
        #expect(counts.contains("places|2") && counts.contains("plugin:places:places|3"), "\(counts)")
    }

    /// Stores places as an earlier release did, then runs the shipped places plugin twice with
    /// `arguments` and `environment` (the store's place): it lists them, adds one to its own
    /// collection, and the scripts' collection keeps its two.
    static func placesMigration(_ arguments: [String], environment: [String: String?] = [:]) async throws {
        let root = ShippedPluginTests.root
        let old = try await crescent(arguments + ["-e", """
            task(function()
              print(services.store:collection("places"):add({ { name = "home", lat = 48.85, lon = 2.35 }, { name = "work", lat = 48.86, lon = 2.34 } })[2].id)
            end)
            """], directory: root, environment: environment)
        #expect(old.status == 0, "\(old)")
        let script = """
            task(function()
              local list = services.places:list()
              local names = {}
              for _, place in ipairs(list) do names[#names + 1] = place.name end
              print("places", table.concat(names, ","))
              if #list == 2 then services.places:add("cafe", { lat = 48.87, lon = 2.33 }) end
              print("scripts", services.store:collection("places").count)
            end)
            """
        let first = try await crescent(arguments + ["-e", script], directory: root, environment: environment, timeLimit: 60)
        #expect(first.stdoutLines == ["places\thome,work", "scripts\t2"], "\(first)")
        let second = try await crescent(arguments + ["-e", script], directory: root, environment: environment, timeLimit: 60)
        #expect(second.stdoutLines == ["places\thome,work,cafe", "scripts\t2"], "\(second)")
    }

    /// `version = "01.0.0"` was taken: Semantic Versioning forbids leading zeros.
    @Test(arguments: ["01.0.0", "1.00.0", "1.0.07"])
    func aVersionWithALeadingZeroIsRefused(version: String) async throws {
        let sandbox = try luaPluginSandbox("keeper", main: Self.keeper)
        let manifest = try String(contentsOfFile: sandbox.path + "/plugins/keeper/plugin.toml", encoding: .utf8)
        try sandbox.write("plugins/keeper/plugin.toml", manifest.replacingOccurrences(of: "version = \"1.0.0\"", with: "version = \"\(version)\""))
        let result = try await inHome(["plugin", "check", "plugins/keeper"], sandbox)
        #expect(result.status == 1 && result.stdout.contains("field 'version' must be a version like 1.0.0 (Semantic Versioning: MAJOR.MINOR.PATCH, numbers without leading zeros), got \"\(version)\""), "\(result)")
    }

    /// Runs `program` with `arguments` and answers its stdout.
    func run(_ program: String, _ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self)
    }
}
