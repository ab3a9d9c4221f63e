import Foundation
import Testing

/// What a manifest may ask beyond its syntax, and the messages that name what is wrong (fifth
/// round of issue 35's attack, perms4 Z1–Z4 and X1's loader): `memory_mib` too low for anything
/// to start and a start that ran out of it, `exec` entries that name no one program, plugin names
/// past 64 characters, and a downgrade by `plugins install`.
@Suite struct PluginManifestRulesTests {
    static func manifest(name: String = "music", _ permissions: String) -> String {
        """
        name = "\(name)"
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

    func sandbox(name: String = "music", _ permissions: String) throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/music/plugin.toml", Self.manifest(name: name, permissions))
        try sandbox.write("plugins/music/main.lua", Self.main)
        return sandbox
    }

    /// A program not installed here is taken (a plugin may run it where it is), and `plugin
    /// check` says it is missing instead of "found on" the PATH.
    @Test func aProgramNotInstalledIsTakenAndSaidToBeMissing() async throws {
        let sandbox = try self.sandbox("exec = [\"nonexistentprog\", \"/usr/bin/nonexistentprog\"]")
        let result = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("exec nonexistentprog: may run nonexistentprog (not installed here: no such program on "
                                       + "/usr/local/bin:/usr/bin:/bin; running it fails until it is installed)"), "\(result)")
        #expect(result.stdout.contains("exec /usr/bin/nonexistentprog: may run /usr/bin/nonexistentprog (not installed here: "
                                       + "no such program; running it fails until it is installed)"), "\(result)")
    }

    /// The loader under another name (ld.so on PATH is a link to it on Debian) is the loader.
    @Test func theLoaderByAnotherNameIsTheLoader() async throws {
        let link = "/usr/bin/ld.so"
        try #require(FileManager.default.fileExists(atPath: link), "this machine has no \(link)")
        let sandbox = try self.sandbox("exec = [\"ld.so\"]")
        let result = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(result.status == 1 && result.stdout.contains("field 'permissions.exec' names the dynamic loader"), "\(result)")
        let fine = try self.sandbox("exec = [\"sleep\", \"python3\", \"/bin/sh\"]\nmemory_mib = 8")
        let checked = try await inHome(["plugin", "check", "plugins/music"], fine)
        #expect(checked.status == 0 && checked.stdout.contains("exec sleep: may run sleep"), "\(checked)")
    }

    /// The loader copied under another name (`myld`), changed in a byte (no longer the same
    /// bytes: its SONAME still says what it is), or hard-linked, passed the check by name and
    /// path, and `myld /bin/sh -c ...` then ran any program.
    @Test func aCopyOrHardLinkOfTheLoaderIsTheLoader() async throws {
        let loader = URL(fileURLWithPath: "/lib64/ld-linux-x86-64.so.2").resolvingSymlinksInPath().path
        try #require(FileManager.default.fileExists(atPath: loader), "this machine has no \(loader)")
        let sandbox = try Sandbox()
        let copy = sandbox.path + "/bin/myld", changed = sandbox.path + "/bin/myld2", linked = sandbox.path + "/bin/myld3"
        try FileManager.default.createDirectory(atPath: sandbox.path + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: loader, toPath: copy)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: loader))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: changed))
        var entries = [copy, changed]
        // A hard link needs the loader's file system and, for a user who does not own it, the
        // kernel's protected_hardlinks to allow it: where it does not, that case is skipped.
        if link(loader, linked) == 0 { entries.append(linked) } else { print("hard link to \(loader) skipped: \(String(cString: strerror(errno)))") }
        for entry in entries {
            _ = chmod(entry, 0o755)
            try sandbox.write("plugins/music/plugin.toml", Self.manifest("exec = [\"\(entry)\"]"))
            try sandbox.write("plugins/music/main.lua", Self.main)
            let result = try await inHome(["plugin", "check", "plugins/music"], sandbox)
            #expect(result.status == 1 && result.stdout.contains("field 'permissions.exec' names the dynamic loader (\(entry) is a copy or link of it, by its contents), which runs any program it is given"), "\(entry): \(result)")
        }
        // Programs that are not the loader are taken.
        let fine = try self.sandbox("exec = [\"/bin/sh\", \"/usr/bin/python3\"]")
        #expect(try await inHome(["plugin", "check", "plugins/music"], fine).status == 0)
    }

    /// A script whose interpreter line names the loader (`#!/lib64/ld-linux-x86-64.so.2
    /// /usr/bin/id`) runs any program through it: it passed as "may run .../shebang.sh".
    @Test func aScriptWhoseInterpreterIsTheLoaderIsTheLoader() async throws {
        let loader = "/lib64/ld-linux-x86-64.so.2"
        try #require(FileManager.default.fileExists(atPath: loader), "this machine has no \(loader)")
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(atPath: sandbox.path + "/bin", withIntermediateDirectories: true)
        let script = sandbox.path + "/bin/shebang.sh", plain = sandbox.path + "/bin/plain.sh"
        try sandbox.write("bin/shebang.sh", "#!\(loader) /usr/bin/id\n")
        try sandbox.write("bin/plain.sh", "#!/bin/sh\necho hi\n")
        _ = chmod(script, 0o755)
        _ = chmod(plain, 0o755)
        try sandbox.write("plugins/music/main.lua", Self.main)
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("exec = [\"\(script)\"]"))
        let result = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(result.status == 1 && result.stdout.contains("field 'permissions.exec' names the dynamic loader (\(script)'s #! line runs it), "
                                                             + "which runs any program it is given"), "\(result)")
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("exec = [\"\(plain)\"]"))
        let fine = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(fine.status == 0, "\(fine)")
    }

    /// Closing a Lua plugin's `io.popen` handle whose program exited non-zero answered
    /// `nil, "Invalid argument", 22` (a stale errno); Lua answers `nil, "exit", 1`.
    @Test func aPopenHandleClosedAfterAFailureAnswersAsLuaDoes() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/pc/plugin.toml", """
            name = "pc"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["pc"]

            [permissions]
            exec = ["false", "true"]
            """)
        try sandbox.write("plugins/pc/main.lua", """
            service("pc", "x"):method("codes", {}, "string", "codes", function()
              local results = {}
              for _, line in ipairs({ "false", "true" }) do
                local a, b, c = io.popen(line):close()
                results[#results + 1] = tostring(a) .. " " .. tostring(b) .. " " .. tostring(c)
              end
              return table.concat(results, ", ")
            end)
            """)
        #expect(try await inHome(["plugins", "allow", "pc"], sandbox).status == 0)
        let run = try await inHome(["-e", "task(function() print((services.pc:codes())) end)"], sandbox)
        #expect(run.stdoutLines == ["nil exit 1, true exit 0"], "\(run)")
    }

    /// A granted path that became a copy of the loader after the manifest was read (not there
    /// then: "not installed here") is refused at the next load, and when the running plugin
    /// runs it (the script copies it between the plugin's start and the call).
    @Test func aGrantedProgramThatBecameTheLoaderIsRefusedWhenRun() async throws {
        let loader = URL(fileURLWithPath: "/lib64/ld-linux-x86-64.so.2").resolvingSymlinksInPath().path
        try #require(FileManager.default.fileExists(atPath: loader), "this machine has no \(loader)")
        let sandbox = try Sandbox()
        let program = sandbox.path + "/later/myld"
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("exec = [\"\(program)\"]"))
        try sandbox.write("plugins/music/main.lua", """
            local s = service("music", "Runs.")
            s:method("run", { "command: string" }, "string", "Runs a command.", function(command)
              local ok, a, b, c = pcall(os.execute, command)
              return tostring(ok) .. " " .. tostring(a) .. " " .. tostring(b) .. " " .. tostring(c)
            end)
            """)
        #expect(try await inHome(["plugins", "allow", "music"], sandbox).status == 0)
        try FileManager.default.createDirectory(atPath: sandbox.path + "/later", withIntermediateDirectories: true)
        let result = try await inHome(["-e", """
            task(function()
              print(services.music:run("/bin/true"))
              os.execute("cp \(loader) \(program) && chmod 755 \(program)")
              print(services.music:run("\(program) /bin/echo ESCAPED"))
            end)
            """], sandbox)
        #expect(result.stdout.contains("false") && result.stdout.contains("os.execute: permission: plugin 'music' may not run")
                && result.stdout.contains("it names the dynamic loader (\(program) is a copy or link of it, by its contents), which runs any program"), "\(result)")
        #expect(!result.stdoutLines.contains("ESCAPED") && !result.stderr.contains("plugin 'music': ESCAPED"), "\(result)")
        let loaded = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(loaded.status == 1 && loaded.stdout.contains("field 'permissions.exec' names the dynamic loader (\(program) is a copy or link of it"), "\(loaded)")
    }

    /// The granted file swapped between `/bin/echo` and a copy of the loader while the plugin
    /// runs it: the host checked the path and then ran the path, and the loader ran `/usr/bin/id`
    /// (not granted) in 42 of 300 calls (30 of 150 in this test). What runs is the file that was
    /// checked: each call runs echo, or is refused naming the loader.
    @Test func aGrantedFileSwappedWithTheLoaderWhileItRunsNeverRunsTheLoader() async throws {
        let loader = URL(fileURLWithPath: "/lib64/ld-linux-x86-64.so.2").resolvingSymlinksInPath().path
        try #require(FileManager.default.fileExists(atPath: loader), "this machine has no \(loader)")
        let sandbox = try Sandbox()
        let bin = sandbox.path + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: loader, toPath: bin + "/myld")
        try FileManager.default.copyItem(atPath: "/bin/echo", toPath: bin + "/real")
        for file in ["myld", "real"] { chmod(bin + "/" + file, 0o755) }
        #expect(link(bin + "/real", bin + "/swap") == 0)
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("exec = [\"\(bin)/swap\"]"))
        try sandbox.write("plugins/music/main.lua", """
            service("music", "Runs."):method("run", { "command: string" }, "string", "Runs a command.", function(command)
              local ok, handle, message = pcall(io.popen, command)
              if not ok or not handle then return "refused " .. tostring(handle or message) end
              local out = handle:read("a")
              handle:close()
              return "ran " .. (out:gsub("\\n$", ""))
            end)
            """)
        #expect(try await inHome(["plugins", "allow", "music"], sandbox).status == 0)
        // The swaps start once the plugin is loaded (at load a loader at the path is refused).
        let swapper = LinkSwapper(folder: bin, links: ["swap": bin + "/myld"], hard: true)
        let started = sandbox.path + "/started"
        swapper.start(seconds: 20, once: started)
        let result = try await inHome(["-e", """
            task(function()
              print((services.music:run("\(bin)/swap loaded")))
              io.open("\(started)", "w"):close()
              local counts = {}
              for _ = 1, 60 do
                local answer = services.music:run("\(bin)/swap /usr/bin/id")
                local kind = answer:match("^ran uid=") and "escaped" or answer:match("^ran /usr/bin/id") and "echo"
                  or answer:match("it names the dynamic loader") and "loader" or answer
                counts[kind] = (counts[kind] or 0) + 1
              end
              for kind, count in pairs(counts) do print(kind, count) end
            end)
            """], sandbox, timeLimit: 120)
        let swaps = swapper.stop()
        print("\(swaps) swaps; \(result.stdoutLines)")
        #expect(result.status == 0 && result.stdoutLines.first == "ran loaded", "\(result)")
        let counts = Dictionary(uniqueKeysWithValues: result.stdoutLines.dropFirst().compactMap { line -> (String, Int)? in
            let parts = line.split(separator: "\t")
            return parts.count == 2 ? (String(parts[0]), Int(parts[1]) ?? 0) : nil
        })
        #expect(counts["escaped"] == nil, "\(result)")
        #expect(Set(counts.keys).isSubset(of: ["echo", "loader"]), "\(result)")
        #expect((counts["echo"] ?? 0) + (counts["loader"] ?? 0) == 60 && swaps > 0, "\(result)")
    }

    /// A 300-character name was taken; `plugins install` then failed with "an error the system
    /// did not name (NSCocoaErrorDomain 514)".
    @Test func aNameLongerThan64CharactersIsRefusedNamingTheRule() async throws {
        let long = String(repeating: "a", count: 300)
        let sandbox = try self.sandbox(name: long, "")
        let checked = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        let rule = "field 'name' must match [a-z][a-z0-9_]*, at most 64 characters, got \"aaaaaaaaaaaaaaaaaaaaaaaa…\" (300 characters)"
        #expect(checked.status == 1 && checked.stdout.contains(rule), "\(checked)")
        let installed = try await inHome(["plugins", "install", "plugins/music"], sandbox)
        #expect(installed.status == 1 && installed.stderr.contains(rule), "\(installed)")
        #expect(!installed.stderr.contains("NSCocoaErrorDomain"), "\(installed)")
        let atTheLimit = try self.sandbox(name: String(repeating: "b", count: 64), "")
        #expect(try await inHome(["plugin", "check", "plugins/music"], atTheLimit).status == 0)
    }

    /// `plugins install` of 0.0.9 over an installed 0.1.1 replaced it without a word. Without a
    /// terminal it is refused naming --force; with --force it goes ahead.
    @Test func installingAnOlderVersionOverANewerOneIsADowngradeThatNeedsForce() async throws {
        let sandbox = try Sandbox()
        try PluginInstallTests.writePlugin(in: sandbox, at: "new/tune", version: "0.1.1")
        try PluginInstallTests.writePlugin(in: sandbox, at: "old/tune", version: "0.0.9")
        #expect(try await inHome(["plugins", "install", "new/tune"], sandbox).status == 0)
        let refused = try await inHome(["plugins", "install", "old/tune"], sandbox)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("plugin 'tune' 0.1.1 is installed in \(sandbox.path)\(PluginInstallTests.userFolder), and old/tune holds 0.0.9, an older version: installing it would be a downgrade; nothing was installed (run crescent plugins install --force old/tune to downgrade)"), "\(refused)")
        let manifest = sandbox.path + PluginInstallTests.userFolder + "/plugin.toml"
        #expect(try String(contentsOfFile: manifest, encoding: .utf8).contains("version = \"0.1.1\""))
        let forced = try await inHome(["plugins", "install", "--force", "old/tune"], sandbox)
        #expect(forced.status == 0 && forced.stdout.contains("installed plugin 'tune' 0.0.9"), "\(forced)")
        #expect(try String(contentsOfFile: manifest, encoding: .utf8).contains("version = \"0.0.9\""))
        // The same version again, or a newer one, needs nothing.
        #expect(try await inHome(["plugins", "install", "old/tune"], sandbox).status == 0)
        #expect(try await inHome(["plugins", "install", "new/tune"], sandbox).status == 0)
    }

    /// The downgrade question on a terminal: the end of input (Ctrl-D) is a no at once, said on
    /// stderr, and nothing is installed; `n` is a no too. (A terminal that closes ends the read the
    /// same way.) There is no time limit, as apt and pip set none.
    @Test func theDowngradeQuestionTakesTheEndOfInputAsNoAndSaysSo() async throws {
        let sandbox = try Sandbox()
        try PluginInstallTests.writePlugin(in: sandbox, at: "new/tune", version: "0.1.1")
        try PluginInstallTests.writePlugin(in: sandbox, at: "old/tune", version: "0.0.9")
        #expect(try await inHome(["plugins", "install", "new/tune"], sandbox).status == 0)
        let home: [String: String?] = ["HOME": sandbox.path, "XDG_DATA_HOME": String?.none]
        for (key, said) in [("\u{4}", true), ("n\r", false)] {
            let terminal = try InteractiveTerminal(["plugins", "install", "old/tune"], directory: sandbox.path, environment: home)
            await terminal.waitFor(line: "[y/N]")
            terminal.type(key)
            #expect(await terminal.finish(timeLimit: 10) == 1, "\(terminal.text)")
            #expect(terminal.text.contains("no answer (the input ended): taken as no") == said, "\(terminal.text)")
            #expect(terminal.text.contains("installing it would be a downgrade; nothing was installed"), "\(terminal.text)")
        }
        let manifest = sandbox.path + PluginInstallTests.userFolder + "/plugin.toml"
        #expect(try String(contentsOfFile: manifest, encoding: .utf8).contains("version = \"0.1.1\""))
    }

    /// A process plugin that fails at start the way a program short of memory does: `segv` (C
    /// code writing through the NULL its malloc answered), `memoryerror` (Python's MemoryError),
    /// `exit` (an exit of its own, which says nothing of memory).
    static let hungry = #"""
        import ctypes, json, sys
        mode = open("mode.txt").read().strip()
        if mode == "segv":
            libc = ctypes.CDLL(None)
            libc.malloc.restype = ctypes.c_void_p
            ctypes.memset(libc.malloc(256 << 20), 1, 256 << 20)
        elif mode == "memoryerror":
            hoard = bytearray(256 << 20)
        else:
            sys.exit(3)
        for line in sys.stdin:
            print(json.dumps({"jsonrpc": "2.0", "id": json.loads(line)["id"], "result": {"services": []}}), flush=True)
        """#

    /// With `memory_mib` at its floor the start said only "it exited before answering
    /// 'initialize'"; it says the program ran out of its limit, naming `memory_mib` and its value.
    /// Touched in a task (the start goes on while the loop runs) and outside one (the loop waits).
    @Test func aStartThatRunsOutOfItsMemoryLimitSaysSo() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/hungry/plugin.toml", """
            name = "hungry"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "hungry.py"]
            services = ["hungry"]

            [permissions]
            memory_mib = 8
            """)
        try sandbox.write("plugins/hungry/hungry.py", Self.hungry)
        let said = "plugins/hungry/plugin.toml; raise it, e.g. to 64, the default) before answering 'initialize'"
        let named = "ran out of its memory limit of 8 MiB (memory_mib = 8 in [permissions] of "
        let inTask = "task(function() local ok, err = pcall(function() return services.hungry:ping() end) print(ok, tostring(err)) app.exit(0) end)"
        let outside = "local ok, err = pcall(function() return services.hungry end) print(ok, tostring(err))"
        for (mode, code) in [("segv", inTask), ("memoryerror", outside), ("segv", outside)] {
            try sandbox.write("plugins/hungry/mode.txt", mode)
            try? FileManager.default.removeItem(atPath: sandbox.path + "/.local/share/crescent/plugin-declarations")
            let result = try await inHome(["-e", code], sandbox, timeLimit: 90)
            let text = result.stdout + result.stderr
            #expect(text.contains(named) && text.contains(said), "\(mode): \(result)")
            #expect(!result.stdout.contains("exited before") && !result.stderr.contains("exited before"), "\(mode): \(result)")
        }
        try sandbox.write("plugins/hungry/mode.txt", "exit")
        let other = try await inHome(["-e", outside], sandbox, timeLimit: 90)
        #expect(!other.stdout.contains("memory") && !other.stderr.contains("memory"), "\(other)")
        #expect(other.stdout.contains("exited before answering 'initialize'") || other.stderr.contains("exited before answering 'initialize'"), "\(other)")
    }

    /// A real program that lists the machine's TCP connections through netlink sock_diag (`ss`,
    /// iproute2), run by a plugin granted `net` and `exec = ["ss"]`: only route netlink opens,
    /// so it cannot list them (its fallback, /proc/net/tcp, is no file it may read), and the
    /// test's own listening socket does not show.
    @Test func grantedNetAndSsItCannotListTheMachinesConnections() async throws {
        try #require(FileManager.default.fileExists(atPath: "/bin/ss") || FileManager.default.fileExists(atPath: "/usr/bin/ss"), "tools/setup.sh installs iproute2")
        let listener = try LoopbackListener()
        defer { listener.close() }
        let sandbox = try Sandbox()
        try sandbox.write("plugins/lister/plugin.toml", """
            name = "lister"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["lister"]

            [permissions]
            exec = ["ss"]
            net = ["127.0.0.1:\(listener.port)"]
            """)
        try sandbox.write("plugins/lister/main.lua", """
            local s = service("lister", "Lists connections.")
            s:method("list", {}, "string", "What ss -tanl prints.", function()
              local pipe = io.popen("ss -tanl")
              local text = pipe:read("a")
              pipe:close()
              return text
            end)
            """)
        #expect(try await inHome(["plugins", "allow", "lister"], sandbox).status == 0)
        // Outside the plugin, the same program lists the listener.
        let plain = Process()
        plain.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        plain.arguments = ["ss", "-tanl"]
        let output = Pipe()
        plain.standardOutput = output
        try plain.run()
        let listed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        plain.waitUntilExit()
        #expect(listed.contains("127.0.0.1:\(listener.port)"), "the test's listener is not listed by ss itself: \(listed)")
        let result = try await inHome(["-e", "task(function() print(services.lister:list()) end)"], sandbox, timeLimit: 90)
        #expect(result.status == 0 && result.stdout.contains("State"), "ss ran: \(result)")
        #expect(!result.stdout.contains(":\(listener.port)"), "\(result)")
        #expect(result.stderr.contains("Cannot open netlink socket: Permission denied"), "\(result)")
    }
}
