import Foundation
import Testing

/// Runs `crescent ARGUMENTS` in `sandbox` with HOME there (so the data folder, the grants file
/// and the user's plugin folder are the sandbox's), plus `environment`.
func inHome(_ arguments: [String], _ sandbox: Sandbox, directory: String? = nil, environment: [String: String?] = [:],
            stdin: String? = nil, timeLimit: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) async throws -> RunResult {
    var variables = environment
    variables["HOME"] = sandbox.path
    variables["XDG_DATA_HOME"] = .some(nil)
    return try await crescent(arguments, in: sandbox, directory: directory, stdin: stdin, environment: variables, timeLimit: timeLimit,
                              sourceLocation: sourceLocation)
}

/// DESIGN.md (Plugins › Permissions): the `[permissions]` table, `plugin check` explaining it,
/// grants in DATA/plugin-grants.toml with their hash, the refusal naming `crescent plugins allow
/// NAME`, and an update that asks for more refused until allowed again.
@Suite struct PluginGrantTests {
    static func manifest(_ permissions: String) -> String {
        """
        name = "music"
        version = "1.0.0"
        crescent = ">=0.1.0"
        kind = "lua"
        services = ["music"]

        [permissions]
        \(permissions)
        """
    }

    static let main = """
        local s = service("music", "Plays music.")
        s:method("ping", {}, "string", "Answers pong.", function() return "pong" end)
        """

    func sandbox(_ permissions: String) throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/music/plugin.toml", Self.manifest(permissions))
        try sandbox.write("plugins/music/main.lua", Self.main)
        return sandbox
    }

    @Test(arguments: [
        ("read = [\"Music\"]", "field 'permissions.read' must be an absolute path or start with ~/, got \"Music\""),
        ("net = [\"example.com\"]", "field 'permissions.net' must be host:port with a port from 1 to 65535, got \"example.com\""),
        ("net = [\"example.com:99999\"]", "field 'permissions.net' must be host:port with a port from 1 to 65535"),
        ("exec = [\"git status\"]", "field 'permissions.exec' must be a program's name or absolute path (no spaces, no arguments)"),
        ("env = [\"MY-VAR\"]", "field 'permissions.env' must be an environment variable's name"),
        ("native = \"yes\"", "field 'permissions.native' must be true or false, got string"),
        ("memory_mib = 0", "field 'permissions.memory_mib' must be a whole number of MiB from 8 to 65536 (below 8 MiB no interpreter starts: python3 needs 5), got 0"),
        ("colour = 1", "field 'permissions.colour' is not a permission (permissions: collections, env, exec, memory_mib, native, net, read, write)"),
        ("read = [\"/a\", \"/a\"]", "field 'permissions.read' names \"/a\" twice"),
        // Fourth permissions attack Y1: characters that show as nothing passed as written.
        ("read = [\"/a\\u200Bb\"]", "field 'permissions.read' holds the invisible character U+200B"),
        ("write = [\"/a\\u061Cb\"]", "field 'permissions.write' holds the invisible character U+061C"),
        ("read = [\"/a\\u2028b\"]", "field 'permissions.read' holds the invisible character U+2028"),
        // Each was taken and shown as a grant ("may run * (found on ...)", "may run /", "may run
        // /lib64/ld-linux-x86-64.so.2", which runs any program); `memory_mib = 1` let nothing start.
        ("memory_mib = 1", "field 'permissions.memory_mib' must be a whole number of MiB from 8 to 65536 (below 8 MiB no interpreter starts: python3 needs 5), got 1"),
        ("memory_mib = 7", "field 'permissions.memory_mib' must be a whole number of MiB from 8 to 65536"),
        ("exec = [\"*\"]", "field 'permissions.exec' must be one program's name, of letters, digits, '_', '+', '.' and '-' (no pattern such as *: each program is named), got \"*\""),
        ("exec = [\".\"]", "field 'permissions.exec' must be one program's name"),
        ("exec = [\"..\"]", "field 'permissions.exec' must be one program's name"),
        ("exec = [\"/usr/bin/../bin/sh\"]", "field 'permissions.exec' must be an absolute path without . or .."),
        ("exec = [\"/\"]", "field 'permissions.exec' must name a program, not a folder or another kind of file (a folder would let the plugin run and read everything beneath it)"),
        ("exec = [\"/usr/bin\"]", "field 'permissions.exec' must name a program, not a folder"),
        ("exec = [\"/bin/ls/\"]", "field 'permissions.exec' must name a program, not a folder"),
        // The last attack: `inf` was reported as "got null", and a program named `-rf` was taken.
        ("memory_mib = inf", "field 'permissions.memory_mib' must be a whole number of MiB from 8 to 65536 (below 8 MiB no interpreter starts: python3 needs 5), got inf (not a number of MiB)"),
        ("memory_mib = -inf", "field 'permissions.memory_mib' must be a whole number of MiB from 8 to 65536 (below 8 MiB no interpreter starts: python3 needs 5), got -inf (not a number of MiB)"),
        ("exec = [\"-rf\"]", "field 'permissions.exec' must be a program's name, which cannot start with '-' (a program's arguments are not part of the entry), got \"-rf\""),
        ("exec = [\"/lib64/ld-linux-x86-64.so.2\"]", "field 'permissions.exec' names the dynamic loader, which runs any program it is given (ld.so PROGRAM), so it would grant every program; name the programs the plugin runs instead"),
    ])
    func aBrokenPermissionsTableIsRefusedNamingTheField(permissions: String, message: String) async throws {
        let sandbox = try self.sandbox(permissions)
        let result = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("plugins/music/plugin.toml: " + message), "\(result)")
    }

    @Test func checkExplainsEachEntry() async throws {
        let sandbox = try self.sandbox("""
            read = ["~/Music"]
            write = ["~/Music/playlists"]
            net = ["127.0.0.1:6600", "*:443"]
            exec = ["git"]
            env = ["LANG"]
            native = true
            memory_mib = 32
            """)
        let result = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(result.status == 0, "\(result)")
        for line in ["read ~/Music: may read the files in ~/Music", "write ~/Music/playlists: may create, change and delete",
                     "net 127.0.0.1:6600: may connect to 127.0.0.1:6600", "net *:443: may connect to any host on port 443",
                     "name lookups over TCP port 53 of any host too; no UDP at all",
                     "exec git: may run git", "env LANG: may read the environment variable LANG",
                     "native: may load C modules (Lua): FULL ACCESS", "memory_mib 32: its memory limit in MiB",
                     "grant: not granted: its services are not started (run crescent plugins allow music"] {
            #expect(result.stdout.contains(line), "\(line)\n\(result)")
        }
    }

    /// Not granted: touching the service raises `permission` naming `crescent plugins allow`;
    /// `allow` shows what it asks and records it with its hash; then it runs; an update asking
    /// for more is refused until allowed again; `crescent plugins` shows permissions and grant.
    @Test func aPluginRunsOnlyOnceGrantedAndAgainAfterAnUpdateAsksForMore() async throws {
        let sandbox = try self.sandbox("read = [\"~/Music\"]")
        let script = "task(function() print(pcall(function() return services.music:ping() end)) end)"
        let refused = try await inHome(["-e", script], sandbox)
        #expect(refused.stdoutLines.first?.hasPrefix("false\t(command line):1: services.music cannot start: permission: plugin 'music' asks for permissions not granted (read ~/Music): run `crescent plugins allow music`") == true, "\(refused)")
        #expect(refused.stderr.contains("plugin 'music' asks for permissions not granted"), "the log warns: \(refused)")

        let listed = try await inHome(["plugins"], sandbox)
        #expect(listed.stdoutLines.contains { $0.hasPrefix("music") && $0.contains("read ~/Music") && $0.contains("not granted") }, "\(listed)")

        let allowed = try await inHome(["plugins", "allow", "music"], sandbox)
        #expect(allowed.status == 0, "\(allowed)")
        #expect(allowed.stdout.contains("read ~/Music: may read the files in ~/Music"), "\(allowed)")
        #expect(allowed.stdout.contains("granted: plugin 'music' 1.0.0 (recorded in \(sandbox.path)/.local/share/crescent/plugin-grants.toml)"), "\(allowed)")
        let grants = try String(contentsOfFile: sandbox.path + "/.local/share/crescent/plugin-grants.toml", encoding: .utf8)
        #expect(grants.contains("[music]") && grants.contains("read = [\"~/Music\"]"), "\(grants)")
        #expect(grants.range(of: #"hash = "[0-9a-f]{64}""#, options: .regularExpression) != nil, "\(grants)")

        let granted = try await inHome(["-e", script], sandbox)
        #expect(granted.stdoutLines == ["true\tpong\tnil"], "\(granted)")
        let listedAgain = try await inHome(["plugins"], sandbox)
        #expect(listedAgain.stdoutLines.contains { $0.hasPrefix("music") && $0.contains(" granted ") }, "\(listedAgain)")

        // The update asks for an environment variable too.
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("read = [\"~/Music\"]\nenv = [\"LANG\"]").replacingOccurrences(of: "1.0.0", with: "1.1.0"))
        let updated = try await inHome(["-e", script], sandbox)
        #expect(updated.stdoutLines.first?.contains("cannot start: permission: plugin 'music' 1.1.0 asks for more than was granted (env LANG): run `crescent plugins allow music`") == true, "\(updated)")
        let listedUpdate = try await inHome(["plugins"], sandbox)
        #expect(listedUpdate.stdoutLines.contains { $0.hasPrefix("music") && $0.contains("asks for more than granted") }, "\(listedUpdate)")
        let allowedAgain = try await inHome(["plugins", "allow", "music"], sandbox)
        #expect(allowedAgain.stdout.contains("beyond its earlier grant: env LANG"), "\(allowedAgain)")
        let afterUpdate = try await inHome(["-e", script], sandbox)
        #expect(afterUpdate.stdoutLines == ["true\tpong\tnil"], "\(afterUpdate)")

        // Asking for less than granted needs no new grant; a grant edited by hand grants nothing.
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("env = [\"LANG\"]"))
        #expect(try await inHome(["-e", script], sandbox).stdoutLines == ["true\tpong\tnil"])
        // A folder inside a granted one, with or without a trailing /, is less too (the second
        // permissions attack, D3: it was "asks for more"); a sibling whose name only starts alike
        // is not.
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("read = [\"~/Music/playlists/\"]"))
        #expect(try await inHome(["-e", script], sandbox).stdoutLines == ["true\tpong\tnil"])
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("read = [\"~/Musicals\"]"))
        #expect(try await inHome(["-e", script], sandbox).stdoutLines.first?.contains("asks for more than was granted (read ~/Musicals)") == true)
        let edited = try String(contentsOfFile: sandbox.path + "/.local/share/crescent/plugin-grants.toml", encoding: .utf8)
            .replacingOccurrences(of: "env = [\"LANG\"]", with: "env = [\"LANG\", \"TOKEN\"]")
        try sandbox.write(".local/share/crescent/plugin-grants.toml", edited)
        let tampered = try await inHome(["-e", script], sandbox)
        #expect(tampered.stdoutLines.first?.contains("cannot start: permission: plugin 'music' asks for permissions not granted") == true, "\(tampered)")
    }

    /// Fourth permissions attack X8: "asks for less" compared the paths as written, so an update
    /// adding `~/Music/../secret` or a link under a granted folder (`~/Music/root -> /`) was
    /// granted without a question, and the plugin then read everything. Such an update asks
    /// again; a real folder inside the grant is still less.
    @Test func anUpdateReachingOutOfAGrantedFolderByDotDotOrALinkAsksAgain() async throws {
        let sandbox = try self.sandbox("read = [\"~/Music\"]")
        try sandbox.write("Music/playlists/a.m3u", "a")
        try sandbox.write("secret/key.txt", "TOPSECRET")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/Music/root", withDestinationPath: "/")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/Music/keys", withDestinationPath: sandbox.path + "/secret")
        let script = "task(function() print(pcall(function() return services.music:ping() end)) end)"
        #expect(try await inHome(["plugins", "allow", "music"], sandbox).status == 0)
        for asked in ["~/Music/../secret", "~/Music/./../secret", "~/Music/root", "~/Music/root/etc", "~/Music/keys"] {
            try sandbox.write("plugins/music/plugin.toml", Self.manifest("read = [\"~/Music\", \"\(asked)\"]").replacingOccurrences(of: "1.0.0", with: "1.0.1"))
            let updated = try await inHome(["-e", script], sandbox)
            #expect(updated.stdoutLines.first?.contains("asks for more than was granted (read \(asked)") == true, "\(asked): \(updated)")
            let listed = try await inHome(["plugins"], sandbox)
            #expect(listed.stdoutLines.contains { $0.hasPrefix("music") && $0.contains("asks for more than granted") }, "\(asked): \(listed)")
        }
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("read = [\"~/Music/playlists\"]"))
        #expect(try await inHome(["-e", script], sandbox).stdoutLines == ["true\tpong\tnil"])
    }

    /// Fourth permissions attack X8, its third form: the user granted `~/Music/lnk`, shown as
    /// leading to `~/Music/sub`; the link was re-pointed to a secret folder later, and the next
    /// run read it with no question (the grant held the path, not what the user saw). The grant
    /// records where each path led and every start compares: re-pointed within it is less,
    /// anywhere else asks again, naming both places.
    @Test func aGrantedLinkRePointedSinceAsksAgain() async throws {
        let sandbox = try self.sandbox("read = [\"~/Music/lnk\"]")
        let real = URL(fileURLWithPath: sandbox.path).resolvingSymlinksInPath().path
        try sandbox.write("Music/sub/deeper/a.m3u", "a")
        try sandbox.write("secret/key.txt", "TOPSECRET")
        let link = sandbox.path + "/Music/lnk"
        func point(to target: String) throws {
            try? FileManager.default.removeItem(atPath: link)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: sandbox.path + "/" + target)
        }
        try point(to: "Music/sub")
        let script = "task(function() print(pcall(function() return services.music:ping() end)) end)"
        let allowed = try await inHome(["plugins", "allow", "music"], sandbox)
        #expect(allowed.stdout.contains("read ~/Music/lnk (that is \(real)/Music/sub)"), "\(allowed)")
        #expect(try await inHome(["-e", script], sandbox).stdoutLines == ["true\tpong\tnil"])
        try point(to: "Music/sub/deeper")
        #expect(try await inHome(["-e", script], sandbox).stdoutLines == ["true\tpong\tnil"], "within what was granted")
        try point(to: "secret")
        let moved = try await inHome(["-e", script], sandbox)
        #expect(moved.stdoutLines.first?.contains("asks for more than was granted (read ~/Music/lnk (leads to \(real)/secret now; granted when it led to \(real)/Music/sub))") == true, "\(moved)")
        let listed = try await inHome(["plugins"], sandbox)
        #expect(listed.stdoutLines.contains { $0.hasPrefix("music") && $0.contains("asks for more than granted") }, "\(listed)")
        // Allowed again, it holds for the new place.
        #expect(try await inHome(["plugins", "allow", "music"], sandbox).status == 0)
        #expect(try await inHome(["-e", script], sandbox).stdoutLines == ["true\tpong\tnil"])
    }

    /// Fourth permissions attack Z5: raising `memory_mib` in an update (64 -> 65536 made a process
    /// plugin's RLIMIT_DATA 64 GiB) was not asking for more. It asks again; lowering it does not.
    @Test func anUpdateRaisingItsMemoryLimitAsksAgain() async throws {
        let sandbox = try self.sandbox("read = [\"~/Music\"]\nmemory_mib = 32")
        let script = "task(function() print(pcall(function() return services.music:ping() end)) end)"
        #expect(try await inHome(["plugins", "allow", "music"], sandbox).status == 0)
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("read = [\"~/Music\"]\nmemory_mib = 16"))
        #expect(try await inHome(["-e", script], sandbox).stdoutLines == ["true\tpong\tnil"], "less needs nothing")
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("read = [\"~/Music\"]\nmemory_mib = 128"))
        let raised = try await inHome(["-e", script], sandbox)
        #expect(raised.stdoutLines.first?.contains("asks for more than was granted (memory_mib 128 (granted 32))") == true, "\(raised)")
        #expect(try await inHome(["plugins", "allow", "music"], sandbox).status == 0)
        #expect(try await inHome(["-e", script], sandbox).stdoutLines == ["true\tpong\tnil"])
    }

    /// Fourth permissions attack X11: a grant was a plain hash of what was granted, so a grants
    /// file made anywhere granted everywhere: a project shipping `data/plugin-grants.toml`, run
    /// with `--data-dir data`, had its plugin read the user's files with no question. Grants are
    /// signed with the user's own key and name the plugin's folder: a file made by another user
    /// (another HOME, so another key) grants nothing, nor does the user's own grant copied into
    /// another project; the user's own grant holds.
    @Test func aGrantsFileBroughtFromElsewhereGrantsNothing() async throws {
        let project = try Sandbox()
        try project.write("secret/key.txt", "TOPSECRET")
        let secret = URL(fileURLWithPath: project.path).resolvingSymlinksInPath().path + "/secret"
        try project.write("app/plugins/music/plugin.toml", Self.manifest("read = [\"\(secret)\"]"))
        try project.write("app/plugins/music/main.lua", Self.main)
        let script = "task(function() print(pcall(function() return services.music:ping() end)) end)"
        let app = project.path + "/app"
        // The attacker: the same project (same folder), another user's HOME.
        let attacker = try Sandbox()
        let elsewhere: [String: String?] = ["HOME": attacker.path, "XDG_DATA_HOME": nil]
        let made = try await crescent(["plugins", "allow", "--data-dir", "data", "music"], in: project, directory: app, environment: elsewhere)
        #expect(made.status == 0, "\(made)")
        let shipped = try await inHome(["--data-dir", "data", "-e", script], project, directory: app)
        #expect(shipped.stdoutLines.first?.contains("asks for permissions not granted") == true, "\(shipped)")
        #expect(try await inHome(["--data-dir", "data", "plugins"], project, directory: app).stdoutLines
            .contains { $0.hasPrefix("music") && $0.contains("not granted") })
        // The user's own grant holds...
        #expect(try await inHome(["plugins", "allow", "--data-dir", "data", "music"], project, directory: app).status == 0)
        #expect(try await inHome(["--data-dir", "data", "-e", script], project, directory: app).stdoutLines == ["true\tpong\tnil"])
        // ...for that plugin folder only: copied with the grants into another project, it asks.
        try FileManager.default.copyItem(atPath: app, toPath: project.path + "/clone")
        let copied = try await inHome(["--data-dir", "data", "-e", script], project, directory: project.path + "/clone")
        #expect(copied.stdoutLines.first?.contains("asks for permissions not granted") == true, "\(copied)")
    }

    /// Fourth permissions attack X3: a plugin gets the crescent.toml section of its name as its
    /// settings, so one named `store` (asking nothing) read `[store] path`, PostgreSQL password
    /// and all; one named `standard` was listed beside the builtin plugin. Such names are refused.
    @Test(arguments: ["store", "standard", "plugins", "http"])
    func aPluginNamedAsCrescentsOwnPartsIsRefused(name: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("crescent.toml", "[store]\npath = \"postgres://u:SECRETPW@127.0.0.1:1/db\"\n")
        try sandbox.write("plugins/spy/plugin.toml", """
            name = "\(name)"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["storespy"]

            [settings.path]
            type = "string"
            """)
        try sandbox.write("plugins/spy/main.lua", """
            local s = service("storespy", "Spies.")
            s:method("hi", {}, "string", "Answers its settings.", function() return tostring(settings.path) end)
            """)
        let used = try await inHome(["-e", "task(function() print(pcall(function() return services.storespy:hi() end)) end)"], sandbox)
        #expect(!used.stdout.contains("SECRETPW") && !used.stderr.contains("SECRETPW"), "\(used)")
        #expect(used.stdout.hasPrefix("false"), "\(used)")
        let listed = try await inHome(["plugins"], sandbox)
        #expect(listed.stdout.contains("field 'name' is '\(name)', a name crescent uses itself"), "\(listed)")
    }

    /// Fourth permissions attack X10: a manifest listing 10,000 services (well under its 1 MiB)
    /// made every run in its folder take 18 s, even one touching no plugin: the check of its
    /// names was quadratic.
    @Test func aManifestListingManyServicesIsCheckedQuickly() async throws {
        let sandbox = try Sandbox()
        let names = (0..<10_000).map { "\"s\($0)\"" }.joined(separator: ", ")
        try sandbox.write("plugins/bs/plugin.toml", """
            name = "bs"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = [\(names)]
            """)
        try sandbox.write("plugins/bs/main.lua", "")
        let result = try await inHome(["-e", "print(1)"], sandbox)
        #expect(result.status == 0 && result.stdout == "1\n", "\(result)")
        // 0.1 s alone, 7 s among the other suites on the loaded 2-core machine; 17 s alone before.
        #expect(result.elapsed < 12, "\(result.elapsed) s")
    }

    @Test func allowOfAnUnknownPluginSaysSo() async throws {
        let sandbox = try self.sandbox("read = [\"/etc/hosts\"]")
        let result = try await inHome(["plugins", "allow", "nosuch"], sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("no plugin 'nosuch' found (crescent plugins lists the plugins found)"), "\(result)")
    }

    /// Requiring a builtin service that reaches past every grant (http, feeds, session), or one
    /// bounded by them (process, files: PluginServiceAccessTests), is asked like a permission.
    @Test(arguments: [("http", "may connect to any host through the http service"),
                      ("session", "may register users, log them in and out and try their passwords through the session service")])
    func requiringAPowerfulServiceNeedsAGrant(service: String, explained: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/runner/plugin.toml", """
            name = "runner"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["runner"]
            requires = ["\(service)"]
            """)
        try sandbox.write("plugins/runner/main.lua", "service('runner', 'r')")
        let result = try await inHome(["-e", "local ok, err = pcall(function() return services.runner end) print(ok, type(err) == 'table' and err.message or err)"], sandbox)
        #expect(result.stdout.contains("plugin 'runner' asks for permissions not granted (requires \(service))"), "\(result)")
        let check = try await inHome(["plugin", "check", "plugins/runner"], sandbox)
        #expect(check.stdout.contains("requires \(service): \(explained)"), "\(check)")
    }

    /// A granted path that does not lead where it reads (`..`, a link) is shown with where it
    /// really leads: the prompt the user says y to names the real folder.
    @Test func checkShowsWhereAGrantedPathReallyLeads() async throws {
        let sandbox = try self.sandbox("read = [\"~/allowed/../secret\", \"~/link\"]\nwrite = [\"~/allowed/../../elsewhere\"]")
        let home = sandbox.path
        try sandbox.write("secret/s.txt", "TOPSECRET\n")
        try sandbox.write("allowed/a.txt", "a\n")
        try FileManager.default.createSymbolicLink(atPath: home + "/link", withDestinationPath: home + "/secret")
        let parent = (home as NSString).deletingLastPathComponent
        let result = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        for line in ["read ~/allowed/../secret (that is \(home)/secret): may read the files in \(home)/secret (and below it)",
                     "read ~/link (that is \(home)/secret): may read the files in \(home)/secret",
                     "write ~/allowed/../../elsewhere (that is \(parent)/elsewhere): may create, change and delete the files in \(parent)/elsewhere"] {
            #expect(result.stdout.contains(line), "\(line)\n\(result)")
        }
        let allowed = try await inHome(["plugins", "allow", "music"], sandbox)
        #expect(allowed.stdout.contains("read ~/allowed/../secret (that is \(home)/secret)"), "\(allowed)")
    }

    /// `main` is read before any permission applies: it must lie inside the plugin folder, and
    /// the manifest must not be a link, or the host would read (and show in an error) any file.
    @Test(arguments: ["\"../../secret.txt\"", "\"/SANDBOX/secret.txt\"", "\"link.lua\""])
    func aMainOutsideThePluginFolderIsRefused(main: String) async throws {
        let sandbox = try self.sandbox("")
        try sandbox.write("secret.txt", "TOKEN ghp_SuperSecret123\n")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/plugins/music/link.lua", withDestinationPath: sandbox.path + "/secret.txt")
        let manifest = Self.manifest("").replacingOccurrences(of: "kind = \"lua\"", with: "kind = \"lua\"\nmain = \(main.replacingOccurrences(of: "/SANDBOX", with: sandbox.path))")
        try sandbox.write("plugins/music/plugin.toml", manifest)
        let result = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("plugins/music/plugin.toml: field 'main' ") || result.stderr.contains("plugins/music/plugin.toml: field 'main' "), "\(result)")
        #expect(!result.stdout.contains("ghp_SuperSecret123") && !result.stderr.contains("ghp_SuperSecret123"), "\(result)")
        let used = try await inHome(["-e", "print(pcall(function() return services.music end))"], sandbox)
        #expect(!used.stdout.contains("ghp_SuperSecret123") && !used.stderr.contains("ghp_SuperSecret123"), "\(used)")
        #expect(used.stdout.contains("field 'main'") || used.stderr.contains("field 'main'"), "\(used)")
    }

    @Test func aManifestThatIsALinkIsRefused() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("secret.txt", "TOPSECRET\n")
        try FileManager.default.createDirectory(atPath: sandbox.path + "/plugins/linked", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/plugins/linked/plugin.toml", withDestinationPath: sandbox.path + "/secret.txt")
        let result = try await inHome(["plugin", "check", "plugins/linked"], sandbox)
        #expect(result.status == 1, "\(result)")
        #expect((result.stdout + result.stderr).contains("plugins/linked/plugin.toml: cannot use it as the plugin's manifest: it is a symbolic link, not a regular file"), "\(result)")
        #expect(!result.stdout.contains("TOPSECRET") && !result.stderr.contains("TOPSECRET"), "\(result)")
    }

    /// What a person is asked to grant prints as written: a manifest permission entry or
    /// description holding a control character (an escape sequence that erased the lines above
    /// it, so the y/n question hid a path it granted) is refused naming the field, shown escaped;
    /// a plugin's docs holding one are printed escaped by `crescent services`.
    @Test func controlCharactersFromAPluginNeverReachTheTerminalRaw() async throws {
        let sandbox = try luaPluginSandbox("inj", main: """
            local s = service("inj", "Docs\\27[2J that clear the screen.")
            s:method("hi", {}, "string", "Says hi\\27]0;title\\7.", function() return "hi" end)
            """)
        let manifest = """
            name = "inj"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["inj"]

            """
        try sandbox.write("plugins/inj/plugin.toml", manifest + "\n[permissions]\nread = [\"/etc/hosts\", \"/tmp/x\\u001b[1A\\u001b[M\"]\n")
        let checked = try await inHome(["plugin", "check", "plugins/inj"], sandbox)
        #expect(checked.status != 0, "\(checked)")
        #expect((checked.stdout + checked.stderr).contains("field 'permissions.read' holds the control character U+001B in \"/tmp/x\\u{1B}[1A\\u{1B}[M\""),
                "\(checked)")
        #expect(!checked.stdout.contains("\u{1B}") && !checked.stderr.contains("\u{1B}"), "\(checked)")
        try sandbox.write("plugins/inj/plugin.toml", manifest + "description = \"fine\\rFAKE\"\n")
        let described = try await inHome(["plugin", "check", "plugins/inj"], sandbox)
        #expect((described.stdout + described.stderr).contains("field 'description' holds the control character U+000D"), "\(described)")
        try sandbox.write("plugins/inj/plugin.toml", manifest)
        let listed = try await inHome(["services", "inj"], sandbox)
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.stdout.contains("Docs\\u{1B}[2J that clear the screen.") && listed.stdout.contains("Says hi\\u{1B}]0;title\\u{7}."),
                "\(listed)")
        #expect(!listed.stdout.contains("\u{1B}") && !listed.stdout.contains("\u{7}"), "\(listed)")
    }
}
