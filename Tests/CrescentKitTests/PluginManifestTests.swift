import CrescentKit
import Foundation
import Testing

/// plugin.toml checked before anything runs: each field wrong in turn names the manifest and the
/// field; discovery refuses a service provided twice and a requirement nobody provides.
@Suite struct PluginManifestTests {
    static let valid: [String: String] = [
        "name": "\"places\"",
        "version": "\"1.0.0\"",
        "crescent": "\">=0.1.0, <1.0.0\"",
        "description": "\"Saved places.\"",
        "kind": "\"lua\"",
        "main": "\"main.lua\"",
        "services": "[\"places\"]",
        "requires": "[\"location\"]",
    ]

    /// A folder holding a plugin whose manifest has `fields` (and `main.lua`).
    final class Folder {
        let path: String

        init(_ fields: [String: String], extra: String = "") throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("plugin-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let text = fields.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: "\n") + "\n" + extra
            try text.write(toFile: path + "/plugin.toml", atomically: true, encoding: .utf8)
            try "service('places', 'x')\n".write(toFile: path + "/main.lua", atomically: true, encoding: .utf8)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    func problem(_ fields: [String: String], extra: String = "", host: String = "0.1.0") throws -> String? {
        let folder = try Folder(fields, extra: extra)
        do throws(PluginProblem) {
            _ = try PluginManifest.load(folder: folder.path, hostVersion: host)
            return nil
        } catch {
            #expect(error.message.hasPrefix(folder.path + "/plugin.toml"), "\(error.message)")
            return error.message
        }
    }

    @Test func aValidManifestLoads() throws {
        let folder = try Folder(Self.valid, extra: "[settings.radius]\ntype = \"number\"\ndefault = 150\ndoc = \"Metres.\"\n")
        let manifest = try PluginManifest.load(folder: folder.path, hostVersion: "0.1.0")
        #expect(manifest.name == "places")
        #expect(manifest.kind == .lua(main: "main.lua"))
        #expect(manifest.services == ["places"] && manifest.requires == ["location"])
        #expect(manifest.settings.map(\.key) == ["radius"])
    }

    @Test(arguments: [
        ("name", "\"Places\"", "field 'name' must match [a-z][a-z0-9_]*"),
        ("name", "3", "field 'name' must be a string, got number"),
        ("version", "\"1.0\"", "field 'version' must be a version like 1.0.0"),
        ("crescent", "\">=2.0.0\"", "field 'crescent' the plugin needs crescent >=2.0.0; this is crescent 0.1.0"),
        ("crescent", "\"soon\"", "field 'crescent' 'soon' is not a comparison"),
        ("kind", "\"ruby\"", "field 'kind' must be \"lua\" or \"process\", got \"ruby\""),
        ("main", "\"missing.lua\"", "field 'main' names"),
        ("services", "[]", "field 'services' must name at least one service"),
        ("services", "[\"Bad Name\"]", "field 'services' must hold names"),
        ("requires", "\"location\"", "field 'requires' must be an array of names"),
        ("colour", "\"blue\"", "field 'colour' is not a manifest field"),
    ])
    func eachWrongFieldIsNamed(field: String, value: String, message: String) throws {
        var fields = Self.valid
        fields[field] = value
        let problem = try #require(try problem(fields))
        #expect(problem.contains(message), "\(problem)")
    }

    /// Pre-releases follow Semantic Versioning 2.0.0's precedence (`0.2.0-rc.1 < 0.2.0`,
    /// identifiers compared one by one, numbers as numbers and below words, a shorter list first),
    /// and a host that is a pre-release meets a range only when the range names a pre-release of
    /// the same major.minor.patch (npm's rule). Malformed pre-releases are refused.
    @Test(arguments: [
        ("0.2.0", ">0.2.0-rc.1", true),
        ("0.2.0", "^0.2.0-rc.1", true),
        ("0.2.0", ">=0.2.0-rc.1, <0.2.0", false),
        ("0.2.0-rc.10", ">0.2.0-rc.9", true),
        ("0.2.0-rc.2", ">=0.2.0-rc.1, <0.3.0", true),
        ("0.2.0-rc.1", ">=0.2.0-beta.3", true),
        ("0.2.0-alpha", ">=0.2.0-alpha.1", false),
        ("0.2.0-1", ">=0.2.0-alpha", false),
        ("0.2.0-rc.1", ">=0.1.0", false),
        ("0.2.0-rc.1", "<0.2.0", false),
        ("0.2.0-rc.1", "=0.2.0-rc.1", true),
        ("0.2.0-rc.1+build.5", "=0.2.0-rc.1", true),
        ("0.3.0-beta", ">=0.2.0-rc.1", false),
    ])
    func preReleasesFollowSemverPrecedence(host: String, range: String, accepted: Bool) throws {
        var fields = Self.valid
        fields["crescent"] = "\"\(range)\""
        let problem = try problem(fields, host: host)
        if accepted {
            #expect(problem == nil, "\(host) in \(range): \(problem ?? "")")
        } else {
            #expect(problem?.contains("the plugin needs crescent \(range); this is crescent \(host)") == true, "\(host) in \(range): \(problem ?? "accepted")")
        }
    }

    @Test(arguments: ["1.0.0-", "1.0.0-01", "1.0.0-rc..1", "1.0.0+", "1.0.0-rc_1", "1.0.0-rc.1+"])
    func malformedPreReleasesAreRefused(version: String) throws {
        var fields = Self.valid
        fields["version"] = "\"\(version)\""
        #expect(try problem(fields)?.contains("field 'version' must be a version like 1.0.0") == true, "\(version)")
        fields["version"] = "\"1.0.0\""
        fields["crescent"] = "\">=\(version)\""
        #expect(try problem(fields)?.contains("field 'crescent' '>=\(version)' is not a comparison") == true, "\(version)")
    }

    /// A version is major.minor.patch with an optional pre-release and build; a range is
    /// comparisons separated by commas, blanks allowed around each. The host here is 0.1.0.
    @Test(arguments: [
        ("\"1.0.0-beta.2\"", "\" >= 0.1.0 ,\t< 1.0.0 \"", nil),
        ("\"10.20.30+build\"", "\"^0.1.0\"", nil),
        ("\"1.0.0.1\"", "\">=0.1.0\"", "field 'version' must be a version like 1.0.0"),
        ("\"1..0\"", "\">=0.1.0\"", "field 'version' must be a version like 1.0.0"),
        ("\"1.0.x\"", "\">=0.1.0\"", "field 'version' must be a version like 1.0.0"),
        ("\"99999999999999999999.0.0\"", "\">=0.1.0\"", "field 'version' must be a version like 1.0.0"),
        ("\"1.0.0\"", "\">=0.1, <1.0.0\"", "field 'crescent' '>=0.1' is not a comparison"),
        ("\"1.0.0\"", "\"^0.2.0\"", "this is crescent 0.1.0"),
        ("\"1.0.0\"", "\"0.1.0\"", nil),
        ("\"1.0.0\"", "\"=0.1.0\"", nil),
        ("\"1.0.0\"", "\",<=0.1.0,, >0.0.9,\"", nil),
        ("\"1.0.0\"", "\">0.1.0\"", "this is crescent 0.1.0"),
        ("\"1.0.0\"", "\"<0.1.0\"", "this is crescent 0.1.0"),
        ("\"1.0.0\"", "\">=0.1.0, <=0.0.5\"", "this is crescent 0.1.0"),
        ("\"1.0.0\"", "\"\"", "field 'crescent' the range is empty"),
        ("\"1.0.0\"", "\" , \"", "field 'crescent' '' is not a comparison"),
        ("\"1.0.0\"", "\">=0.1.0, ~1.0.0\"", "field 'crescent' '~1.0.0' is not a comparison"),
    ] as [(String, String, String?)])
    func versionsAndRangesAreReadAsWritten(version: String, range: String, message: String?) throws {
        var fields = Self.valid
        fields["version"] = version
        fields["crescent"] = range
        let problem = try problem(fields)
        if let message {
            #expect(problem?.contains(message) == true, "\(problem ?? "no problem")")
        } else {
            #expect(problem == nil, "\(problem ?? "")")
        }
    }

    /// The manifest is read in one go whatever its size, and checked to be UTF-8: all ASCII, with
    /// characters of several bytes, or not UTF-8 at all.
    @Test func manifestsOfAnySizeAreReadAndCheckedAsUTF8() throws {
        var fields = Self.valid
        let long = String(repeating: "Saved places, ", count: 1_000)
        fields["description"] = "\"" + long + "\""
        let ascii = try Folder(fields, extra: "# " + String(repeating: "x", count: 9_000) + "\n")
        #expect(try PluginManifest.load(folder: ascii.path, hostVersion: "0.1.0").description == long)

        fields["description"] = "\"Lieux enregistrés \\u00E9 ß € 😀\""
        let unicode = try Folder(fields)
        #expect(try PluginManifest.load(folder: unicode.path, hostVersion: "0.1.0").description == "Lieux enregistrés é ß € 😀")

        let broken = try Folder(Self.valid)
        let bytes = Array("name = \"places\"\nversion = \"1.0.0\"\n".utf8) + [0x64, 0x20, 0x3D, 0x20, 0x22, 0xC3, 0x28, 0x22, 0x0A]
        try Data(bytes).write(to: URL(fileURLWithPath: broken.path + "/plugin.toml"))
        do throws(PluginProblem) {
            _ = try PluginManifest.load(folder: broken.path, hostVersion: "0.1.0")
            Issue.record("a manifest that is not UTF-8 loaded")
        } catch {
            #expect(error.message == broken.path + "/plugin.toml:3: the file is not valid UTF-8 (save it as UTF-8)", "\(error.message)")
        }
    }

    @Test func missingFieldsAreNamed() throws {
        for field in ["name", "version", "crescent", "kind", "services"] {
            var fields = Self.valid
            fields[field] = nil
            let problem = try #require(try problem(fields))
            #expect(problem.contains("field '\(field)' is missing"), "\(problem)")
        }
        var process = Self.valid
        process["kind"] = "\"process\""
        #expect(try problem(process)?.contains("field 'command' is missing") == true)
        process["command"] = "[]"
        #expect(try problem(process)?.contains("field 'command' must be a non-empty array of strings") == true)
    }

    /// A NUL would cut the word short when the program starts: refused, naming the field and item.
    @Test func aNULInCommandIsRefused() throws {
        var process = Self.valid
        process["kind"] = "\"process\""
        process["command"] = #"["python3\u0000x", "main.py"]"#
        let problem = try #require(try problem(process))
        #expect(problem.contains("field 'command' item 1 holds a NUL character"), "\(problem)")
    }

    @Test func aBadSettingsSchemaIsNamed() throws {
        #expect(try problem(Self.valid, extra: "[settings.radius]\ntype = \"float\"\n")?.contains("field 'settings.radius.type' must be one of") == true)
        #expect(try problem(Self.valid, extra: "[settings.radius]\ntype = \"number\"\ndefault = \"far\"\n")?
            .contains("field 'settings.radius.default' must be number, got string") == true)
    }

    @Test func aServiceProvidedTwiceOrARequirementNobodyProvidesIsRefused() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("plugins-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        func plugin(_ name: String, services: String, requires: String = "[]") throws {
            try PluginFolders.write(in: root, name, services: services, requires: requires)
        }
        try plugin("alpha", services: "[\"shared\"]")
        try plugin("beta", services: "[\"shared\"]")
        try plugin("gamma", services: "[\"location\"]")
        try plugin("delta", services: "[\"delta\"]", requires: "[\"nowhere\"]")
        try plugin("epsilon", services: "[\"epsilon\"]", requires: "[\"shared\", \"location\"]")
        let found = PluginDiscovery.discover(PluginSearch(folders: [root], onlyFolders: true), disabledNames: ["epsilon"],
                                             builtins: ["location", "store"])
        func status(_ name: String) -> String {
            guard let plugin = found.first(where: { $0.folder.hasSuffix("/" + name) }) else { return "missing" }
            return switch plugin.status {
            case .ok: "ok"
            case .disabled: "disabled"
            case .shadowed: "shadowed"
            case .broken(let problem): problem.message
            }
        }
        #expect(status("alpha") == "ok")
        #expect(status("beta").contains("field 'services': service 'shared' is already provided by the plugin in \(root)/alpha"), "\(status("beta"))")
        #expect(status("beta").hasPrefix(root + "/beta/plugin.toml"))
        #expect(status("gamma").contains("service 'location' is already provided by the builtin plugins"), "\(status("gamma"))")
        #expect(status("delta").contains("field 'requires': no plugin provides service 'nowhere'"), "\(status("delta"))")
        #expect(status("epsilon") == "disabled")
    }

    /// A plugin cannot require its own service, and plugins that require each other's services
    /// (two, or round a longer cycle) are refused when the manifests are read, each naming the
    /// cycle: starting one would touch the other while it starts. A plugin that only requires a
    /// plugin on a cycle is not itself on it.
    @Test func aCycleOfRequirementsIsRefusedNamingIt() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("plugins-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try PluginFolders.write(in: root, "selfish", services: "[\"selfish\"]", requires: "[\"selfish\"]")
        try PluginFolders.write(in: root, "alpha", services: "[\"alpha\"]", requires: "[\"beta\"]")
        try PluginFolders.write(in: root, "beta", services: "[\"beta\"]", requires: "[\"alpha\", \"location\"]")
        try PluginFolders.write(in: root, "one", services: "[\"one\"]", requires: "[\"two\"]")
        try PluginFolders.write(in: root, "two", services: "[\"two\"]", requires: "[\"three\"]")
        try PluginFolders.write(in: root, "three", services: "[\"three\"]", requires: "[\"one\"]")
        try PluginFolders.write(in: root, "user", services: "[\"user\"]", requires: "[\"alpha\"]")
        let found = PluginDiscovery.discover(PluginSearch(folders: [root], onlyFolders: true), disabledNames: [],
                                             builtins: ["location"])
        func status(_ name: String) -> String {
            guard let plugin = found.first(where: { $0.folder.hasSuffix("/" + name) }) else { return "missing" }
            if case .broken(let problem) = plugin.status { return problem.message }
            if case .ok = plugin.status { return "ok" }
            return "other"
        }
        #expect(status("selfish") == "\(root)/selfish/plugin.toml: field 'requires' names service 'selfish', which this plugin provides itself: a plugin cannot require its own services (remove it from requires)")
        #expect(status("alpha") == "\(root)/alpha/plugin.toml: field 'requires': plugin 'alpha' requires service 'beta' of plugin 'beta', which requires service 'alpha' of plugin 'alpha': plugins cannot require each other's services in a cycle (remove one of these requirements)")
        #expect(status("beta").hasPrefix("\(root)/beta/plugin.toml: field 'requires': plugin 'beta' requires service 'alpha' of plugin 'alpha', which requires service 'beta' of plugin 'beta'"), "\(status("beta"))")
        #expect(status("two").contains("plugin 'two' requires service 'three' of plugin 'three', which requires service 'one' of plugin 'one', which requires service 'two' of plugin 'two'"), "\(status("two"))")
        #expect(status("one").contains("field 'requires'") && status("three").contains("field 'requires'"))
        #expect(status("user") == "ok")
    }
}
