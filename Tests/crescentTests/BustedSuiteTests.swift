import Foundation
import Testing

/// Real busted suites run unchanged (issue 36): public Lua libraries' own specs, kept with their
/// licences in Tests/Fixtures/busted-suites, run side by side with Debian's busted on lua5.4 and
/// with `crescent test -o json`; every test must be found under the same full name and end the
/// same way (success, failure, error or pending). `features` is ours: busted 2's API that the
/// libraries use, each part beside its failing opposite, and its per-block environments
/// (`environments_spec.lua`: where a bare global a block, hook or test assigns is seen).
@Suite struct BustedSuiteTests {
    static let suites = CrescentProcess.packageRoot.appendingPathComponent("Tests/Fixtures/busted-suites")

    /// Each test's outcome under busted: the fixture's output handler prints `status<TAB>name`.
    static func bustedOutcomes(_ suite: String, _ arguments: [String] = []) async throws -> [String: String] {
        let result = try await crescent(["/usr/bin/busted", "-o", "../outcomes.lua"] + arguments + ["spec"], executable: "/usr/bin/lua5.4",
                                        directory: suites.appendingPathComponent(suite).path, timeLimit: 120)
        #expect(!result.killedBySignal && !result.timedOut, "\(result)")
        var outcomes: [String: String] = [:]
        for line in result.stdoutLines where !line.isEmpty {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            // A name a suite gives two tests (middleclass does) holds both outcomes, sorted.
            outcomes[parts[1]] = [outcomes[parts[1]], parts[0]].compactMap { $0 }.sorted().joined(separator: "+")
        }
        return outcomes
    }

    /// Each test's outcome under `crescent test -o json`, named as busted names them.
    static func crescentOutcomes(_ suite: String, _ arguments: [String] = []) async throws -> ([String: String], RunResult) {
        let result = try await crescent(["test", "-o", "json"] + arguments + ["spec"],
                                        directory: suites.appendingPathComponent(suite).path, timeLimit: 300)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
        var outcomes: [String: String] = [:]
        for (list, status) in [("successes", "success"), ("failures", "failure"), ("errors", "error"), ("pendings", "pending")] {
            for entry in object[list] as? [[String: Any]] ?? [] {
                let name = entry["name"] as? String ?? "?"
                outcomes[name] = [outcomes[name], status].compactMap { $0 }.sorted().joined(separator: "+")
            }
        }
        return (outcomes, result)
    }

    static func counts(_ outcomes: [String: String]) -> String {
        let all = outcomes.values.flatMap { $0.split(separator: "+").map(String.init) }
        return ["success", "failure", "error", "pending"].map { status in "\(all.count { $0 == status }) \(status)" }
            .joined(separator: ", ")
    }

    /// The differences between busted's outcomes and crescent's, one line each.
    static func differences(_ busted: [String: String], _ ours: [String: String]) -> [String] {
        Set(busted.keys).union(ours.keys).sorted().filter { busted[$0] != ours[$0] }.map { name in
            "\(name): busted \(busted[name] ?? "(not found)"), crescent \(ours[name] ?? "(not found)")"
        }
    }

    @Test(arguments: ["inspect", "semver", "middleclass", "memoize", "stateful", "features"])
    func aSuiteEndsAsUnderBusted(_ suite: String) async throws {
        let busted = try await Self.bustedOutcomes(suite)
        let (ours, result) = try await Self.crescentOutcomes(suite)
        #expect(!busted.isEmpty, "busted found no tests in \(suite)")
        #expect(result.stderrShowsNoCrash, "\(result)")
        let differences = Self.differences(busted, ours)
        let report = "\(suite): busted \(Self.counts(busted)); crescent \(Self.counts(ours))\n"
            + differences.joined(separator: "\n") + "\n\(result.stdout.prefix(4000))"
        #expect(differences.isEmpty, "\(report)")
    }

    /// `--tags`, `--exclude-tags` and `--filter` choose as busted's do: by `#tag` in any part of the
    /// full name, and what the chosen tests ran before a nested describe's body is what it sees
    /// (with only `#network` chosen, `blocks nested` finds nothing set up, under both).
    @Test(arguments: [["--tags", "network"], ["--tags=slow,nothing"], ["--exclude-tags", "slow"], ["--filter", "blocks"]])
    func choosingTestsEndsAsUnderBusted(_ arguments: [String]) async throws {
        let busted = try await Self.bustedOutcomes("features", arguments)
        let (ours, result) = try await Self.crescentOutcomes("features", arguments)
        let differences = Self.differences(busted, ours)
        let report = "\(arguments): busted \(Self.counts(busted)); crescent \(Self.counts(ours))\n"
            + differences.joined(separator: "\n") + "\n\(result)"
        #expect(!busted.isEmpty && differences.isEmpty, "\(report)")
        if arguments.first == "--tags" {
            #expect(ours["tags #slow are part of the name #network"] == "success" && ours["blocks nested"] == "error", "\(ours)")
        }
    }

    /// A `.busted` file's default task gives the paths, tags and output; the command line wins.
    @Test func aBustedFileGivesTheDefaults() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("checks/a_spec.lua", """
            describe("a", function()
              it("runs #fast", function() assert.is_true(true) end)
              it("is left out #slow", function() assert.is_true(false) end)
            end)
            """)
        try sandbox.write(".busted", """
            return { default = { ROOT = { "checks" }, ["exclude-tags"] = "slow", output = "TAP" } }
            """)
        let tap = try await crescent(["test"], in: sandbox)
        #expect(tap.status == 0, "\(tap)")
        #expect(tap.stdoutLines.first == "ok 1 - a runs #fast" && tap.stdoutLines.contains("1..1"), "\(tap)")
        let plain = try await crescent(["test", "-o", "plain", "--exclude-tags", "fast"], in: sandbox)
        #expect(plain.status == 1 && plain.stdoutLines.last == "0 passed, 1 failed", "\(plain)")
        // busted's own handlers, as real suites' files name them (busted2 N1): said, and the run
        // goes on with crescent's output or the one -o asks for; options crescent does not take
        // are said too (N14).
        try sandbox.write(".busted", "return { default = { ROOT = { \"checks\" }, output = \"gtest\", lpath = \"src/?.lua\" } }")
        let warned = try await crescent(["test", "--exclude-tags", "slow"], in: sandbox)
        #expect(warned.status == 0 && warned.stdoutLines.last == "1 passed, 0 failed", "\(warned)")
        #expect(warned.stderr.contains(".busted: output \"gtest\" is busted's, not one crescent test writes"), "\(warned)")
        #expect(warned.stderr.contains(".busted: default.lpath is busted's and crescent test does not use it"), "\(warned)")
        let chosen = try await crescent(["test", "--exclude-tags", "slow", "-o", "TAP"], in: sandbox)
        #expect(chosen.status == 0 && chosen.stdoutLines.first == "ok 1 - a runs #fast", "\(chosen)")
    }

    /// `-o TAP` as busted writes it: a line per test, the failure's message as comments, the plan.
    @Test func tapOutputIsBustedsShape() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/t_spec.lua", """
            it("passes", function() end)
            it("fails", function() assert.equals(1, 2) end)
            pending("later")
            """)
        let result = try await crescent(["test", "-o", "TAP"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.first == "ok 1 - passes", "\(result)")
        #expect(lines.contains("not ok 2 - fails") && lines.contains("# spec/t_spec.lua @ 2"), "\(result)")
        #expect(lines.contains { $0.hasPrefix("# Failure message: spec/t_spec.lua:2: expected the values to be equal") }, "\(result)")
        #expect(lines.contains("ok 3 - # SKIP later") && lines.contains("1..3"), "\(result)")
    }
}
