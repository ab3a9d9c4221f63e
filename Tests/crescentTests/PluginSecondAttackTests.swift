import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The second attack on plugin permissions (issue 35, attack new24p): a data folder reached
/// through a planted link (D1), a finalizer that never returns (D2), `io.tmpfile` outside the
/// plugin's folders (D11) and control sequences in a plugin's log lines (D6). Each test fails
/// against the binary before the fixes (`CRESCENT_BIN`).
@Suite struct PluginSecondAttackTests {
    /// A Lua plugin `name` asking for nothing whose `run(code)` runs Lua in the plugin and
    /// answers "ok RESULT" or "refused MESSAGE".
    static func runner(_ name: String, in sandbox: Sandbox, folder: String = "plugins") throws {
        try sandbox.write("\(folder)/\(name)/plugin.toml", """
            name = "\(name)"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["\(name)"]
            """)
        try sandbox.write("\(folder)/\(name)/main.lua", """
            local s = service("\(name)", "Runs Lua.")
            s:method("run", { "code: string" }, "string", "Runs code.", function(code)
              local ok, result = pcall(function() return assert(load(code))() end)
              return (ok and "ok " or "refused ") .. tostring(result)
            end)
            """)
    }

    /// A script line calling `services.NAME:run(code)` and printing its answer (or the error).
    static func call(_ name: String, _ code: String) -> String {
        "do local ok, r = pcall(function() return services.\(name):run([==[\(code)]==]) end) print(ok, (tostring(r):gsub('\\n', ' '))) end"
    }

    /// D1: a project's data folder holding `plugin-data/NAME` as a link to ~/.ssh gave its plugin
    /// (asking nothing, so started without a question) that folder as its own: it read the key
    /// and appended to authorized_keys. The link is refused, named, and nothing is reached.
    @Test func aLinkPlantedAsTheDataFolderIsRefusedForALuaPlugin() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("home/.ssh/id", "SECRET-KEY\n")
        try Self.runner("evil", in: sandbox, folder: "proj/plugins")
        try sandbox.makeFolder("proj/data/plugin-data")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/proj/data/plugin-data/evil", withDestinationPath: "../../../home/.ssh")
        let ssh = sandbox.path + "/home/.ssh"
        let result = try await inHome(["--data-dir", "data", "-e", """
            task(function()
              \(Self.call("evil", "local f = assert(io.open('\(ssh)/id')) return f:read('a')"))
              \(Self.call("evil", "local f = assert(io.open('\(ssh)/authorized_keys', 'a')) f:write('attacker') f:close() return 'appended'"))
            end)
            """], sandbox, directory: sandbox.path + "/proj")
        #expect(!result.stdout.contains("SECRET-KEY") && !result.stdout.contains("appended"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: ssh + "/authorized_keys"), "\(result)")
        #expect(result.stderr.contains("data/plugin-data/evil is a symbolic link"), "names the link: \(result)")
        #expect(result.stderr.contains("--data-dir"), "says the fix: \(result)")
    }

    /// D1, a link one level up (`data/plugin-data -> ../home`), for a process plugin: its data
    /// folder became ~/bin, where it made a program the user then ran. The sandbox's write
    /// grant follows the same refusal: the plugin does not start.
    @Test func aLinkPlantedAsThePluginDataFolderIsRefusedForAProcessPlugin() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeFolder("home/bin")
        try sandbox.write("proj/plugins/bin/plugin.toml", """
            name = "bin"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            services = ["bin"]
            command = ["python3", "main.py"]
            """)
        try sandbox.write("proj/plugins/bin/main.py", PluginTestPython.loop(
            declaration: #"{"services": [{"name": "bin", "summary": "Plants.", "methods": [{"name": "plant", "args": [], "returns": "string", "doc": "Plants."}]}]}"#,
            calls: #"""
                import os
                path = os.path.join(os.environ["CRESCENT_DATA_DIR"], "ls2")
                fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o755)
                os.write(fd, b"#!/bin/sh\necho trojan\n")
                os.close(fd)
                send({"jsonrpc": "2.0", "id": id, "result": "planted " + path})
            """#))
        try sandbox.makeFolder("proj/data")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/proj/data/plugin-data", withDestinationPath: "../../home")
        let result = try await inHome(["--data-dir", "data", "-e", """
            task(function() local ok, r = pcall(function() return services.bin:plant() end) print(ok, r) end)
            """], sandbox, directory: sandbox.path + "/proj")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/home/bin/bin/ls2"), "\(result)")
        #expect(!result.stdout.contains("planted"), "\(result)")
        #expect(result.stderr.contains("data/plugin-data is a symbolic link"), "names the link: \(result)")
    }

    /// D2: Lua runs a finalizer with hooks off, so a `__gc` that never returns held the host's
    /// loop for ever (neither call_timeout nor the plugin's time limit ended it), also through
    /// `plugin check`. A metatable with `__gc` is refused at setmetatable, even one set to `true`
    /// first and replaced after; an io file's metatable is handed out as a copy.
    @Test func aFinalizerThatNeverReturnsCannotBeSet() async throws {
        let sandbox = try Sandbox()
        try Self.runner("gcp", in: sandbox)
        try sandbox.write("plugins/gcp/data.txt", "x\n")
        try sandbox.write("crescent.toml", "[plugins]\ncall_timeout = 5\n")
        let result = try await inHome(["--config", "crescent.toml", "-e", """
            task(function()
              \(Self.call("gcp", "local mt = { __gc = true } setmetatable({}, mt) mt.__gc = function() while true do end end return 'armed'"))
              \(Self.call("gcp", "local f = assert(io.open('data.txt')) getmetatable(f).__gc = function() while true do end end f = nil return 'armed'"))
              \(Self.call("gcp", "local t = {} for i = 1, 1e5 do t[i] = {} end t = nil collectgarbage() collectgarbage() return 'collected'"))
              \(Self.call("gcp", "return getmetatable(setmetatable({}, { __index = {} })) ~= nil"))
            end)
            """], sandbox, timeLimit: 40)
        let lines = result.stdoutLines
        try #require(lines.count == 4 && !result.timedOut, "\(result)")
        #expect(lines[0].contains("refused") && lines[0].contains("a metatable with __gc is not available in plugin 'gcp'")
                && lines[0].contains("close files and other resources explicitly"), "\(lines[0])")
        #expect(lines[1] == "true\tok armed", "the copy took the function, the file's own finalizer is untouched: \(lines[1])")
        #expect(lines[2] == "true\tok collected", "\(lines[2])")
        #expect(lines[3] == "true\tok true", "a metatable without __gc is as before: \(lines[3])")
    }

    /// D2 in `plugin check`: a finalizer armed in main (ordinary garbage, no collectgarbage call)
    /// held the check for ever; now main fails at setmetatable and the check says so.
    @Test func pluginCheckOfAPluginArmingAFinalizerEnds() async throws {
        let sandbox = try Sandbox()
        try Self.runner("gcm", in: sandbox)
        try sandbox.write("plugins/gcm/main.lua", """
            service("gcm", "Arms.")
            local mt = { __gc = true }
            setmetatable({}, mt)
            mt.__gc = function() while true do end end
            for i = 1, 200000 do local _ = { i } end
            """)
        let result = try await inHome(["plugin", "check", "plugins/gcm"], sandbox, timeLimit: 40)
        #expect(!result.timedOut, "\(result)")
        #expect((result.stdout + result.stderr).contains("a metatable with __gc is not available in plugin 'gcm'"), "\(result)")
    }

    /// D11: `io.tmpfile` made its file in /tmp, outside every folder the plugin may write, with no
    /// bound but the disk. It is an unnamed file in the plugin's data folder now: the host's
    /// open files (seen from the script, which may look) show where it lies.
    @Test func ioTmpfileIsMadeInThePluginsDataFolder() async throws {
        let sandbox = try Sandbox()
        try Self.runner("tmp", in: sandbox)
        let data = sandbox.path + "/.local/share/crescent/plugin-data/tmp"
        let result = try await inHome(["-e", """
            task(function()
              \(Self.call("tmp", "local held = assert(io.tmpfile()) rawset(_G, 'held', held) held:write('TMPDATA') held:seek('set') return held:read('a')"))
              local pipe = io.popen("ls -l /proc/$PPID/fd/")
              local listing = pipe:read("a")
              pipe:close()
              print(listing:find("\(data)/#", 1, true) ~= nil, listing:find(" /tmp/#", 1, true) ~= nil)
            end)
            """], sandbox)
        #expect(result.stdoutLines.first == "true\tok TMPDATA", "\(result)")
        #expect(result.stdoutLines.dropFirst().first == "true\tfalse", "the file lies in the data folder, not /tmp: \(result)")
    }

    /// D6: a plugin's log lines and stderr reached the terminal with their control sequences
    /// (a window title, an erased line, a clipboard write); they are written as escapes now,
    /// as a manifest's are.
    @Test func aPluginsLogLinesShowControlCharactersAsEscapes() async throws {
        let sandbox = try Sandbox()
        try Self.runner("loud", in: sandbox)
        try sandbox.write("plugins/noisy/plugin.toml", """
            name = "noisy"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            services = ["noisy"]
            command = ["python3", "main.py"]
            """)
        try sandbox.write("plugins/noisy/main.py", PluginTestPython.loop(
            declaration: #"{"services": [{"name": "noisy", "summary": "Writes.", "methods": [{"name": "say", "args": [], "returns": "string", "doc": "Writes."}]}]}"#,
            calls: #"""
                sys.stderr.write("E1\x1b[2K\rSPOOF\x1b]52;c;ZWNobw==\x07\n"); sys.stderr.flush()
                send({"jsonrpc": "2.0", "method": "log", "params": {"level": "warn", "message": "N1\x1b]0;PWNED\x07"}})
                send({"jsonrpc": "2.0", "id": id, "result": "said"})
            """#))
        let result = try await inHome(["-e", """
            task(function()
              \(Self.call("loud", "log.warn('W\\27]0;PWNED\\7\\27[2K\\rSPOOF') return 'logged'"))
              print((services.noisy:say()))
            end)
            """], sandbox)
        #expect(result.stdoutLines.prefix(2) == ["true\tok logged", "said"], "\(result)")
        #expect(!result.stderr.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\r" }, "\(result.stderr.debugDescription)")
        #expect(result.stderr.contains(#"W\u{1B}]0;PWNED\u{7}\u{1B}[2K\u{D}SPOOF"#), "\(result.stderr)")
        #expect(result.stderr.contains(#"E1\u{1B}[2K\u{D}SPOOF\u{1B}]52;c;ZWNobw==\u{7}"#), "\(result.stderr)")
        #expect(result.stderr.contains(#"N1\u{1B}]0;PWNED\u{7}"#), "\(result.stderr)")
    }
}
