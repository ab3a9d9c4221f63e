import Foundation
import Testing

/// `crescent plugins install PATH|GIT-URL|ARCHIVE` and `crescent plugins remove NAME`: the
/// manifest is checked, its permissions shown, the folder copied into the user's plugin folder;
/// nothing of the plugin runs.
@Suite struct PluginInstallTests {
    /// A plugin whose main would leave a file behind if it ran.
    static func writePlugin(in sandbox: Sandbox, at folder: String, version: String = "1.0.0", permissions: String = "read = [\"/etc/hosts\"]") throws {
        try sandbox.write("\(folder)/plugin.toml", """
            name = "tune"
            version = "\(version)"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["tune"]

            [permissions]
            \(permissions)
            """)
        try sandbox.write("\(folder)/main.lua", """
            -- Its data folder (the install folder too): the one place it may write.
            local ok, marker = pcall(io.open, "\(sandbox.path)\(dataFolder)/ran.txt", "w")
            if ok and marker then marker:write("ran") marker:close() end
            local s = service("tune", "Tunes.")
            s:method("ping", {}, "string", "Answers.", function() return "pong" end)
            """)
    }

    static let userFolder = "/.local/share/crescent/plugins/tune"
    /// Its data folder, apart from its code: an update replaces the code and keeps the data.
    static let dataFolder = "/.local/share/crescent/plugin-data/tune"

    func expectInstalled(_ result: RunResult, in sandbox: Sandbox, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.contains("installed plugin 'tune' 1.0.0 in \(sandbox.path)\(Self.userFolder)"), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.contains("read /etc/hosts: may read the files in /etc/hosts"), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.contains("it starts once granted: crescent plugins allow tune"), "\(result)", sourceLocation: sourceLocation)
        #expect(FileManager.default.fileExists(atPath: sandbox.path + Self.userFolder + "/main.lua"), sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + Self.dataFolder + "/ran.txt"), "installing ran the plugin's code", sourceLocation: sourceLocation)
        let listed = try await inHome(["plugins"], sandbox)
        #expect(listed.stdoutLines.contains { $0.hasPrefix("tune") && $0.contains(sandbox.path + Self.userFolder) && $0.contains("not granted") },
                "\(listed)", sourceLocation: sourceLocation)
    }

    @Test func installFromAFolderThenAllowRunAndRemove() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "src/tune")
        let installed = try await inHome(["plugins", "install", "src/tune"], sandbox)
        try await expectInstalled(installed, in: sandbox)
        #expect(try await inHome(["plugins", "allow", "tune"], sandbox).status == 0)
        let used = try await inHome(["-e", "task(function() print((services.tune:ping())) end)"], sandbox)
        #expect(used.stdoutLines == ["pong"], "\(used)")
        #expect(FileManager.default.fileExists(atPath: sandbox.path + Self.dataFolder + "/ran.txt"), "once granted it runs")
        let removed = try await inHome(["plugins", "remove", "tune"], sandbox)
        #expect(removed.status == 0 && removed.stdout.contains("removed plugin 'tune'"), "\(removed)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + Self.userFolder))
        let grants = try String(contentsOfFile: sandbox.path + "/.local/share/crescent/plugin-grants.toml", encoding: .utf8)
        #expect(!grants.contains("[tune]"), "\(grants)")
        let again = try await inHome(["plugins", "remove", "tune"], sandbox)
        #expect(again.status == 1 && again.stderr.contains("no plugin 'tune' is installed"), "\(again)")
    }

    @Test func installFromAGitRepositoryByPathAndByURL() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "repo")
        for arguments in [["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "plugin"]] {
            let git = Process()
            git.executableURL = URL(fileURLWithPath: "/usr/bin/git")
            git.arguments = ["-C", sandbox.path + "/repo"] + arguments
            try git.run()
            git.waitUntilExit()
            #expect(git.terminationStatus == 0)
        }
        try await expectInstalled(try await inHome(["plugins", "install", "repo"], sandbox), in: sandbox)
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + Self.userFolder + "/.git"))
        try FileManager.default.removeItem(atPath: sandbox.path + Self.userFolder)
        try await expectInstalled(try await inHome(["plugins", "install", "file://\(sandbox.path)/repo"], sandbox), in: sandbox)
    }

    @Test func installFromAnArchive() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "pack/tune")
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        tar.arguments = ["-czf", sandbox.path + "/tune.tar.gz", "-C", sandbox.path + "/pack", "tune"]
        try tar.run()
        tar.waitUntilExit()
        try await expectInstalled(try await inHome(["plugins", "install", "tune.tar.gz"], sandbox), in: sandbox)
    }

    @Test func aBrokenManifestIsRefusedNamingTheField() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "src/tune", permissions: "write = [\"relative\"]")
        let result = try await inHome(["plugins", "install", "src/tune"], sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("plugin.toml: field 'permissions.write' must be an absolute path or start with ~/"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + Self.userFolder))
        let nothing = try await inHome(["plugins", "install", "nowhere"], sandbox)
        #expect(nothing.status == 1 && nothing.stderr.contains("nowhere: not a plugin folder, a git repository or a .tar.gz archive"), "\(nothing)")
    }

    /// Installing a newer version over an older one replaces it; asking for more, it waits for a new grant.
    @Test func anUpdateAskingForMoreWaitsForANewGrant() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "v1/tune")
        _ = try await inHome(["plugins", "install", "v1/tune"], sandbox)
        #expect(try await inHome(["plugins", "allow", "tune"], sandbox).status == 0)
        try Self.writePlugin(in: sandbox, at: "v2/tune", version: "2.0.0", permissions: "read = [\"/etc/hosts\"]\nenv = [\"LANG\"]")
        let updated = try await inHome(["plugins", "install", "v2/tune"], sandbox)
        #expect(updated.stdout.contains("installed plugin 'tune' 2.0.0") && updated.stdout.contains("beyond its earlier grant: env LANG"), "\(updated)")
        let used = try await inHome(["-e", "task(function() local ok, err = pcall(function() return services.tune:ping() end) print(ok, type(err) == 'table' and err.message or err) end)"], sandbox)
        #expect(used.stdout.contains("asks for more than was granted (env LANG)"), "\(used)")
    }

    /// Makes `name`.tar.gz of the folder `pack/tune`.
    static func archive(_ sandbox: Sandbox, _ name: String) throws {
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        tar.arguments = ["-czf", sandbox.path + "/\(name).tar.gz", "-C", sandbox.path + "/pack", "tune"]
        try tar.run()
        tar.waitUntilExit()
    }

    /// A plugin holds only files and folders: an archive or a folder with a FIFO, a link or a
    /// device is refused naming the entry (it used to hang on the FIFO for ever, leaving an empty
    /// plugin folder), and the version installed before stays as it was.
    @Test func anEntryThatIsNotAFileOrAFolderIsRefusedAndNothingIsLeft() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "v1/tune")
        #expect(try await inHome(["plugins", "install", "v1/tune"], sandbox).status == 0)
        try Self.writePlugin(in: sandbox, at: "pack/tune", version: "2.0.0")
        #expect(mkfifo(sandbox.path + "/pack/tune/fifo", 0o644) == 0)
        try Self.archive(sandbox, "fifo")
        let fromArchive = try await inHome(["plugins", "install", "fifo.tar.gz"], sandbox, timeLimit: 30)
        #expect(fromArchive.status == 1 && !fromArchive.timedOut, "\(fromArchive)")
        #expect(fromArchive.stderr.contains("fifo.tar.gz: tune/fifo is a FIFO: a plugin holds only regular files and folders; nothing was installed"), "\(fromArchive)")
        let fromFolder = try await inHome(["plugins", "install", "pack/tune"], sandbox, timeLimit: 30)
        #expect(fromFolder.status == 1 && fromFolder.stderr.contains("pack/tune: fifo is a FIFO"), "\(fromFolder)")
        unlink(sandbox.path + "/pack/tune/fifo")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/pack/tune/link", withDestinationPath: "/etc/hostname")
        try Self.archive(sandbox, "link")
        let withLink = try await inHome(["plugins", "install", "link.tar.gz"], sandbox, timeLimit: 30)
        #expect(withLink.status == 1 && withLink.stderr.contains("link.tar.gz: tune/link is a symbolic link"), "\(withLink)")
        unlink(sandbox.path + "/pack/tune/link")
        // A hard link to a secret of the user's would copy the secret into the plugin.
        try sandbox.write("secret.txt", "TOPSECRET\n")
        #expect(link(sandbox.path + "/secret.txt", sandbox.path + "/pack/tune/notes.txt") == 0)
        let withHardLink = try await inHome(["plugins", "install", "pack/tune"], sandbox, timeLimit: 30)
        #expect(withHardLink.status == 1 && withHardLink.stderr.contains("pack/tune: notes.txt is a hard link (a file with 2 names)"), "\(withHardLink)")
        let plugins = sandbox.path + "/.local/share/crescent/plugins"
        #expect(try FileManager.default.contentsOfDirectory(atPath: plugins) == ["tune"], "nothing left beside it")
        let manifest = try String(contentsOfFile: plugins + "/tune/plugin.toml", encoding: .utf8)
        #expect(manifest.contains("version = \"1.0.0\""), "the version installed before stays")
    }

    /// A small archive may unpack to gigabytes: the files of a plugin hold at most 100 MiB, and
    /// it holds at most 10,000 entries; past either, nothing is unpacked into the plugin folder.
    @Test func anArchivePastTheBoundsIsRefusedBeforeItIsUnpacked() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "pack/tune")
        let big = open(sandbox.path + "/pack/tune/big.bin", O_CREAT | O_WRONLY, 0o644)
        #expect(ftruncate(big, 101 << 20) == 0)
        close(big)
        try Self.archive(sandbox, "big")
        let large = try await inHome(["plugins", "install", "big.tar.gz"], sandbox, timeLimit: 60)
        #expect(large.status == 1 && large.stderr.contains("big.tar.gz: its files hold more than 100 MiB, the most a plugin may hold; nothing was installed"), "\(large)")
        unlink(sandbox.path + "/pack/tune/big.bin")
        try FileManager.default.createDirectory(atPath: sandbox.path + "/pack/tune/many", withIntermediateDirectories: true)
        for index in 0..<10_000 { close(open(sandbox.path + "/pack/tune/many/\(index)", O_CREAT | O_WRONLY, 0o644)) }
        try Self.archive(sandbox, "many")
        let many = try await inHome(["plugins", "install", "many.tar.gz"], sandbox, timeLimit: 60)
        #expect(many.status == 1 && many.stderr.contains("many.tar.gz: holds more than 10000 files and folders"), "\(many)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/.local/share/crescent/plugins/tune"))
    }

    /// Install's messages name what the user gave (the archive, the folder) and the fix, never the
    /// temporary copy nor a Foundation error code (second permissions attack D11).
    @Test func installErrorsNameTheSourceNotTheTemporaryCopy() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "pack/tune")
        let manifest = sandbox.path + "/pack/tune/plugin.toml"
        let text = try String(contentsOfFile: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "services = [\"tune\"]", with: "services = [\"store\"]")
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        try Self.archive(sandbox, "builtin")
        let clash = try await inHome(["plugins", "install", "builtin.tar.gz"], sandbox)
        #expect(clash.status == 1, "\(clash)")
        #expect(clash.stderr.contains("crescent: builtin.tar.gz: tune/plugin.toml: field 'services': service 'store' is already provided by the builtin plugins (choose another service name)"), "\(clash)")
        let fromFolder = try await inHome(["plugins", "install", "pack/tune"], sandbox)
        #expect(fromFolder.stderr.contains("crescent: pack/tune/plugin.toml: field 'services': service 'store'"), "\(fromFolder)")
        try text.write(toFile: manifest, atomically: true, encoding: .utf8)
        // A file 2,000 folders deep: unpacked, its copy into the plugin folder went past PATH_MAX.
        var folder = open(sandbox.path + "/pack/tune", O_RDONLY | O_DIRECTORY)
        for _ in 0..<2_000 {
            #expect(mkdirat(folder, "d", 0o755) == 0)
            let inner = openat(folder, "d", O_RDONLY | O_DIRECTORY)
            close(folder)
            folder = inner
        }
        close(openat(folder, "deep.txt", O_CREAT | O_WRONLY, 0o644))
        close(folder)
        try Self.archive(sandbox, "deep")
        for source in ["deep.tar.gz", "pack/tune"] {
            let deep = try await inHome(["plugins", "install", source], sandbox, timeLimit: 60)
            #expect(deep.status == 1, "\(deep)")
            #expect(deep.stderr.hasPrefix("crescent: \(source): "), "\(deep)")
            #expect(deep.stderr.contains("is nested too deep (a path inside a plugin holds at most 1024 bytes); nothing was installed"), "\(deep)")
            for leak in ["crescent-install-", "NSCocoaErrorDomain"] {
                #expect(!deep.stderr.contains(leak) && !clash.stderr.contains(leak), "\(leak): \(deep) \(clash)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/.local/share/crescent/plugins/tune"))
    }

    /// Third permissions attack, R: `plugins allow --plugin pc1 pc1` of a plugin whose manifest
    /// is broken said "no plugin 'pc1' found", though `crescent plugins` listed it with its error.
    @Test func allowOfABrokenPluginShowsItsManifestError() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("pc1/plugin.toml", """
            name = "pc1"
            version = "0.1.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = []
            services = ["pc1"]
            """)
        for folder in ["pc1", "pc1/", sandbox.path + "/pc1"] {
            let allowed = try await inHome(["plugins", "allow", "--plugin", folder, "pc1"], sandbox, stdin: "")
            #expect(allowed.status == 1, "\(folder): \(allowed)")
            #expect(allowed.stderr.contains("plugin.toml: field 'command' must be a non-empty array of strings"), "\(folder): \(allowed)")
            #expect(!allowed.stderr.contains("no plugin 'pc1' found"), "\(folder): \(allowed)")
        }
    }

    /// Third permissions attack, R: of two `plugins remove` of one plugin at once, the one that
    /// lost said "cannot remove ...: The file doesn't exist." or "You don't have permission."
    /// (it deleted files the other was deleting). One removes it whole; the other says it is gone.
    @Test func twoRemovesAtOnceEndWithOneRemovedAndTheOtherSayingSo() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "src/tune")
        // Enough files that deleting them takes a while, so the two removes overlap.
        for index in 0..<1_500 { try sandbox.write("src/tune/data/f\(index).txt", "x") }
        for round in 0..<4 {
            let installed = try await inHome(["plugins", "install", "src/tune"], sandbox)
            #expect(installed.status == 0, "\(round): \(installed)")
            async let first = inHome(["plugins", "remove", "tune"], sandbox)
            async let second = inHome(["plugins", "remove", "tune"], sandbox)
            let results = try await [first, second]
            #expect(results.filter { $0.status == 0 }.count == 1, "\(round): \(results)")
            for result in results where result.status != 0 {
                #expect(result.status == 1 && (result.stderr.contains("no plugin 'tune' is installed")
                    || result.stderr.contains("plugin 'tune' was removed from \(sandbox.path)/.local/share/crescent/plugins by another command meanwhile")),
                        "\(round): \(result)")
                #expect(!result.stderr.contains("cannot remove"), "\(round): \(result)")
            }
            #expect(!FileManager.default.fileExists(atPath: sandbox.path + Self.userFolder), "\(round)")
            let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.path + "/.local/share/crescent/plugins")
            #expect(left.isEmpty, "\(round): \(left)")
        }
    }

    /// A file 1,006 bytes deep inside a plugin (five folders of 200 bytes), within the bound of
    /// 1,024, failed to install from a folder and an archive with "File exists" (the copy cut
    /// its path past 1,024 bytes with the folder in front). It installs, and removes.
    @Test func aPathWithinTheBoundInstallsFromAFolderAndAnArchive() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "pack/tune")
        let inner = ["d", "e", "f", "g", "h"].map { String(repeating: $0, count: 200) }.joined(separator: "/") + "/x"
        #expect(inner.utf8.count == 1_006)
        try sandbox.write("pack/tune/" + inner, "deep")
        try Self.archive(sandbox, "long")
        for source in ["pack/tune", "long.tar.gz"] {
            let installed = try await inHome(["plugins", "install", source], sandbox)
            #expect(installed.status == 0 && installed.stdout.contains("installed plugin 'tune' 1.0.0"), "\(source): \(installed)")
            let copied = try? String(contentsOfFile: sandbox.path + Self.userFolder + "/" + inner, encoding: .utf8)
            #expect(copied == "deep", "\(source)")
            let removed = try await inHome(["plugins", "remove", "tune"], sandbox)
            #expect(removed.status == 0, "\(source): \(removed)")
            let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.path + "/.local/share/crescent/plugins")
            #expect(left.isEmpty, "\(source): \(left)")
        }
    }

    /// An archive with an absolute entry, with two plugins, or with a plugin's folder and a file
    /// beside it was refused as "holds no plugin.toml". Each is refused naming what it holds.
    @Test func anArchiveThatIsNotOnePluginFolderIsRefusedNamingWhy() async throws {
        let sandbox = try Sandbox()
        try Self.writePlugin(in: sandbox, at: "pack/tune")
        try Self.writePlugin(in: sandbox, at: "pack/other")
        try sandbox.write("pack/README", "beside")
        try sandbox.write("outside.txt", "absolute")
        func archive(_ name: String, _ entries: [String], absolute: Bool = false) throws {
            let tar = Process()
            tar.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
            tar.arguments = ["-czf", sandbox.path + "/\(name).tar.gz"] + (absolute ? ["-P"] : []) + ["-C", sandbox.path + "/pack"] + entries
            try tar.run()
            tar.waitUntilExit()
        }
        try archive("abs", ["tune", sandbox.path + "/outside.txt"], absolute: true)
        try archive("twotop", ["tune", "other"])
        try archive("beside", ["tune", "README"])
        let expected = [
            "abs": "abs.tar.gz: \(sandbox.path)/outside.txt is an absolute path: an archive's entries are paths inside the plugin "
                + "(its folder, then its files); nothing was installed",
            "twotop": "twotop.tar.gz: holds 2 plugins (other, tune): one install takes one plugin; install each from a folder or "
                + "archive of its own; nothing was installed",
            "beside": "beside.tar.gz: holds the plugin folder tune and beside it README: a plugin's files belong inside its folder "
                + "(or plugin.toml at the top, with no folder); nothing was installed",
        ]
        for (name, message) in expected {
            let result = try await inHome(["plugins", "install", name + ".tar.gz"], sandbox)
            #expect(result.status == 1 && result.stderr.contains(message), "\(name): \(result)")
            #expect(!result.stderr.contains("holds no plugin.toml"), "\(name): \(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/.local/share/crescent/plugins/tune"))
    }
}
