import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The second attack on plugin permissions (issue 35, attack new24p), `crescent plugins install`:
/// a subfolder swapped for a link during the copy (D3), entry names printed raw (D7), an
/// archive's top folder counted toward the path bound (D8) and `..` entries left to tar (D12).
@Suite struct PluginSecondAttackInstallTests {
    /// Makes `name`.tar.gz in `sandbox` with python's tarfile: `entries` are (name in the
    /// archive, text), each a regular file (folders as needed are implied).
    static func archive(_ sandbox: Sandbox, _ name: String, _ entries: [(String, String)]) throws {
        let listed = entries.map { "(\(pythonString($0.0)), \(pythonString($0.1)))" }.joined(separator: ", ")
        try run(["python3", "-c", """
            import io, sys, tarfile
            with tarfile.open(sys.argv[1], "w:gz", format=tarfile.PAX_FORMAT) as archive:
                for name, text in [\(listed)]:
                    data = text.encode()
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    archive.addfile(info, io.BytesIO(data))
            """, sandbox.path + "/\(name).tar.gz"])
    }

    static func pythonString(_ text: String) -> String {
        "\"" + text.unicodeScalars.map { $0.value < 0x20 || $0 == "\"" || $0 == "\\" ? String(format: "\\x%02x", $0.value) : String($0) }.joined() + "\""
    }

    @discardableResult
    static func run(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process
    }

    static let manifest = """
        name = "tune"
        version = "1.0.0"
        crescent = ">=0.1.0"
        kind = "lua"
        services = ["tune"]
        """

    /// D8: the bound of 1,024 bytes is on paths inside the plugin; an archive's top folder
    /// (`tune/`) counted too, so a plugin that installed from its folder was refused from an
    /// archive of that folder. 1,024 bytes inside install from both; 1,025 are refused.
    @Test func anArchivesTopFolderDoesNotCountTowardThePathBound() async throws {
        let sandbox = try Sandbox()
        let folders = Array(repeating: String(repeating: "d", count: 250), count: 4).joined(separator: "/")
        let inner = folders + "/" + String(repeating: "x", count: 20)
        #expect(inner.utf8.count == 1_024)
        try Self.archive(sandbox, "fits", [("tune/plugin.toml", Self.manifest), ("tune/main.lua", "service('tune', 't')\n"), ("tune/" + inner, "deep")])
        try Self.archive(sandbox, "past", [("tune/plugin.toml", Self.manifest), ("tune/main.lua", "service('tune', 't')\n"), ("tune/" + inner + "x", "deep")])
        let fits = try await inHome(["plugins", "install", "fits.tar.gz"], sandbox)
        #expect(fits.status == 0 && fits.stdout.contains("installed plugin 'tune' 1.0.0"), "\(fits)")
        let copied = try? String(contentsOfFile: sandbox.path + "/.local/share/crescent/plugins/tune/" + inner, encoding: .utf8)
        #expect(copied == "deep")
        let past = try await inHome(["plugins", "install", "--force", "past.tar.gz"], sandbox)
        #expect(past.status == 1 && past.stderr.contains("is nested too deep (a path inside a plugin holds at most 1024 bytes)"), "\(past)")
    }

    /// D12: an entry with `..` (`tune/../../victim.txt`, also as a pax path) reached tar, whose
    /// own output was the message. It is refused from the listing, named, nothing unpacked.
    @Test func anArchiveEntryWithDotDotIsRefusedNamingIt() async throws {
        let sandbox = try Sandbox()
        try Self.archive(sandbox, "dotdot", [("tune/plugin.toml", Self.manifest), ("tune/main.lua", "service('tune', 't')\n"),
                                              ("tune/../../victim.txt", "outside")])
        let result = try await inHome(["plugins", "install", "dotdot.tar.gz"], sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("dotdot.tar.gz: tune/../../victim.txt leads out of the plugin's folder (its path holds '..')"), "\(result)")
        #expect(!result.stderr.contains("tar:"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/.local/share/crescent/plugins/tune"))
    }

    /// D7: the refusals of an archive holding two plugins, or a plugin's folder with entries
    /// beside it, printed those names raw (an escape sequence reached the terminal); they show
    /// as escapes, as the other install messages do.
    @Test func entryNamesInInstallRefusalsShowControlCharactersAsEscapes() async throws {
        let sandbox = try Sandbox()
        try Self.archive(sandbox, "beside", [("tune/plugin.toml", Self.manifest), ("tune/main.lua", "m"), ("README\u{1B}[1m", "x")])
        try Self.archive(sandbox, "two", [("a\u{1B}[2K\r/plugin.toml", Self.manifest), ("b\u{1B}]0;T\u{07}/plugin.toml", Self.manifest)])
        let beside = try await inHome(["plugins", "install", "beside.tar.gz"], sandbox)
        #expect(beside.stderr.contains(#"holds the plugin folder tune and beside it README\u{1B}[1m:"#), "\(beside)")
        let two = try await inHome(["plugins", "install", "two.tar.gz"], sandbox)
        #expect(two.stderr.contains(#"holds 2 plugins (a\u{1B}[2K\r, b\u{1B}]0;T\u{7}):"#), "\(two)")
        for result in [beside, two] {
            #expect(result.status == 1 && !result.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\r" }, "\(result)")
        }
    }

    /// D3: a subfolder exchanged with a link to a folder of secrets while `plugins install DIR`
    /// copied it: the copy opened `sub/NAME` by path, through the link, and installed the
    /// secrets as the plugin's files. The copy walks by descriptor now: never a secret.
    @Test func aSubfolderSwappedForALinkDuringTheCopyIsNeverFollowed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("src/tune/plugin.toml", Self.manifest)
        try sandbox.write("src/tune/main.lua", "service('tune', 't')\n")
        for index in 0..<300 {
            try sandbox.write(String(format: "src/tune/sub/f%03d", index), "GOOD")
            try sandbox.write(String(format: "secret/f%03d", index), "SECRET")
        }
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/alt", withDestinationPath: sandbox.path + "/secret")
        // Exchanges src/tune/sub and the link alt (renameat2 RENAME_EXCHANGE) until killed.
        let swapper = Process()
        swapper.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        swapper.arguments = ["python3", "-c", """
            import ctypes, sys, time
            libc = ctypes.CDLL(None, use_errno=True)
            a, b = sys.argv[1].encode(), sys.argv[2].encode()
            end = time.time() + 90
            while time.time() < end:
                libc.renameat2(-100, a, -100, b, 2)
            """, sandbox.path + "/src/tune/sub", sandbox.path + "/alt"]
        try swapper.run()
        defer {
            // SIGKILL: the test runner's ignored signals are the swapper's too.
            kill(swapper.processIdentifier, SIGKILL)
            swapper.waitUntilExit()
        }
        var installed = 0, refused = 0
        let installedSub = sandbox.path + "/.local/share/crescent/plugins/tune/sub"
        for _ in 0..<12 {
            let result = try await inHome(["plugins", "install", "--force", "src/tune"], sandbox)
            if result.status == 0 { installed += 1 } else { refused += 1 }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: installedSub)) ?? []
            let secrets = names.filter { (try? String(contentsOfFile: installedSub + "/" + $0, encoding: .utf8)) == "SECRET" }
            #expect(secrets.isEmpty, "installed \(secrets.count) secret files: \(result)")
            if !secrets.isEmpty { break }
        }
        #expect(installed + refused == 12)
    }
}
