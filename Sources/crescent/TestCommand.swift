import ArgumentParser
import CrescentKit
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
            Exit status: 0 when no test failed, 1 otherwise, 2 for a usage error.
            """
    )

    @Option(help: ArgumentHelp("The config file (default: crescent.toml in the current folder).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Run only the tests whose full name matches this Lua pattern.", valueName: "pattern"))
    var filter: String?

    @Option(help: ArgumentHelp("Also write the results as JUnit XML to FILE.", valueName: "file"))
    var junit: String?

    @Flag(help: "Rewrite the golden files of assert.view that differ, instead of failing.")
    var update = false

    @Option(help: ArgumentHelp("Each test's limit in real time, in seconds; past it the test fails and the run goes on. 0 for none.",
                               valueName: "seconds"))
    var timeout = 10.0

    @Option(name: .customLong("memory-limit"), help: ArgumentHelp("Each test VM's memory limit in MiB; 0 for none.", valueName: "mib"))
    var memoryLimit = HostOptions().memoryLimitMiB

    @Argument(help: ArgumentHelp("Spec files or folders to search for *_spec.lua.", valueName: "path"))
    var paths: [String] = []

    func run() throws {
        var options = SpecRunOptions()
        options.paths = paths
        options.filter = filter
        options.junitPath = junit
        options.update = update
        guard timeout >= 0 && timeout.isFinite else {
            Crescent.usageError("--timeout must be a number of seconds >= 0 (0 for no limit), got \(timeout)")
        }
        options.timeout = timeout
        var host = HostOptions()
        host.memoryLimitMiB = memoryLimit
        host.configPath = config
        // The project's own plugins (./plugins) join each test's host, so specs can use and fake
        // their services; the user's installed plugins do not, so a spec runs the same everywhere.
        // Found once for the run, not again for each test's host.
        if access("plugins", F_OK) == 0 {
            var search = PluginSearch(folders: ["plugins"], onlyFolders: true)
            search.memo = DiscoveryMemo()
            host.pluginSearch = search
        }
        options.hostOptions = host
        do {
            throw ExitCode(try SpecRunner.run(options) { ProcessIO.writeOut($0) })
        } catch let error as SpecRunner.UsageError {
            Crescent.usageError(error.description)
        }
    }
}
