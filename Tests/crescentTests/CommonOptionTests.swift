import ArgumentParser
@testable import crescent
import Testing

/// The common options are declared once (``CommonOption``): ArgumentParser's declaration and the
/// command lines read without it must agree on every name and on which take a value.
@Suite struct CommonOptionTests {
    /// The `--names` the parser's help shows for the common options, each with whether a
    /// `<value>` follows it anywhere.
    static func parserOptions() -> [String: Bool] {
        let words = CommonOptions.helpMessage(columns: 400).split(whereSeparator: \.isWhitespace).map(String.init)
        var options: [String: Bool] = [:]
        for (index, word) in words.enumerated() where word.hasPrefix("--") {
            let name = String(word.prefix { $0 != "," && $0 != ":" && $0 != ")" && $0 != ";" })
            let valued = index + 1 < words.count && words[index + 1].hasPrefix("<")
            options[name] = (options[name] ?? false) || valued
        }
        return options
    }

    @Test func theParserDeclaresExactlyTheTablesOptions() {
        let declared = Self.parserOptions()
        #expect(Set(declared.keys) == Set(CommonOption.all.map(\.spelling) + ["--help"]))
    }

    @Test func everyOptionTakesAValueAsTheParserReadsIt() {
        let declared = Self.parserOptions()
        // `--listen` is an option with a value for the parser; these command lines take it only
        // as `--listen=NAME` (``Crescent/bareListen(_:)`` writes a bare one so first).
        for option in CommonOption.all where option.name != CommonOption.listen.name {
            #expect(declared[option.spelling] == option.takesValue, "\(option.spelling)")
        }
        #expect(declared[CommonOption.listen.spelling] == true)
        #expect(!CommonOption.listen.takesValue)
    }

    @Test func aWordThatIsNoCommonOptionSetsNothing() {
        var settings = CommonSettings()
        let misspelled = settings.set("--data-dirs", value: "x")
        let bareListen = settings.set("--listen", value: "x")
        let listen = settings.set("--listen=box", value: nil)
        let plugins = settings.set("--plugin", value: "a") && settings.set("--plugin", value: "b")
        let badMode = settings.set("--ui", value: "fancy")
        let missingFolder = settings.set("--data-dir", value: nil)
        #expect(!misspelled && !bareListen && !badMode && !missingFolder)
        #expect(listen && settings.listen == "box")
        #expect(plugins && settings.plugins == ["a", "b"])
        #expect(settings.ui == nil && settings.dataDir == nil)
    }
}
