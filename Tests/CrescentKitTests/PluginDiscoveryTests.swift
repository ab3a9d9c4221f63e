@testable import CrescentKit
import Foundation
import Model
import Testing

/// Discovery in two steps: a scan of the folders (kept by a memoised search, read once per run)
/// and its resolution for each setup (shadowed, disabled, clashes); a setup reports a broken
/// plugin once.
@Suite struct PluginDiscoveryTests {
    /// Two search folders: `first` holds alpha (good) and broken (a bad kind), `second` another
    /// alpha (shadowed by the first) and beta (requires alpha's service).
    final class Roots {
        let first: String
        let second: String

        init() throws {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("scan-\(UUID().uuidString.prefix(8))").path
            first = base + "/first"
            second = base + "/second"
            try PluginFolders.write(in: first, "alpha", services: "[\"alpha\"]")
            try PluginFolders.write(in: first, "broken", services: "[\"broken\"]", kind: "ruby")
            try PluginFolders.write(in: second, "alpha", services: "[\"alpha\"]")
            try PluginFolders.write(in: second, "beta", services: "[\"beta\"]", requires: "[\"alpha\"]")
        }

        var search: PluginSearch { PluginSearch(folders: [first, second], onlyFolders: true) }

        deinit { try? FileManager.default.removeItem(atPath: (first as NSString).deletingLastPathComponent) }
    }

    /// Each plugin as `folder: status`, in search order.
    static func summary(_ found: [DiscoveredPlugin]) -> [String] {
        found.map { plugin in
            let status = switch plugin.status {
            case .ok: "ok"
            case .disabled: "disabled"
            case .shadowed(_, let folder): "shadowed by \(folder)"
            case .broken(let problem): problem.message
            }
            return "\(plugin.folder): \(status)"
        }
    }

    @Test func pluginsAreFoundInSearchOrderAndALaterNameIsShadowed() throws {
        let roots = try Roots()
        let found = PluginDiscovery.discover(roots.search, disabledNames: [], builtins: ["location"])
        #expect(found.map(\.folder) == [roots.first + "/alpha", roots.first + "/broken", roots.second + "/alpha", roots.second + "/beta"])
        let lines = Self.summary(found)
        #expect(lines.count == 4)
        #expect(lines.contains("\(roots.first)/alpha: ok"), "\(lines)")
        #expect(lines.contains("\(roots.second)/alpha: shadowed by \(roots.first)/alpha"), "\(lines)")
        #expect(lines.contains("\(roots.second)/beta: ok"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("\(roots.first)/broken: \(roots.first)/broken/plugin.toml: field 'kind'") }, "\(lines)")
    }

    @Test func aSetupReportsWhatItFound() throws {
        let roots = try Roots()
        var options = HostOptions()
        options.pluginSearch = roots.search
        options.configPath = roots.first + "/crescent.toml"
        try "[alpha]\n".write(toFile: roots.first + "/crescent.toml", atomically: true, encoding: .utf8)
        let setup = try ServiceFactory.setup(plugins: [], options: options)
        #expect(setup.entries.map(\.name).sorted() == ["alpha", "beta"])
        #expect(setup.notices.count == 1)
        #expect(setup.notices.first?.hasPrefix("error: \(roots.first)/broken/plugin.toml: field 'kind'") == true, "\(setup.notices)")
        #expect(setup.notices.first?.hasSuffix("(plugin skipped)") == true, "\(setup.notices)")
    }

    @Test func aMemoisedSearchReadsTheFoldersOnceAndEachSetupResolvesThem() throws {
        let roots = try Roots()
        var search = roots.search
        search.memo = DiscoveryMemo()
        let first = PluginDiscovery.discover(search, disabledNames: [], builtins: [])
        try PluginFolders.write(in: roots.first, "gamma", services: "[\"gamma\"]")
        let again = PluginDiscovery.discover(search, disabledNames: ["beta"], builtins: ["alpha"])
        #expect(first.count == 4)
        #expect(again.map(\.folder) == first.map(\.folder), "the memo's folders, without gamma")
        let lines = Self.summary(again)
        #expect(lines.contains { $0.hasPrefix("\(roots.first)/alpha: \(roots.first)/alpha/plugin.toml: field 'services': service 'alpha' is already provided by the builtin plugins") }, "\(lines)")
        #expect(lines.contains("\(roots.second)/beta: disabled"), "\(lines)")
        #expect(PluginDiscovery.discover(roots.search, disabledNames: [], builtins: []).count == 5)
    }
}
