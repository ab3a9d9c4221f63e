import CrescentKit
import Foundation
import Model
import Testing

/// `crescent stubs`: the annotation files agree with the declarations both ways, every file is
/// valid Lua, and luacheck runs clean over the shipped scripts and specs with the declared globals.
@Suite struct StubWriterTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func entries() throws -> [ServiceEntry] {
        try ServiceFactory.entries(plugins: [.standard, ThermostatPlugin()], options: HostOptions())
    }

    static func file(_ name: String, _ files: [StubWriter.File]) -> String {
        files.first { $0.name == name }?.text ?? ""
    }

    /// The lines of `text` from the line `---@class <name>...` to the next `---@class`.
    static func section(of className: String, in text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0 == "---@class \(className): crescent.Object" }) else { return [] }
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex { $0.hasPrefix("---@class ") } ?? lines.endIndex
        return Array(lines[start..<end])
    }

    @Test func everyServiceMemberIsInTheStubsAndNothingElse() throws {
        let entries = try Self.entries()
        let services = Self.file("services.lua", StubWriter.files(for: entries))
        let classes = Set(services.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("---@class crescent.service.") else { return nil }
            return String(line.dropFirst("---@class crescent.service.".count).prefix { $0 != ":" })
        })
        #expect(classes == Set(entries.map(\.name)))
        for entry in entries {
            let interface = entry.interface
            let lines = Self.section(of: "crescent.service.\(interface.name)", in: services)
            let fields = Set(lines.compactMap { line -> String? in
                guard line.hasPrefix("---@field ") else { return nil }
                return String(line.dropFirst(10).prefix { $0 != " " })
            })
            #expect(fields == Set(interface.properties.map(\.name)), "\(interface.name)")
            let prefix = "function service_\(interface.name):"
            let methods = Set(lines.compactMap { line -> String? in
                guard line.hasPrefix(prefix) else { return nil }
                return String(line.dropFirst(prefix.count).prefix { $0 != "(" })
            })
            let expected = Set(interface.methods.map(\.name) + (interface.events.isEmpty ? [] : ["on"]))
            #expect(methods == expected, "\(interface.name)")
            let alias = lines.first { $0.hasPrefix("---@alias crescent.service.\(interface.name).event ") }
            let events = alias.map { line in
                Set(line.split(separator: " ").last?.split(separator: "|").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? [])
            } ?? []
            #expect(events == Set(interface.events.map(\.name)), "\(interface.name)")
            for event in interface.events {
                #expect(lines.contains { $0.contains("event: \"\(event.name)\", handler: fun(payload:") }, "\(interface.name).\(event.name)")
            }
            for method in interface.methods where method.hasCompletion {
                #expect(lines.contains { $0.hasPrefix("---@param completion fun(result: ") && $0.contains("err: crescent.Error?)") })
                #expect(lines.contains { $0.hasPrefix("---@overload async fun(self: crescent.service.\(interface.name)") }, "\(method.name)")
            }
        }
    }

    @Test func theTypesOfArgumentsAreTheDeclaredOnes() throws {
        let services = Self.file("services.lua", StubWriter.files(for: try Self.entries()))
        #expect(services.contains("---@param location crescent.location"), "geocoder:reverse takes a location record")
        #expect(services.contains("---@param degrees number"), "thermostat:set takes a number")
        let globals = Self.file("globals.lua", StubWriter.files(for: try Self.entries()))
        #expect(globals.contains("---@class crescent.location"))
        #expect(globals.contains("---@field lat number"))
    }

    /// A collection is a class of its own, so `local todo = services.store:collection("todo")`
    /// completes `todo:add`, and results named in words are typed: the awaited `search` gives
    /// placemarks, `find` records, `remove` a count, `didChange` a change set.
    @Test func aCollectionAndTheResultsPeopleUseMostAreTyped() throws {
        let services = Self.file("services.lua", StubWriter.files(for: try Self.entries()))
        let collection = Self.section(of: "crescent.collection", in: services)
        for member in ["---@field items crescent.record[]", "---@field count integer", "function object_collection:add(",
                       "function object_collection:find(", "function object_collection:page(",
                       "function object_collection:update(", "function object_collection:remove(",
                       "---@alias crescent.collection.event \"didChange\""] {
            #expect(collection.contains { $0.hasPrefix(member) }, "\(member)")
        }
        #expect(collection.contains { $0.contains("event: \"didChange\", handler: fun(payload: crescent.change,") })
        #expect(collection.contains { $0.contains("@overload async fun(self: crescent.collection, query: table, options?: table): crescent.record[]?, crescent.Error?") })
        #expect(collection.contains { $0.contains("@overload async fun(self: crescent.collection, ids: integer|integer[]): integer?,") })
        let store = Self.section(of: "crescent.service.store", in: services)
        #expect(store.contains { $0.hasPrefix("---@return crescent.collection ") })
        let geocoder = Self.section(of: "crescent.service.geocoder", in: services)
        #expect(geocoder.contains { $0.contains("async fun(self: crescent.service.geocoder, query: string") && $0.contains("crescent.placemark[]?,") })
        let globals = Self.file("globals.lua", StubWriter.files(for: try Self.entries()))
        #expect(globals.contains("---@field insertedItems crescent.record[]"))
        // A placemark's fields, as CoreLocation names a place.
        for field in ["---@field locality string ", "---@field subLocality string? ", "---@field timeZone string? ",
                      "---@field countryCode string "] {
            #expect(globals.split(separator: "\n").contains { $0.hasPrefix(field) }, "\(field)")
        }
    }

    /// Newcomer finding 14: the data models list their fields and take no other name (a
    /// record, whose fields are the script's, still does), so LuaLS flags `p.contry` as the host
    /// does; the results people use most are typed: a process's result and child, a file's
    /// stat, its bytes and a folder's names, a watcher, a registered name.
    @Test func theDataModelsListTheirFieldsAndTheCommonResultsAreTyped() throws {
        let files = StubWriter.files(for: try Self.entries())
        let globals = Self.file("globals.lua", files).split(separator: "\n").map(String.init)
        let services = Self.file("services.lua", files)
        func fields(of model: String) -> [String] {
            guard let start = globals.firstIndex(where: { $0.hasPrefix("---@class crescent.\(model)") }) else { return [] }
            return globals[(start + 1)...].prefix { $0.hasPrefix("---@field ") }.map { String($0.dropFirst(10).prefix { $0 != " " }) }
        }
        for model in ["location", "placemark", "response", "feed", "item", "user", "fileStat", "processResult"] {
            #expect(globals.contains("---@class crescent.\(model)"), "\(model) is closed: no { [string]: any }")
        }
        #expect(globals.contains("---@class crescent.record: { [string]: any }"))
        #expect(fields(of: "location") == ["lat", "lon", "time", "provider", "altitude", "speed", "course", "accuracy"])
        #expect(globals.contains("---@field time number? When the fix was taken, seconds since the epoch (UTC)."),
                "a location table a script passes has only lat and lon")
        #expect(fields(of: "response") == ["status", "headers", "body", "url", "json"], "response:json() is typed")
        #expect(fields(of: "feed") == ["url", "title", "interval", "lastChecked", "lastError", "itemCount"])
        #expect(fields(of: "item") == ["id", "title", "link", "published", "summary", "feed", "feedTitle"])
        #expect(fields(of: "user") == ["name", "since"])
        #expect(fields(of: "fileStat") == ["path", "kind", "size", "modified", "mode"])
        #expect(fields(of: "processResult") == ["status", "signal", "stdout", "stderr", "truncated", "timedOut"])
        for typed in ["async fun(self: crescent.service.process, argv: string[]|string, options?: table): crescent.processResult?,",
                      "---@return crescent.childProcess # a childProcess",
                      "---@return crescent.fileWatcher # a fileWatcher",
                      "async fun(self: crescent.service.files, path: string): crescent.fileStat?,",
                      "async fun(self: crescent.service.files, path: string): string?,",
                      "async fun(self: crescent.service.files, path: string, glob?: string): string[]?,",
                      "async fun(self: crescent.service.session, name: string, password: string): string?,",
                      "async fun(self: crescent.service.session, name: string, password: string): crescent.user?,",
                      "---@class crescent.childProcess: crescent.Object", "---@field pid integer"] {
            #expect(services.contains(typed), "\(typed)")
        }
    }

    @Test func everyDeclaredGlobalIsStubbedAndNoOther() throws {
        let globals = Self.file("globals.lua", StubWriter.files(for: try Self.entries()))
        var defined: Set<String> = []
        let nameCharacters: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
        for line in globals.split(separator: "\n") {
            if line.hasPrefix("function ") {
                let rest = line.dropFirst(9)
                let name = rest.prefix(while: nameCharacters)
                // `function Timer:cancel()` is a method of a class, not a global.
                if rest.dropFirst(name.count).first != ":" { defined.insert(String(name)) }
            } else if let first = line.first, first.isLetter, let equals = line.firstIndex(of: "=") {
                let name = line[..<equals].trimmingCharacters(in: .whitespaces)
                if name.allSatisfy(nameCharacters) { defined.insert(name) }
            }
        }
        #expect(defined == Set(StubWriter.documentedNames), "\(defined.symmetricDifference(Set(StubWriter.documentedNames)))")
        #expect(!StubWriter.globalNames.contains { $0.contains(".") })
    }

    @Test func everyStubFileIsValidLua() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-stubs-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for file in StubWriter.files(for: try Self.entries()) {
            let path = folder.appendingPathComponent(file.name).path
            try file.text.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try Self.runTool("/usr/bin/luac5.4", ["-p", path])
            #expect(result.status == 0, "\(file.name): \(result.output)")
        }
        let luarc = StubWriter.luarc(library: "types")
        let json = try JSONSerialization.jsonObject(with: Data(luarc.utf8)) as? [String: Any]
        #expect(json?["runtime.version"] as? String == "Lua 5.4")
        #expect(json?["workspace.library"] as? [String] == ["types"])
    }

    @Test func luacheckIsCleanOverTheScriptsSpecsAndPluginsWithTheDeclaredGlobals() throws {
        // Methods that do not use `self` (loadView building a view) are normal in controllers.
        let common = ["--no-color", "--codes", "--std", "lua54", "--no-max-line-length", "--ignore", "212/self"]
        let scripts = try Self.runTool("/usr/bin/luacheck", common + ["--read-globals"] + StubWriter.globalNames + ["--", "scripts"])
        #expect(scripts.status == 0, "\(scripts.output)")
        // assert's fields (assert.equals…) are the test API's; luacheck knows only Lua's assert.
        let specs = try Self.runTool("/usr/bin/luacheck", common + ["--ignore", "143", "--read-globals"] + StubWriter.globalNames
                                     + StubWriter.testGlobalNames + ["--", "spec"])
        #expect(specs.status == 0, "\(specs.output)")
        // A Lua plugin's VM has the script's globals but app, view and controller, plus its own API.
        let pluginGlobals = StubWriter.globalNames.filter { !["app", "view", "controller"].contains($0) }
            + ["service", "service_error", "settings"]
        let plugins = try Self.runTool("/usr/bin/luacheck", common + ["--read-globals"] + pluginGlobals + ["--", "plugins"])
        #expect(plugins.status == 0, "\(plugins.output)")
    }

    /// Runs `tool ARGUMENTS` in the package root; its status and combined output.
    static func runTool(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

