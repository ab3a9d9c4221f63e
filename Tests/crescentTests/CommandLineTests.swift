import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 2 "Bad input" and DESIGN.md "Command line": usage errors exit 2 with a one-line reason
/// and the usage hint; `--version` and `--help` exit 0.
@Suite struct CommandLineTests {
    /// A usage error: exit 2, nothing on stdout, exactly the reason line then the usage hint.
    private func expectUsageError(_ result: RunResult, reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 2, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout == "", "\(result)", sourceLocation: sourceLocation)
        let lines = result.stderrLines
        #expect(lines.count == 2, "a reason and the usage hint: \(result)", sourceLocation: sourceLocation)
        #expect(lines.first == reason, "\(result)", sourceLocation: sourceLocation)
        #expect(lines.last?.hasPrefix(usageHintPrefix) == true, "\(result)", sourceLocation: sourceLocation)
    }

    @Test func aMissingScriptExitsTwo() async throws {
        let result = try await crescent(["x.lua"])
        expectUsageError(result, reason: "crescent: cannot open 'x.lua' (No such file or directory)")
    }

    @Test func aMissingScriptInAMissingFolderExitsTwo() async throws {
        let result = try await crescent(["no/such/dir/x.lua", "arg"])
        expectUsageError(result, reason: "crescent: cannot open 'no/such/dir/x.lua' (No such file or directory)")
    }

    @Test func aDirectoryExitsTwo() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeFolder("folder.lua")
        let result = try await crescent(["folder.lua"], in: sandbox)
        expectUsageError(result, reason: "crescent: cannot read 'folder.lua' (Is a directory)")
    }

    // Skipped as root: root reads a chmod 000 file anyway, so there is no error to observe.
    @Test(.enabled(if: geteuid() != 0, "running as root, which can read a chmod 000 file"))
    func anUnreadableFileExitsTwo() async throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("secret.lua", "print('should not run')\n")
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: path)
        let result = try await crescent(["secret.lua"], in: sandbox)
        expectUsageError(result, reason: "crescent: cannot open 'secret.lua' (Permission denied)")
    }

    @Test func anUnknownFlagExitsTwo() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", "print('should not run')\n")
        let result = try await crescent(["--bogus", "script.lua"], in: sandbox)
        expectUsageError(result, reason: "crescent: Unknown option '--bogus'")
    }

    @Test(arguments: [
        (["--timeout", "0", "-e", ""], "--timeout"),
        (["--timeout=-1", "-e", ""], "--timeout"),
        (["--timeout", "soon", "-e", ""], "--timeout"),
        (["--memory-limit", "abc", "-e", ""], "--memory-limit"),
        (["--memory-limit=-5", "-e", ""], "--memory-limit"),
        (["--ui", "fancy", "-e", ""], "--ui"),
        (["--log-level", "loud", "-e", ""], "--log-level"),
        (["-e"], "-e"),
    ])
    func aBadOptionValueExitsTwo(arguments: [String], option: String) async throws {
        let result = try await crescent(arguments)
        #expect(result.status == 2, "\(result)")
        #expect(result.stdout == "", "\(result)")
        let lines = result.stderrLines
        #expect(lines.count == 2, "\(result)")
        #expect(lines.first?.hasPrefix("crescent: ") == true, "\(result)")
        #expect(lines.first?.contains(option) == true, "the reason names the option: \(result)")
        #expect(lines.last?.hasPrefix(usageHintPrefix) == true, "\(result)")
    }

    /// A mistake in a subcommand prints that subcommand's usage, not the script run's.
    @Test(arguments: [
        (["plugin", "check"], "Usage: crescent plugin check ", "'crescent plugin check --help'"),
        (["services", "--bogus"], "Usage: crescent services ", "'crescent services --help'"),
        (["--no-color", "test", "--junit"], "Usage: crescent test ", "'crescent test --help'"),
        (["eval"], "Usage: crescent eval ", "'crescent eval --help'"),
    ])
    func aSubcommandMistakeShowsThatSubcommandsUsage(arguments: [String], usage: String, help: String) async throws {
        let result = try await crescent(arguments)
        #expect(result.status == 2, "\(result)")
        let last = result.stderrLines.last ?? ""
        #expect(last.hasPrefix(usage) && last.hasSuffix("(see \(help))"), "\(result)")
    }

    /// The commands that read the project's services and run no script list (and take) only the
    /// options that set services up, not how a run shows itself or is reached.
    @Test(arguments: [["services"], ["plugins", "list"], ["plugins", "allow"], ["plugins", "install"], ["plugin", "check"]])
    func aSubcommandsHelpListsOnlyTheOptionsItTakes(words: [String]) async throws {
        let help = try await crescent(words + ["--help"])
        #expect(help.status == 0, "\(help)")
        for option in ["--config", "--data-dir", "--location", "--log-level", "--plugin", "--no-plugins"] {
            #expect(help.stdout.contains(option), "\(words) --help lists \(option): \(help)")
        }
        for option in ["--ui", "--listen", "--keep-running", "--fail-fast", "--timeout", "--memory-limit", "--no-color"] {
            #expect(!help.stdout.contains(option), "\(words) --help does not list \(option): \(help)")
        }
        let refused = try await crescent(words + ["--ui", "plain"])
        #expect(refused.status == 2 && refused.stderr.contains("--ui"), "\(refused)")
    }

    /// A bare `--listen` takes no next word (that is the script), so the help shows the name as
    /// an optional value joined to it.
    @Test(arguments: [["--help"], ["run", "--help"], ["repl", "--help"]])
    func helpShowsListenWithAnOptionalName(words: [String]) async throws {
        let help = try await crescent(words)
        #expect(help.status == 0, "\(help)")
        #expect(help.stdout.contains("--listen[=<name>]") && !help.stdout.contains("--listen <name>"), "\(help)")
    }

    @Test func flagsAfterTheScriptBelongToTheScript() async throws {
        let result = try await runScript("print(...)", arguments: ["--bogus", "--timeout", "x"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "--bogus\t--timeout\tx\n", "\(result)")
    }

    @Test func versionPrintsAVersionAndExitsZero() async throws {
        let result = try await crescent(["--version"])
        #expect(result.status == 0, "\(result)")
        let version = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version.range(of: #"\d+\.\d+\.\d+"#, options: .regularExpression) != nil, "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    @Test func helpListsTheOptionsAndExitsZero() async throws {
        let result = try await crescent(["--help"])
        #expect(result.status == 0, "\(result)")
        for option in ["--fail-fast", "--timeout", "--memory-limit", "--log-level", "--version", "-e"] {
            #expect(result.stdout.contains(option), "--help lists \(option): \(result)")
        }
        #expect(result.stdout.lowercased().contains("usage"), "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    /// `--log-level`'s help names its default and says what each level shows.
    @Test func helpNamesTheLogLevelsAndTheDefault() async throws {
        let result = try await crescent(["--help"])
        let help = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        let option = help.range(of: "--log-level <level>").map { String(help[$0.upperBound...].prefix(400)) } ?? ""
        #expect(option.contains("(values: debug, info, warn, error; default: info)"), "\(option)")
        for level in ["debug (all of them)", "info (all but debug)", "warn (warnings and errors)", "error (errors only)"] {
            #expect(option.contains(level), "\(level): \(option)")
        }
        let quiet = try await crescent(["--log-level", "warn", "-e", "log.info('hidden') log.warn('shown') log.error('also')"])
        #expect(quiet.stderrLines.count == 2 && quiet.stderr.contains("shown") && !quiet.stderr.contains("hidden"), "\(quiet)")
    }

    @Test func theRunSubcommandRunsAScript() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", "print('ran', ...)\n")
        let result = try await crescent(["run", "script.lua", "a"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "ran\ta\n", "\(result)")
    }

    /// The usage text shows options before the subcommand's name; those forms work.
    @Test func optionsMayComeBeforeTheSubcommand() async throws {
        let sandbox = try Sandbox()
        let services = try await crescent(["--data-dir", "data", "--log-level", "warn", "services", "geocoder"], in: sandbox)
        #expect(services.status == 0, "\(services)")
        #expect(services.stdout.hasPrefix("services.geocoder"), "\(services)")
        let repl = try await crescent(["--data-dir=data", "repl"], in: sandbox, stdin: "print('from stdin')\n")
        #expect(repl.status == 0, "\(repl)")
        #expect(repl.stdout == "from stdin\n", "\(repl)")
        let chunk = try await crescent(["--log-level", "warn", "-e", "print(...)", "services"], in: sandbox)
        #expect(chunk.stdout == "services\n", "a word after -e is the chunk's argument: \(chunk)")
    }

    @Test func theParserListsTheChoicesOfTypedOptions() async throws {
        let result = try await crescent(["--ui", "fancy", "-e", ""])
        expectUsageError(result, reason: "crescent: The value 'fancy' is invalid for '--ui <mode>'. Please provide one of 'live', 'plain' or 'json'.")
        let empty = try await crescent(["--data-dir", "", "-e", "print(1)"])
        expectUsageError(empty, reason: "crescent: --data-dir must name a folder, got an empty string")
    }

    @Test func helpShowsTheSubcommandsAndTheRunOptions() async throws {
        let result = try await crescent(["--help"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("SUBCOMMANDS:") && result.stdout.contains("services"), "\(result)")
        #expect(result.stdout.contains("values: live, plain, json"), "\(result)")
        let sub = try await crescent(["help", "services"])
        #expect(sub.status == 0 && sub.stdout.contains("USAGE: crescent services"), "\(sub)")
    }

    @Test func sendHelpShowsHelpWithoutAHost() async throws {
        for flag in ["--help", "-h"] {
            let result = try await crescent(["send", flag], environment: ["XDG_RUNTIME_DIR": "/nonexistent-crescent-test"])
            #expect(result.status == 0 && result.stdout.contains("USAGE: crescent send"), "\(flag): \(result)")
        }
    }

    @Test func anEmptyFolderNameIsAUsageError() async throws {
        let sandbox = try Sandbox()
        let initResult = try await crescent(["init", ""], in: sandbox)
        #expect(initResult.status == 2 && initResult.stderr.contains("the project folder is empty"), "\(initResult)")
        let stubs = try await crescent(["stubs", "--out", ""], in: sandbox)
        #expect(stubs.status == 2 && stubs.stderr.contains("--out is empty"), "\(stubs)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/crescent.toml"), "nothing is written")
    }

    @Test func aMisspelledSubcommandSuggestsTheRightOne() async throws {
        let result = try await crescent(["servics"])
        #expect(result.status == 2 && result.stderr.contains("cannot open 'servics'")
                && result.stderr.contains("did you mean 'crescent services'?"), "\(result)")
        let script = try await crescent(["missing.lua"])
        #expect(script.status == 2 && !script.stderr.contains("did you mean"), "\(script)")
    }

    /// Below the root too: a misspelled subcommand of `plugin`/`plugins` and of `help` is named with
    /// the one meant, and a subcommand's own refusal shows that subcommand's usage.
    @Test(arguments: [
        (["plugin", "chek"], "plugin: no subcommand 'chek'; did you mean 'crescent plugin check'?", "Usage: crescent plugin"),
        (["plugins", "--data-dir", "d", "alow", "x"], "plugins: no subcommand 'alow'; did you mean 'crescent plugins allow'?", "Usage: crescent plugins"),
        (["plugins", "lst"], "plugins: no subcommand 'lst'; did you mean 'crescent plugins list'?", "Usage: crescent plugins"),
        (["help", "servics"], "help: no subcommand 'servics'; did you mean 'crescent help services'?", "Usage: crescent [options]"),
        (["services", "locaton"], "no service or object type named 'locaton' (services: location, ", "Usage: crescent services"),
        (["send", "--key"], "send --key: give the keys to press", "Usage: crescent send"),
    ])
    func aMistakeBelowTheRootIsNamedWithItsUsage(words: [String], message: String, usage: String) async throws {
        let sandbox = try Sandbox()
        let result = try await crescent(words, in: sandbox)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("crescent: " + message), "\(result)")
        #expect(result.stderr.contains(usage), "\(result)")
        if words == ["services", "locaton"] { #expect(result.stderr.contains("did you mean 'location'?"), "\(result)") }
    }
}
