import ArgumentParser
import CrescentKit
@testable import crescent
import Testing

/// The command lines `crescent` reads without ArgumentParser (``Crescent/quickRun(_:)``) mean
/// exactly what the parser makes of them; every other line is left to the parser.
@Suite struct QuickRunTests {
    /// What a run is told: the source and every host option the command line sets, as text.
    static func summary(_ source: ScriptSource?, _ options: HostOptions) -> String {
        let shown: String = switch source {
        case .file(let path): "file \(path)"
        case .code(let code): "code \(code)"
        case .standardInput: "stdin"
        case nil: "none"
        }
        let search = options.pluginSearch.map { "\($0.folders) disabled \($0.disabled)" } ?? "none"
        return [shown, "\(options.arguments)", "\(options.ui)", "\(options.colors)", "\(options.memoryLimitMiB)", "\(String(describing: options.timeout))",
                "\(options.failFast)", "\(options.logLevel)", "\(String(describing: options.configPath))", "\(String(describing: options.dataDirectory))",
                "\(String(describing: options.location))", "\(options.keepsRunningAfterInput)", "\(String(describing: options.listen))", search]
            .joined(separator: " | ")
    }

    static let quickLines: [[String]] = [
        ["script.lua"],
        ["script.lua", "a", "--data-dir", "x"],
        ["-e", "print(1)"],
        ["-e", "print(...)", "a", "b"],
        ["--data-dir", "data", "script.lua", "x"],
        ["--fail-fast", "--no-color", "--keep-running", "--no-plugins", "s.lua"],
        ["--ui", "json", "--log-level", "debug", "-e", "print(1)"],
        ["--timeout", "2.5", "--memory-limit", "64", "s.lua"],
        ["--plugin", "a", "--plugin", "b", "--config", "c.toml", "--location", "fixed:1,2", "s.lua"],
        ["--listen=name", "s.lua"],
        Crescent.bareListen(["--listen", "--ui", "plain", "s.lua"]),
        [], ["--data-dir", "d"], ["-"], ["--ui", "plain", "-", "a", "-b"],
    ]

    @Test(arguments: quickLines)
    func aQuickLineMeansWhatTheParserMakesOfIt(_ line: [String]) throws {
        let quick = try #require(Crescent.quickRun(line), "\(line) should be read without the parser")
        let parsed = try #require(try Crescent.parseAsRoot(Crescent.hoistingSubcommand(line)) as? RunCommand, "\(line)")
        let (source, arguments) = parsed.sourceAndArguments
        #expect(Self.summary(quick.0, quick.1) == Self.summary(source, parsed.common.hostOptions(arguments: arguments)), "\(line)")
    }

    /// Wrong values, other spellings, repeats, subcommands, help and version: the parser's.
    static let parsedLines: [[String]] = [
        ["--timeout", "-1", "s.lua"], ["--timeout", "0", "s.lua"], ["--ui", "fancy", "s.lua"], ["--data-dir", "", "s.lua"],
        ["--data-dir=x", "s.lua"], ["--data-dir", "-x", "s.lua"], ["--fail-fast", "--fail-fast", "s.lua"], ["--data-dir", "a", "--data-dir", "b", "s.lua"],
        ["--log-level", "loud", "s.lua"], ["--memory-limit", "many", "s.lua"], ["--data-dir"], ["services"], ["--data-dir", "d", "services"],
        ["-e", "print(1)", "--x"], ["-e"], ["--help"], ["--version"], ["--", "s.lua"], ["-x", "s.lua"],
    ]

    @Test(arguments: parsedLines)
    func anyOtherLineIsLeftToTheParser(_ line: [String]) {
        #expect(Crescent.quickRun(line) == nil, "\(line)")
    }
}
