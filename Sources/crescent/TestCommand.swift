import ArgumentParser
import CrescentKit
import Foundation
import Model
#if canImport(Glibc)
import Glibc
#endif

/// `crescent test [PATH...]`: runs `*_spec.lua` files in virtual time, each test in a fresh host.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run *_spec.lua files (default: spec/ and test/), each test in a fresh host on a virtual clock.",
        discussion: """
            The API is busted's (describe, it, assert, spy) with clock.advance/run/now, fake.location, \
            fake.http, fake.service, script(path, ...), send, view_text() and assert.view(golden). \
            Exit status: 0 when no test failed, 1 otherwise, 2 for a usage error, 130 when interrupted (Ctrl-C: \
            the tests that ended are reported; a second Ctrl-C quits at once).
            """
    )

    @Option(help: ArgumentHelp("The config file (default: crescent.toml in the current folder).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Run only the tests whose full name matches this Lua pattern (repeated: any of them, as busted).",
                               valueName: "pattern"))
    var filter: [String] = []

    @Option(help: ArgumentHelp("Also write the results as JUnit XML to FILE.", valueName: "file"))
    var junit: String?

    @Flag(help: "Rewrite the golden files of assert.view that differ, instead of failing.")
    var update = false

    @Option(help: ArgumentHelp("Each test's limit in real time, in seconds; past it the test fails and the run goes on. 0 for none.",
                               valueName: "seconds"))
    var timeout = 10.0

    @Option(name: .customLong("memory-limit"), help: ArgumentHelp("Each test VM's memory limit in MiB; 0 for none.", valueName: "mib"))
    var memoryLimit = HostOptions().memoryLimitMiB

    @Option(help: ArgumentHelp("Run only tests with one of these tags (#tag in a describe or test name), as busted's --tags.",
                               valueName: "tag,..."))
    var tags: [String] = []

    @Option(name: .customLong("exclude-tags"), help: ArgumentHelp("Leave out tests with one of these tags.", valueName: "tag,..."))
    var excludeTags: [String] = []

    @Option(name: [.short, .long], help: ArgumentHelp("How to write the results: plain (a line per test), or busted's json or TAP.",
                                                      valueName: "format"))
    var output: String?

    @Flag(help: "Count the lines of Lua files the tests ran (not the specs): print a table per file, write luacov.report.out and coverage/lcov.info.")
    var coverage = false

    @Argument(help: ArgumentHelp("Spec files or folders to search for *_spec.lua.", valueName: "path"))
    var paths: [String] = []

    /// The usage line a `crescent test` usage error ends with (not the script runner's): the
    /// full one, with every option, as the parser's own errors print it.
    static var usage: (usage: String, words: String) {
        Crescent.subcommandUsage(["test"]) ?? (usage: "crescent test [options] [path...]", words: "test")
    }

    /// busted's short options that crescent test spells only long: `-t fast` is `--tags fast`.
    static let bustedShortOptions = ["-t": "--tags", "-c": "--coverage"]

    /// ArgumentParser's "Unknown option '-t'" with the long option busted's short one means.
    static func withBustedOption(_ message: String) -> String {
        for (short, long) in bustedShortOptions where message.hasPrefix("Unknown option '\(short)'") {
            return message + "; busted's \(short) is crescent test's \(long): write \(long)" + (long == "--tags" ? " TAG" : "")
        }
        return message
    }

    func run() throws {
        let valued = ["--config", "--filter", "--junit", "--timeout", "--memory-limit", "--tags", "--exclude-tags", "--output"]
        if let option = RawArguments.emptyValue(among: valued) {
            Crescent.usageError("\(option)= gives no value: write \(option)=VALUE, or leave the option out", usage: Self.usage)
        }
        var options = SpecRunOptions()
        // A .busted file gives the defaults; the command line wins.
        let busted: BustedFile?
        do {
            busted = try BustedFile.read()
        } catch {
            Crescent.usageError(error.description, usage: Self.usage)
        }
        for warning in busted?.warnings ?? [] { ProcessIO.writeError("crescent: warning: \(warning)\n") }
        options.paths = paths.isEmpty ? busted?.paths ?? [] : paths
        if paths.isEmpty, let roots = busted?.paths {
            // Said as the file's: "no such file or folder: spce" sent the user to the command line.
            for root in roots where access(root, F_OK) != 0 {
                let near = NameSuggestion.closest(to: root, among: (try? FileManager.default.contentsOfDirectory(atPath: ".")) ?? [])
                Crescent.usageError(".busted: ROOT names \(root), which does not exist" + (near.map { "; did you mean '\($0)'?" } ?? ""),
                                    usage: Self.usage)
            }
        }
        // The pattern's bytes as given: a test's name need not be UTF-8, nor the pattern matching it.
        options.filters = filter.isEmpty ? (busted?.filter).map { [$0] } ?? [] : RawArguments.values(of: "--filter", parsed: filter)
        // Tags as bytes too: a tag is found in a test's name, which need not be UTF-8.
        let given = RawArguments.values(of: "--tags", parsed: tags), excluded = RawArguments.values(of: "--exclude-tags", parsed: excludeTags)
        options.selection = SpecSelection(tags: given.isEmpty ? busted?.tags ?? [] : given.flatMap(BustedFile.split),
                                          excludedTags: excluded.isEmpty ? busted?.excludedTags ?? [] : excluded.flatMap(BustedFile.split))
        // Tags the .busted file gave are said as its, not as options the command line lacks.
        if given.isEmpty, busted?.tags.isEmpty == false { options.selection.tagsOrigin = ".busted's tags" }
        if excluded.isEmpty, busted?.excludedTags.isEmpty == false { options.selection.excludedTagsOrigin = ".busted's exclude-tags" }
        if let output {
            guard let format = SpecOutputFormat.allCases.first(where: { $0.rawValue.lowercased() == output.lowercased() }) else {
                // Named as given: `-o` (busted's spelling) or `--output`.
                let spelling = CommandLine.arguments.dropFirst(2).contains { $0 == "-o" || ($0.hasPrefix("-o") && !$0.hasPrefix("--")) }
                    ? "-o" : "--output"
                let formats = SpecOutputFormat.allCases.map(\.rawValue)
                let closest = NameSuggestion.closest(to: output, among: formats).map { "; did you mean '\($0)'?" } ?? ""
                Crescent.usageError("\(spelling) \(output): crescent test writes \(formats.joined(separator: ", "))\(closest)",
                                    usage: Self.usage)
            }
            options.output = format
        } else if let format = busted?.output {
            options.output = format
        }
        options.coverage = coverage || busted?.coverage == true
        options.junitPath = junit
        options.update = update
        guard timeout >= 0 && timeout.isFinite else {
            Crescent.usageError("--timeout must be a number of seconds >= 0 (0 for no limit), got \(timeout)", usage: Self.usage)
        }
        options.timeout = timeout
        if let problem = CommonSettings.memoryLimitProblem(memoryLimit) { Crescent.usageError(problem, usage: Self.usage) }
        var host = HostOptions()
        host.memoryLimitMiB = memoryLimit
        host.configPath = config
        // The project's own plugins (./plugins) join each spec file's host, so specs can use and fake
        // their services; the user's installed plugins do not, so a spec runs the same everywhere.
        // Found once for the run, not again for each spec file's host.
        if access("plugins", F_OK) == 0 {
            var search = PluginSearch(folders: ["plugins"], onlyFolders: true)
            search.memo = DiscoveryMemo()
            host.pluginSearch = search
        }
        options.hostOptions = host
        options.stopsOnInterrupt = true
        do {
            // busted's formats are the whole of stdout, which the tests' programs (os.execute,
            // io.popen) inherit: their output goes to stderr instead, and the report to a copy of
            // stdout that no program gets, so nothing a test starts can forge or break a record.
            var report: Int32 = 1
            if options.output != .plain {
                let saved = fcntl(1, F_DUPFD_CLOEXEC, 3)
                if saved >= 0, dup2(2, 1) >= 0 { report = saved }
            }
            let status = try SpecRunner.run(options) { ProcessIO.write($0, descriptor: report) }
            // busted's formats hold only the tests: the interrupt is said beside them.
            if status == SpecRunner.interruptedStatus || status == 128 + SIGTERM, options.output != .plain {
                ProcessIO.writeError("crescent test: interrupted (\(status == 128 + SIGTERM ? "SIGTERM" : "SIGINT")): "
                                     + "the report holds the tests that ended before it\n")
            }
            throw ExitCode(status)
        } catch let error as SpecRunner.UsageError {
            Crescent.usageError(error.description, usage: Self.usage)
        } catch let error as SpecRunner.ReportFailure {
            ProcessIO.writeError("crescent: \(error.description)\n")
            throw ExitCode(1)
        }
    }
}
