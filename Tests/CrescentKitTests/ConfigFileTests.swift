@testable import CrescentKit
import Services
import Testing

/// crescent.toml's warnings: each names `file:line`; a section's unknown keys make one warning,
/// found in one pass over the file however many there are.
struct ConfigFileTests {
    /// `count` keys no section has, in [store] after one it has, one a line from line 3.
    static func store(unknownKeys count: Int) -> String {
        "[store]\npath = \"a.sqlite\"\n" + (0..<count).map { "key\($0) = \($0)" }.joined(separator: "\n") + "\n"
    }

    @Test func aSectionsUnknownKeysAreOneWarningNamingTheFirstTen() throws {
        let config = try ConfigFile.parse(Self.store(unknownKeys: 12) + "[http]\ntimeout = 5\nretries = 2\n", name: "crescent.toml")
        let warnings = config.warnings(plugins: [StandardPlugin()])
        let keys = StandardServices.settingKeys
        let named = (0..<10).map { "'key\($0)' (line \($0 + 3))" }.joined(separator: ", ")
        #expect(warnings == [
            "crescent.toml:17: unknown key 'retries' in [http] (keys: \(keys["http"]!.joined(separator: ", ")))",
            "crescent.toml:3: 12 unknown keys in [store]: \(named), and 2 more (keys: \(keys["store"]!.joined(separator: ", ")))",
        ])
    }

    /// Ten thousand unknown keys took over two minutes to start (the file was read again for each
    /// key's line); now it is one pass. The limit is far above the time it takes and far below the
    /// time it took.
    @Test func tenThousandUnknownKeysAreReadInOnePass() throws {
        let text = Self.store(unknownKeys: 10_000)
        let clock = ContinuousClock()
        let start = clock.now
        let config = try ConfigFile.parse(text, name: "crescent.toml")
        let warnings = config.warnings(plugins: [StandardPlugin()])
        let elapsed = clock.now - start
        #expect(warnings.count == 1)
        #expect(warnings.first?.hasPrefix("crescent.toml:3: 10000 unknown keys in [store]: 'key0' (line 3), 'key1' (line 4)") == true)
        #expect(warnings.first?.contains("and 9990 more") == true)
        // Timed in plain builds only (see ``Sanitizer``).
        if Sanitizer.active == nil { #expect(elapsed < .seconds(10), "\(elapsed)") }
    }

    /// The sections the host reads itself warn about keys they do not have, like every other.
    @Test func theHostsOwnSectionsNameTheirUnknownKeys() throws {
        let text = "[host]\nlistne = true\n[plugins]\ndisabled = []\nmemory_limt = 64\n"
        let warnings = try ConfigFile.parse(text, name: "crescent.toml").warnings(plugins: [StandardPlugin()])
        #expect(warnings == [
            "crescent.toml:2: unknown key 'listne' in [host] (keys: listen; did you mean 'listen'?)",
            "crescent.toml:5: unknown key 'memory_limt' in [plugins] (keys: disabled, memory_limit, call_timeout, allow_unsandboxed; "
                + "did you mean 'memory_limit'?)",
        ])
    }
}
