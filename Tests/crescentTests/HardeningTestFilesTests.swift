import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `crescent test` and the files around it that are not what they seem: a report path that is a
/// FIFO (or a link to one) or a spec file, a spec or config file that is a FIFO or huge, a
/// `.busted` file that loops or exits. Only files made in the sandbox are used, never `/dev` nodes.
@Suite struct HardeningTestFilesTests {
    static let spec = ["some_spec.lua": "it(\"passes\", function() end)\n"]

    private static func isFIFO(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO
    }

    private static func isLink(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    /// A report is written by replacing the file at its path: a FIFO there (as `/dev/null` as root)
    /// would become a regular file, a spec file would be lost. Each is refused before any test runs,
    /// exit 1 without a usage line.
    @Test func aReportPathThatIsAFIFOOrASpecFileIsRefusedUntouched() async throws {
        let sandbox = try Sandbox()
        for (name, source) in Self.spec { _ = try sandbox.write("spec/" + name, source) }
        #expect(mkfifo(sandbox.path + "/pipe", 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/link", withDestinationPath: "pipe")
        for target in ["pipe", "link"] {
            let result = try await crescent(["test", "--junit", target], in: sandbox, timeLimit: 30)
            #expect(result.status == 1, "\(target): \(result)")
            #expect(result.stderr.contains("cannot write the JUnit report \(target): it is a FIFO, which writing the report would "
                                           + "replace with a regular file; name another file, such as junit.xml"), "\(target): \(result)")
            #expect(!result.stdout.contains("ok      passes"), "refused before the tests run: \(result)")
            // Not a usage error (harden4 H9): the command line is fine, the file at the path is not.
            #expect(!result.stderr.contains("Usage:"), "\(target): \(result)")
            #expect(Self.isFIFO(sandbox.path + "/pipe") && Self.isLink(sandbox.path + "/link"), "\(target): \(result)")
        }
        let source = try String(contentsOfFile: sandbox.path + "/spec/some_spec.lua", encoding: .utf8)
        let spec = try await crescent(["test", "--junit", "spec/some_spec.lua"], in: sandbox, timeLimit: 30)
        #expect(spec.status == 1 && spec.stderr.contains("cannot write the JUnit report spec/some_spec.lua"), "\(spec)")
        #expect(try String(contentsOfFile: sandbox.path + "/spec/some_spec.lua", encoding: .utf8) == source)
        // Another name of an input (a link to the config file) is refused too.
        _ = try sandbox.write("crescent.toml", "")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/report.xml", withDestinationPath: "crescent.toml")
        let config = try await crescent(["test", "--junit", "report.xml"], in: sandbox, timeLimit: 30)
        #expect(config.status == 1 && config.stderr.contains("it is crescent.toml, which the run reads"), "\(config)")
        // The coverage files likewise.
        #expect(mkfifo(sandbox.path + "/luacov.report.out", 0o644) == 0)
        let coverage = try await crescent(["test", "--coverage"], in: sandbox, timeLimit: 30)
        #expect(coverage.status == 1 && !coverage.stderr.contains("Usage:"), "\(coverage)")
        #expect(coverage.stderr.contains("cannot write the coverage report luacov.report.out: it is a FIFO"), "\(coverage)")
        #expect(Self.isFIFO(sandbox.path + "/luacov.report.out"), "\(coverage)")
        // A regular file is still replaced with the report.
        let written = try await crescent(["test", "--junit", "junit.xml"], in: sandbox, timeLimit: 30)
        #expect(written.status == 0 && FileManager.default.fileExists(atPath: sandbox.path + "/junit.xml"), "\(written)")
    }

    /// A report that cannot be written once the tests ran (its folder's place taken by a file) is
    /// the run's failure, not a usage error: the summary stays the last line of stdout, stderr
    /// names the report and what stood in the way, no usage line, exit 1.
    @Test func aReportThatCannotBeWrittenAfterTheRunFailsItWithoutAUsageLine() async throws {
        let sandbox = try Sandbox()
        for (name, source) in Self.spec { _ = try sandbox.write("spec/" + name, source) }
        _ = try sandbox.write("reports", "a file where a folder would go\n")
        let result = try await crescent(["test", "--junit", "reports/junit.xml"], in: sandbox, timeLimit: 30)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 0 failed", "\(result)")
        #expect(result.stderr.contains("cannot write the JUnit report reports/junit.xml: cannot write reports: it is a file, not a folder"),
                "\(result)")
        #expect(!result.stderr.contains("Usage:") && !result.stderr.contains("NSCocoaErrorDomain"), "\(result)")
        _ = try sandbox.write("coverage", "a file where a folder would go\n")
        let coverage = try await crescent(["test", "--coverage"], in: sandbox, timeLimit: 30)
        #expect(coverage.status == 1 && coverage.stdoutLines.last == "1 passed, 0 failed", "\(coverage)")
        #expect(coverage.stderr.contains("cannot write the coverage report: cannot write coverage: it is a file, not a folder"),
                "\(coverage)")
        #expect(!coverage.stderr.contains("Usage:"), "\(coverage)")
    }

    /// Only a regular spec file of at most 64 MiB is read: a FIFO would wait for a writer forever,
    /// a huge file (or `/dev/zero`) fill memory. That file fails; the others run.
    @Test func aSpecFileThatIsAFIFOOrHugeFailsOnlyThatFile() async throws {
        let sandbox = try Sandbox()
        for (name, source) in Self.spec { _ = try sandbox.write("spec/" + name, source) }
        #expect(mkfifo(sandbox.path + "/spec/fifo_spec.lua", 0o644) == 0)
        let huge = try sandbox.write("spec/huge_spec.lua", "")
        #expect(truncate(huge, (64 << 20) + 1) == 0)  // sparse: costs no disk
        let result = try await crescent(["test"], in: sandbox, timeLimit: 30)
        #expect(!result.timedOut, "\(result)")
        #expect(result.status == 1 && result.stdoutLines.last == "1 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("cannot run the spec file spec/fifo_spec.lua: it is a FIFO, not a regular file"), "\(result)")
        #expect(result.stdout.contains("cannot run the spec file spec/huge_spec.lua: it is larger than 64 MiB, the most a spec "
                                       + "file may hold"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// `--config` and `.busted` that are FIFOs are refused with their names, not waited on.
    @Test func aConfigOrBustedFileThatIsAFIFOIsAUsageError() async throws {
        let sandbox = try Sandbox()
        for (name, source) in Self.spec { _ = try sandbox.write("spec/" + name, source) }
        #expect(mkfifo(sandbox.path + "/pipe", 0o644) == 0)
        let config = try await crescent(["test", "--config", "pipe"], in: sandbox, timeLimit: 30)
        #expect(!config.timedOut && config.status == 2, "\(config)")
        #expect(config.stderr.contains("cannot use config file 'pipe': it is a FIFO, not a regular file"), "\(config)")
        let script = try await crescent(["--config", "pipe", "-e", "print(1)"], in: sandbox, timeLimit: 30)
        #expect(!script.timedOut && script.status != 0 && script.stderr.contains("it is a FIFO"), "\(script)")
        #expect(mkfifo(sandbox.path + "/.busted", 0o644) == 0)
        let busted = try await crescent(["test"], in: sandbox, timeLimit: 30)
        #expect(!busted.timedOut && busted.status == 2, "\(busted)")
        #expect(busted.stderr.contains(".busted: it is a FIFO, not a regular file"), "\(busted)")
    }

    /// A `.busted` file's code runs under a time limit, and cannot end the run with os.exit.
    @Test func aBustedFileThatLoopsOrExitsIsAUsageError() async throws {
        let sandbox = try Sandbox()
        for (name, source) in Self.spec { _ = try sandbox.write("spec/" + name, source) }
        _ = try sandbox.write(".busted", "while true do end")
        let looping = try await crescent(["test"], in: sandbox, timeLimit: 40)
        #expect(!looping.timedOut && looping.status == 2, "\(looping)")
        #expect(looping.stderr.contains(".busted: it did not return within 5 s"), "\(looping)")
        _ = try sandbox.write(".busted", "os.exit(7)")
        let exiting = try await crescent(["test"], in: sandbox, timeLimit: 30)
        #expect(exiting.status == 2 && exiting.stderr.contains("os.exit cannot be called in a .busted file"), "\(exiting)")
    }
}
