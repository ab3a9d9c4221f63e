import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The second attack on plugin permissions (issue 35, attack new24p): a granted `#!` script with
/// a relative interpreter (D4) or an interpreter swapped between the check and the exec (D5);
/// a broken grant-key named only by `plugins allow` (D9); `plugins` promising an adoption a copy
/// in another folder may not make (D10).
@Suite struct PluginSecondAttackExecTests {
    static func manifest(_ permissions: String, requires: String = "[]") -> String {
        """
        name = "music"
        version = "1.0.0"
        crescent = ">=0.1.0"
        kind = "lua"
        services = ["music"]
        requires = \(requires)

        [permissions]
        \(permissions)
        """
    }

    /// `run(command)`: "ran OUTPUT" or "refused MESSAGE".
    static let main = """
        service("music", "Runs."):method("run", { "command: string" }, "string", "Runs a command.", function(command)
          local ok, handle, message = pcall(io.popen, command)
          if not ok or not handle then return "refused " .. tostring(handle or message) end
          local out = handle:read("a")
          handle:close()
          return "ran " .. (out:gsub("\\n$", ""))
        end)
        """

    static var loader: String { URL(fileURLWithPath: "/lib64/ld-linux-x86-64.so.2").resolvingSymlinksInPath().path }

    /// D4: `#!xq /usr/bin/id` with `xq` a copy of the loader in the plugin's folder: the relative
    /// interpreter was never checked (only absolute ones were) and the loader ran a program not
    /// granted. It is refused naming it, at `plugin check` and when the script is run.
    @Test func aRelativeInterpreterIsRefusedNamingIt() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.loader), "this machine has no \(Self.loader)")
        let sandbox = try Sandbox()
        let script = sandbox.path + "/xbin/s1"
        try sandbox.write("xbin/s1", "#!xq /usr/bin/id\n", executable: true)
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("exec = [\"\(script)\"]"))
        try sandbox.write("plugins/music/main.lua", Self.main)
        try FileManager.default.copyItem(atPath: Self.loader, toPath: sandbox.path + "/plugins/music/xq")
        chmod(sandbox.path + "/plugins/music/xq", 0o755)
        let checked = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(checked.status == 1 && checked.stdout.contains("field 'permissions.exec' names a program the host will not run: \(script): its #! line names the interpreter 'xq', a relative path"), "\(checked)")
        // Granted while it read `#!/bin/echo`, then changed while the plugin runs.
        try sandbox.write("xbin/s1", "#!/bin/echo\n", executable: true)
        #expect(try await inHome(["plugins", "allow", "music"], sandbox).status == 0)
        let result = try await inHome(["-e", """
            task(function()
              print((services.music:run("\(script) hello")))
              local f = assert(io.open("\(script)", "w")) f:write("#!xq /usr/bin/id\\n") f:close()
              print((services.music:run("\(script) hello")))
            end)
            """], sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 2, "\(result)")
        #expect(lines[0].hasPrefix("ran /dev/fd/") && lines[0].hasSuffix(" hello"), "\(lines[0])")
        #expect(lines[1].hasPrefix("refused") && lines[1].contains("its #! line names the interpreter 'xq', a relative path"), "\(result)")
        #expect(!result.stdout.contains("uid=") && !result.stderr.contains("no such user"), "\(result)")
    }

    /// D5: a granted script's interpreter (in the plugin's folder, which is executable) swapped
    /// between a copy of `echo` and a copy of the loader: the host checked the interpreter, but
    /// the kernel opened it again by path at the exec, and the loader ran `/usr/bin/printf` (not
    /// granted). The host runs the interpreter it opened: each call runs echo, or is refused
    /// naming the loader.
    @Test func anInterpreterSwappedWithTheLoaderWhileItRunsNeverRunsTheLoader() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.loader), "this machine has no \(Self.loader)")
        let sandbox = try Sandbox()
        let folder = sandbox.path + "/plugins/music"
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("exec = [\"\(folder)/s\"]"))
        try sandbox.write("plugins/music/main.lua", Self.main)
        try sandbox.write("plugins/music/s", "#!\(folder)/interp /usr/bin/printf\n", executable: true)
        try FileManager.default.copyItem(atPath: Self.loader, toPath: folder + "/myld")
        try FileManager.default.copyItem(atPath: "/bin/echo", toPath: folder + "/real")
        for file in ["myld", "real"] { chmod(folder + "/" + file, 0o755) }
        #expect(link(folder + "/real", folder + "/interp") == 0)
        #expect(try await inHome(["plugins", "allow", "music"], sandbox).status == 0)
        let swapper = LinkSwapper(folder: folder, links: ["interp": folder + "/myld"], hard: true)
        let started = sandbox.path + "/started"
        swapper.start(seconds: 20, once: started)
        let result = try await inHome(["-e", """
            task(function()
              print((services.music:run("\(folder)/s X")))
              io.open("\(started)", "w"):close()
              local counts = {}
              for _ = 1, 60 do
                -- A call past its time limit on a loaded machine is "failed", not an escape.
                local called, answer = pcall(function() return services.music:run("\(folder)/s X") end)
                local kind = not called and "failed" or answer:match("^ran /usr/bin/printf /dev/fd/%d+ X$") and "echo"
                  or answer:match("it names the dynamic loader") and "loader" or answer:match("^ran ") and "escaped" or answer
                counts[kind] = (counts[kind] or 0) + 1
              end
              for kind, count in pairs(counts) do print(kind, count) end
            end)
            """], sandbox, timeLimit: 120)
        let swaps = swapper.stop()
        #expect(result.status == 0 && result.stdoutLines.first?.hasPrefix("ran /usr/bin/printf /dev/fd/") == true, "\(result)")
        let counts = Dictionary(uniqueKeysWithValues: result.stdoutLines.dropFirst().compactMap { line -> (String, Int)? in
            let parts = line.split(separator: "\t")
            return parts.count == 2 ? (String(parts[0]), Int(parts[1]) ?? 0) : nil
        })
        #expect(counts["escaped"] == nil, "\(result)")
        #expect(Set(counts.keys).isSubset(of: ["echo", "loader", "failed"]), "\(result)")
        #expect(counts.values.reduce(0, +) == 60 && (counts["echo"] ?? 0) > 0 && swaps > 0, "\(result)")
    }

    /// D9: with a grant-key that cannot be used (here 31 bytes), runs said "asks for permissions
    /// not granted: run crescent plugins allow" and `plugins` "not granted", and only `allow`
    /// named the key. Each names it now, with the fix.
    @Test func aBrokenGrantKeyIsNamedByRunsAndTheListing() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/music/plugin.toml", Self.manifest("exec = [\"cat\"]"))
        try sandbox.write("plugins/music/main.lua", Self.main)
        #expect(try await inHome(["plugins", "allow", "music"], sandbox).status == 0)
        let key = sandbox.path + "/.local/share/crescent/grant-key"
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: key)))
        try Data(bytes.prefix(31)).write(to: URL(fileURLWithPath: key))
        let run = try await inHome(["-e", "task(function() print(pcall(function() return services.music:run('cat /dev/null') end)) end)"], sandbox)
        let named = "the key that signs grants, \(key), cannot be used: it holds 31 bytes, not the 32 of a key"
        #expect(run.stderr.contains(named) || run.stdout.contains(named), "\(run)")
        let listed = try await inHome(["plugins"], sandbox)
        #expect(listed.stdout.contains(named), "\(listed)")
        let allowed = try await inHome(["plugins", "allow", "music"], sandbox)
        #expect(allowed.status == 1 && allowed.stderr.contains("cannot use the key that signs grants"), "\(allowed)")
    }

    /// D10: `plugins` listed "may adopt your store collection NAME once" for a copy in another
    /// folder than the first to run, which the store refuses. Only the first folder's shows it;
    /// `plugin check` of the copy says why it may not.
    @Test func onlyTheFirstFolderIsShownAsMayAdopt() async throws {
        let sandbox = try Sandbox()
        for folder in ["p", "p2"] {
            try sandbox.write("\(folder)/music/plugin.toml", Self.manifest("", requires: "[\"store\"]"))
            try sandbox.write("\(folder)/music/main.lua", Self.main)
        }
        let first = try await inHome(["--plugin", "p/music", "-e", "task(function() print(services.music ~= nil) end)"], sandbox)
        #expect(first.stdoutLines == ["true"], "\(first)")
        let owner = try await inHome(["--plugin", "p/music", "plugins"], sandbox)
        #expect(owner.stdoutLines.contains { $0.hasPrefix("music") && $0.contains("may adopt your store collection music once") }, "\(owner)")
        let copy = try await inHome(["--plugin", "p2/music", "plugins"], sandbox)
        #expect(copy.stdoutLines.contains { $0.hasPrefix("music") } && !copy.stdout.contains("may adopt"), "\(copy)")
        let checked = try await inHome(["plugin", "check", "p2/music"], sandbox)
        #expect(checked.stdout.contains("never: may not copy your scripts' store collection 'music' (store:adopt answers permission): the plugin 'music' in \(sandbox.path)/p/music ran first"), "\(checked)")
    }
}
