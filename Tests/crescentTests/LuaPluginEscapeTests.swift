import Foundation
import Testing
import CSandbox
#if canImport(Glibc)
import Glibc
#endif

/// DESIGN.md (Plugins › Permissions): a Lua plugin granted nothing tries every way out it has;
/// each is refused at its own line and warned in the log, and the host and another plugin run on.
/// Granted one permission, it can do exactly that one thing.
@Suite struct LuaPluginEscapeTests {
    /// Methods that each try one thing and answer "ok ..." or "refused <message>".
    static let main = #"""
        local s = service("escape", "Tries to get out.")
        local function try(f, ...)
          local ok, result = pcall(f, ...)
          return (ok and "ok " or "refused ") .. tostring(result)
        end
        local function read(path)
          local file = assert(io.open(path))
          local text = file:read("a")
          file:close()
          return text
        end
        s:method("read", { "path: string" }, "string", "Reads a file.", function(path) return try(read, path) end)
        s:method("lines", { "path: string" }, "string", "Reads a line.", function(path) return try(function() return io.lines(path)() end) end)
        s:method("write", { "path: string" }, "string", "Writes a file.", function(path)
          return try(function() local file = assert(io.open(path, "w")) file:write("escaped") file:close() return "written" end)
        end)
        s:method("remove", { "path: string" }, "string", "Removes a file.", function(path) return try(function() return assert(os.remove(path)) end) end)
        s:method("rename", { "from: string", "to: string" }, "string", "Renames a file.", function(from, to) return try(function() return assert(os.rename(from, to)) end) end)
        s:method("env", { "name: string" }, "string", "Reads a variable.", function(name) return try(os.getenv, name) end)
        s:method("run", { "command: string" }, "string", "Runs a command.", function(command)
          return try(function() local pipe = assert(io.popen(command)) local out = pipe:read("a") pipe:close() return out end)
        end)
        s:method("execute", { "command: string" }, "string", "Runs a command.", function(command) return try(os.execute, command) end)
        s:method("native", { "name: string" }, "string", "Loads a C module.", function(name) return try(function() return type(require(name)) end) end)
        s:method("loadlib", {}, "string", "package.loadlib.", function() return try(function() return package.loadlib("/lib/x86_64-linux-gnu/libc.so.6", "puts") end) end)
        s:method("bytecode", {}, "string", "Loads bytecode.", function()
          return try(function() return assert(load(string.dump(function() return 1 end)))() end)
        end)
        s:method("dofile", { "path: string" }, "string", "Runs a file.", function(path) return try(dofile, path) end)
        s:method("stdout", {}, "string", "Writes the host's stdout.", function() return try(io.write, "escaped\n") end)
        s:method("memory", {}, "string", "Allocates without end.", function()
          return try(function() local t = {} for i = 1, 1e8 do t[i] = ("x"):rep(1000) .. i end end)
        end)
        s:method("debug", {}, "string", "Reaches debug.", function() return try(function() return type(debug) .. " " .. type(package.loaded.debug) end) end)
        s:method("searchpath", { "template: string" }, "string", "Looks for a file.", function(template)
          return try(function() local found, tried = package.searchpath("x", template) return tostring(found) .. " " .. tostring(tried) end)
        end)
        s:method("timers", { "count: integer" }, "string", "Makes timers.", function(count)
          local made = {}
          local ok, err = pcall(function() for i = 1, count do made[i] = timer.after(100000, function() end) end end)
          for _, t in ipairs(made) do t:cancel() end
          return ("made %d %s"):format(#made, ok and "" or tostring(err))
        end)
        s:method("race", { "path: string", "append: string", "rounds: integer" }, "string", "Opens while links change.", function(path, append, rounds)
          local secret, inside, refused, appended = 0, 0, 0, 0
          for _ = 1, rounds do
            local ok, file = pcall(io.open, path)
            if ok and file then
              local text = file:read("a") or ""
              file:close()
              if text:find("TOPSECRET") then secret = secret + 1 else inside = inside + 1 end
            else
              refused = refused + 1
            end
            local wrote, out = pcall(io.open, append, "a")
            if wrote and out then
              out:write("APPENDED\n")
              out:close()
              appended = appended + 1
            end
          end
          return ("secret=%d inside=%d refused=%d appended=%d"):format(secret, inside, refused, appended)
        end)
        """#

    static func manifest(_ permissions: String) -> String {
        """
        name = "escape"
        version = "1.0.0"
        crescent = ">=0.1.0"
        kind = "lua"
        services = ["escape"]

        [permissions]
        memory_mib = 16
        \(permissions)
        """
    }

    func sandbox(_ permissions: String = "") throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/escape/plugin.toml", Self.manifest(permissions))
        try sandbox.write("plugins/escape/main.lua", Self.main)
        try sandbox.write("secret.txt", "TOPSECRET\n")
        try sandbox.write("other/secret.txt", "OTHERSECRET\n")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/plugins/escape/link", withDestinationPath: sandbox.path + "/secret.txt")
        _ = try luaPluginSandbox("bystander", main: """
            local s = service("bystander", "Unharmed.")
            s:method("ping", {}, "string", "Answers.", function() return "pong" end)
            """, in: sandbox)
        return sandbox
    }

    /// Runs `calls` (Lua expressions on `e`, the escape service), one printed line each.
    func run(_ calls: [String], in sandbox: Sandbox) async throws -> RunResult {
        let body = calls.map { "print((\($0):gsub('\\n', ' ')))" }.joined(separator: "\n")
        return try await inHome(["-e", """
            task(function()
              local e = services.escape
              \(body)
              print(services.bystander:ping(), "script continues")
            end)
            """], sandbox, environment: ["TOKEN": "s3cr3t-token"])
    }

    /// A plugin's data folder is `DATA/plugin-data/NAME`, not under `DATA/plugins`, where
    /// `crescent plugins install` puts plugins and every run looks for them: a project plugin
    /// asking for nothing cannot plant a plugin there (it became installed for every folder,
    /// even under the name of a plugin the user had granted, and ran with that grant).
    @Test func aPluginCannotPlantAPluginWhereInstalledOnesLive() async throws {
        let sandbox = try Sandbox()
        let share = sandbox.path + "/.local/share/crescent"
        _ = try luaPluginSandbox("planter", main: """
            local s = service("planter", "Plants.")
            s:method("plant", { "folder: string" }, "string", "Writes a plugin into folder.", function(folder)
              local ok, err = pcall(function()
                local manifest = assert(io.open(folder .. "/plugin.toml", "w"))
                manifest:write('name = "planted"\\nversion = "1.0.0"\\ncrescent = ">=0.1.0"\\nkind = "lua"\\nservices = ["planted"]\\n')
                manifest:close()
                local main = assert(io.open(folder .. "/main.lua", "w"))
                main:write('service("planted", "Planted.")\\n')
                main:close()
              end)
              return ok and "planted" or "refused"
            end)
            """, in: sandbox)
        let planted = try await inHome(["-e", """
            task(function()
              print(services.planter:plant("\(share)/plugins/planter"))
              print(services.planter:plant("\(share)/plugin-data/planter"))
            end)
            """], sandbox)
        #expect(planted.stdoutLines == ["refused\tnil", "planted\tnil"], "\(planted)")
        try FileManager.default.createDirectory(atPath: sandbox.path + "/elsewhere", withIntermediateDirectories: true)
        let listed = try await inHome(["plugins"], sandbox, directory: sandbox.path + "/elsewhere")
        #expect(listed.status == 0 && !listed.stdout.contains("planted"), "\(listed)")
    }

    @Test func grantedNothingEveryWayOutIsRefusedAtThePluginsLine() async throws {
        let sandbox = try self.sandbox()
        let home = sandbox.path
        let folder = home + "/plugins/escape"
        let data = home + "/.local/share/crescent/plugin-data/escape"
        let result = try await run([
            "e:read('\(home)/secret.txt')",
            "e:read('\(folder)/link')",
            "e:read('\(folder)/../../secret.txt')",
            "e:read('/proc/self/root\(home)/secret.txt')",
            "e:lines('\(home)/secret.txt')",
            "e:write('\(home)/out.txt')",
            "e:write('\(data)/../outside.txt')",
            "e:remove('\(home)/secret.txt')",
            "e:env('TOKEN')",
            "e:run('/bin/sh -c \"echo escaped\"')",
            "e:execute('echo escaped')",
            "e:native('cjson')",
            "e:loadlib()",
            "e:bytecode()",
            "e:dofile('\(home)/secret.txt')",
            "e:stdout()",
            "e:write('/dev/tty')",
            "e:write('/proc/self/fd/1')",
            "e:memory()",
            "e:debug()",
            "e:write('\(data)/inside.txt')",
            "e:read('\(folder)/main.lua'):sub(1, 12)",
        ], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        try #require(lines.count == 23, "\(result)")
        let notGranted = "not granted (add it to [permissions]"
        #expect(lines[0].hasPrefix("refused plugins/escape/main.lua:7: io.open(\"\(home)/secret.txt\"): permission: plugin 'escape' may not read \(home)/secret.txt: \(notGranted) read"), "\(lines[0])")
        #expect(lines[1].contains("may not read \(folder)/link (that is \(home)/secret.txt)"), "\(lines[1])")
        #expect(lines[2].contains("may not read \(folder)/../../secret.txt (that is \(home)/secret.txt)"), "\(lines[2])")
        #expect(lines[3].contains("(that is \(home)/secret.txt)") && lines[3].hasPrefix("refused"), "\(lines[3])")
        #expect(lines[4].hasPrefix("refused") && lines[4].contains("io.lines("), "\(lines[4])")
        #expect(lines[5].hasPrefix("refused") && lines[5].contains("may not write \(home)/out.txt"), "\(lines[5])")
        #expect(lines[6].hasPrefix("refused") && lines[6].contains("(that is \(home)/.local/share/crescent/plugin-data/outside.txt)"), "\(lines[6])")
        #expect(lines[7].hasPrefix("refused") && lines[7].contains("os.remove("), "\(lines[7])")
        #expect(lines[8].hasPrefix("refused") && lines[8].contains("may not read environment variable TOKEN"), "\(lines[8])")
        #expect(lines[9].hasPrefix("refused") && lines[9].contains("io.popen: permission: plugin 'escape' may not run"), "\(lines[9])")
        #expect(lines[10].hasPrefix("refused") && lines[10].contains("os.execute: permission: plugin 'escape' may not run \"echo escaped\": not granted (add it to [permissions] exec"), "\(lines[10])")
        #expect(lines[11].hasPrefix("refused") && lines[11].contains("require(\"cjson\"): C modules are not available in plugin 'escape'"), "\(lines[11])")
        #expect(lines[12].hasPrefix("refused") && lines[12].contains("loadlib"), "\(lines[12])")
        #expect(lines[13].hasPrefix("refused") && lines[13].contains("attempt to load a binary chunk"), "\(lines[13])")
        #expect(lines[14].hasPrefix("refused") && lines[14].contains("dofile("), "\(lines[14])")
        #expect(lines[15].hasPrefix("refused") && lines[15].contains("io.write is not available in plugin 'escape'"), "\(lines[15])")
        #expect(lines[16].hasPrefix("refused") && lines[16].contains("may not write /dev/tty"), "\(lines[16])")
        #expect(lines[17].hasPrefix("refused") && lines[17].contains("may not write /proc/self/fd/1"), "\(lines[17])")
        #expect(lines[18].hasPrefix("refused") && lines[18].contains("not enough memory"), "\(lines[18])")
        #expect(lines[19] == "ok nil nil", "\(lines[19])")
        #expect(lines[20] == "ok written", "its data folder is its own: \(lines[20])")
        #expect(lines[21] == "ok local s =", "its own folder is readable: \(lines[21])")
        #expect(lines[22] == "pong\tscript continues", "\(result)")
        #expect(!result.stdout.contains("TOPSECRET") && !result.stdout.contains("s3cr3t-token") && !result.stdout.contains("escaped\n"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: home + "/out.txt"))
        #expect(FileManager.default.fileExists(atPath: home + "/secret.txt"))
        #expect(result.stderr.contains("plugin 'escape'") && result.stderr.contains("may not read \(home)/secret.txt"), "warned in the log: \(result)")
    }

    /// harden4 H10: a relative path starts at the plugin's folder, as its programs run there,
    /// wherever crescent was started: it reads its own files by name, and a name that exists only
    /// in the folder crescent started in is not that file (nor refused as if it were).
    @Test func relativePathsStartAtThePluginsFolder() async throws {
        let sandbox = try self.sandbox()
        let folder = sandbox.path + "/plugins/escape"
        let result = try await run([
            "e:read('main.lua'):sub(1, 12)",
            "e:lines('./main.lua')",
            "e:read('secret.txt')",
            "e:write('../../out.txt')",
        ], in: sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 5, "\(result)")
        #expect(lines[0] == "ok local s =", "\(lines[0])")
        #expect(lines[1].hasPrefix("ok local s = service("), "\(lines[1])")
        #expect(lines[2].hasPrefix("refused") && lines[2].contains("secret.txt: No such file or directory"), "\(lines[2])")
        #expect(lines[3].contains("may not write ../../out.txt (that is \(sandbox.path)/out.txt)"), "\(lines[3])")
        #expect(!result.stdout.contains("TOPSECRET"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/secret.txt"))
    }

    /// Each permission granted lets it do exactly that one thing.
    @Test func grantedOnePermissionItCanDoExactlyThat() async throws {
        let sandbox = try Sandbox()
        let home = sandbox.path
        let cases: [(permission: String, allowed: String, expected: String, stillRefused: String)] = [
            ("read = [\"~/secret.txt\"]", "e:read('\(home)/secret.txt')", "ok TOPSECRET ", "e:read('\(home)/other/secret.txt')"),
            ("write = [\"~/out\"]", "e:write('\(home)/out/file.txt')", "ok written", "e:write('\(home)/other/file.txt')"),
            ("env = [\"TOKEN\"]", "e:env('TOKEN')", "ok s3cr3t-token", "e:env('HOME')"),
            ("exec = [\"echo\"]", "e:run('echo hello')", "ok hello ", "e:run('cat \(home)/secret.txt')"),
            ("native = true", "e:native('cjson')", "ok table", "e:read('\(home)/secret.txt')"),
        ]
        for (permission, allowed, expected, stillRefused) in cases {
            let sandbox = try self.sandbox(permission)
            try FileManager.default.createDirectory(atPath: sandbox.path + "/out", withIntermediateDirectories: true)
            let granted = try await inHome(["plugins", "allow", "escape"], sandbox)
            #expect(granted.status == 0, "\(granted)")
            let result = try await run([allowed.replacingOccurrences(of: home, with: sandbox.path),
                                        stillRefused.replacingOccurrences(of: home, with: sandbox.path)], in: sandbox)
            let lines = result.stdoutLines
            #expect(lines.first == expected, "\(permission): \(result)")
            #expect(lines.dropFirst().first?.hasPrefix("refused") == true, "\(permission): \(result)")
            #expect(lines.last == "pong\tscript continues", "\(permission): \(result)")
        }
    }

    /// Fourth permissions attack X9: a Lua plugin runs inside the host, so with `read = ["/proc"]`
    /// (the shipped `system` plugin's grant) `/proc/self/environ` was the host's environment and
    /// `/proc/self/mem` the script's memory. The host's own entry is refused whatever is granted;
    /// the rest of `/proc` stays readable.
    @Test func grantedProcItCannotReadTheHostsOwnEntry() async throws {
        let sandbox = try self.sandbox("read = [\"/proc\"]")
        #expect(try await inHome(["plugins", "allow", "escape"], sandbox).status == 0)
        let result = try await run(["e:read('/proc/self/environ')", "e:read('/proc/thread-self/environ')", "e:read('/proc/self/maps')",
                                    "e:read('/proc/self/task/../mem')", "e:read('/proc/loadavg')"], in: sandbox)
        let lines = result.stdoutLines
        #expect(lines.count == 6, "\(result)")
        for line in lines.prefix(4) {
            #expect(line.hasPrefix("refused") && line.contains("it is the host's own process") && !line.contains("s3cr3t-token"), "\(result)")
        }
        #expect(lines.dropFirst(4).first?.hasPrefix("ok ") == true, "\(result)")
        #expect(lines.last == "pong\tscript continues", "\(result)")
    }

    /// A file checked and then opened by name could be another file by the time it is opened: a
    /// link swapped in between (by another process that may change the granted folder) must
    /// never lead a read to a file outside the grants, nor an append. The swaps run on a thread
    /// of the test for a bounded time while the plugin opens 24,000 times each way.
    @Test func aLinkSwappedAsTheFileIsOpenedNeverLeadsOutside() async throws {
        let sandbox = try self.sandbox("read = [\"~/allowed\"]\nwrite = [\"~/allowed\"]")
        let home = sandbox.path
        try sandbox.write("allowed/real", "inside\n")
        try sandbox.write("other/victim.txt", "untouched\n")
        #expect(try await inHome(["plugins", "allow", "escape"], sandbox).status == 0)
        let swapper = LinkSwapper(folder: home + "/allowed", links: ["race": home + "/secret.txt", "append": home + "/other/victim.txt"])
        swapper.start(seconds: 60)
        let result = try await inHome(["--log-level", "error", "-e", """
            task(function()
              local e = services.escape
              for _ = 1, 12 do print(e:race('\(home)/allowed/race', '\(home)/allowed/append', 2000)) end
            end)
            """], sandbox, timeLimit: 120)
        let swaps = swapper.stop()
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.count == 12, "\(result)")
        #expect(swaps > 1000, "the links changed \(swaps) times")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("secret=0 ") }, "a read reached the secret: \(lines)")
        #expect(lines.contains { !$0.contains(" inside=0 ") }, "the race let no read through at all: \(lines)")
        let victim = try String(contentsOfFile: home + "/other/victim.txt", encoding: .utf8)
        #expect(victim == "untouched\n", "an append reached a file outside the grants: \(victim.count) bytes")
    }

    /// A method blocked reading a program that never ends answers `timeout` at its time limit:
    /// the program is killed (the second permissions attack, D6: the loop was held 40 s, as long
    /// as the program lived, with `call_timeout = 3`), and the plugin serves the next call.
    @Test func aMethodReadingAProgramThatNeverEndsAnswersAtItsLimit() async throws {
        let sandbox = try self.sandbox("exec = [\"sleep\", \"echo\"]")
        try sandbox.write("crescent.toml", "[plugins]\ncall_timeout = 1\n")
        #expect(try await inHome(["plugins", "allow", "escape"], sandbox).status == 0)
        let started = Date()
        let result = try await inHome(["-e", """
            local ticks = 0
            timer.every(0.2, function(t) ticks = ticks + 1 end)
            task(function()
              local out, err = services.escape:run('sleep 60')
              print(out, err and err.code)
              print((services.escape:run('echo again'):gsub('\\n', ' ')), ticks > 0)
              app.exit(0)
            end)
            """], sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.first == "nil\ttimeout", "\(result)")
        #expect(result.stdoutLines.last == "ok again \ttrue", "\(result)")
        #expect(Date().timeIntervalSince(started) < 20, "\(result)")
    }

    /// A granted program runs confined as a process plugin is, with only the granted environment,
    /// and never on the host's standard streams.
    @Test func aGrantedProgramIsConfinedToThePluginsGrants() async throws {
        let sandbox = try self.sandbox("exec = [\"cat\", \"env\"]\nread = [\"~/other\"]")
        let home = sandbox.path
        #expect(try await inHome(["plugins", "allow", "escape"], sandbox).status == 0)
        let result = try await inHome(["-e", """
            task(function()
              local e = services.escape
              print((e:run('cat \(home)/secret.txt'):gsub('\\n', ' ')))
              print((e:run('cat \(home)/other/secret.txt'):gsub('\\n', ' ')))
              print((e:run('env'):gsub('\\n', ' ')))
              print((e:execute('cat')))
              print((e:execute('cat \(home)/other/secret.txt')))
              print((e:execute('cat \(home)/secret.txt')))
              print((e:run('env sh -c id'):gsub('\\n', ' ')))
            end)
            """], sandbox, environment: ["TOKEN": "s3cr3t-token"], stdin: "HOST-STDIN-DATA\n")
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        try #require(lines.count == 7, "\(result)")
        #expect(lines[0] == "ok ", "cat of a file outside the grants: \(lines[0])")
        #expect(lines[1] == "ok OTHERSECRET ", "cat of a granted file: \(lines[1])")
        #expect(lines[2].contains("PATH=/usr/local/bin:/usr/bin:/bin") && !lines[2].contains("s3cr3t-token") && !lines[2].contains("HOME="),
                "only the granted environment: \(lines[2])")
        #expect(lines[3] == "ok true", "cat of /dev/null: \(lines[3])")
        #expect(lines[4] == "ok true" && lines[5] == "ok nil", "\(lines)")
        #expect(lines[6] == "ok ", "a granted env runs only granted programs: \(lines[6])")
        #expect(!result.stdout.contains("HOST-STDIN-DATA") && !result.stdout.contains("TOPSECRET"), "\(result)")
        #expect(!result.stderr.contains("HOST-STDIN-DATA") && !result.stderr.contains("TOPSECRET"), "\(result)")
        #expect(result.stderr.contains("info: plugin 'escape': OTHERSECRET"), "os.execute's output goes to the log: \(result)")
        let granted = try self.sandbox("exec = [\"env\"]\nenv = [\"TOKEN\"]")
        #expect(try await inHome(["plugins", "allow", "escape"], granted).status == 0)
        let withToken = try await run(["e:run('env')"], in: granted)
        #expect(withToken.stdoutLines.first?.contains("TOKEN=s3cr3t-token") == true, "\(withToken)")
    }

    /// os.remove and os.rename act on the name itself (a link is removed, not what it leads
    /// to), from the granted folder; a program cannot run where the kernel cannot confine it.
    @Test func removeAndRenameActOnTheNameItselfAndExecNeedsLandlock() async throws {
        let sandbox = try self.sandbox("write = [\"~/allowed\"]\nexec = [\"echo\"]")
        let home = sandbox.path
        try sandbox.write("allowed/real", "inside\n")
        try FileManager.default.createSymbolicLink(atPath: home + "/allowed/link", withDestinationPath: home + "/allowed/real")
        #expect(try await inHome(["plugins", "allow", "escape"], sandbox).status == 0)
        let result = try await run(["e:remove('\(home)/allowed/link')", "e:rename('\(home)/allowed/real', '\(home)/allowed/moved')",
                                    "e:rename('\(home)/allowed/moved', '\(home)/moved')", "e:remove('\(home)/allowed/nothing')"], in: sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 5, "\(result)")
        #expect(lines[0] == "ok true" && lines[1] == "ok true", "\(lines)")
        #expect(lines[2].hasPrefix("refused") && lines[2].contains("os.rename(\"\(home)/allowed/moved\", \"\(home)/moved\"): permission: plugin 'escape' may not write \(home)/moved"), "\(lines[2])")
        #expect(lines[3].hasPrefix("refused") && lines[3].contains("\(home)/allowed/nothing: No such file or directory"), "\(lines[3])")
        let files = FileManager.default
        #expect(!files.fileExists(atPath: home + "/allowed/link") && !files.fileExists(atPath: home + "/allowed/real"))
        #expect(files.fileExists(atPath: home + "/allowed/moved") && !files.fileExists(atPath: home + "/moved"))
        let unconfined = try await inHome(["-e", "task(function() print((services.escape:run('echo hi'):gsub('\\n', ' '))) end)"], sandbox,
                                          environment: ["CRESCENT_LANDLOCK_ABI": "0"])
        #expect(unconfined.stdoutLines.first?.contains("io.popen: permission: plugin 'escape' may not run \"echo hi\": the kernel offers no Landlock to confine it") == true, "\(unconfined)")
    }

    /// Fourth permissions attack X12: timers live in the host's memory, outside the plugin VM's
    /// `memory_mib`: a plugin asking nothing grew the host ~530 MB with `timer.after`. At most
    /// 10,000 are active at once; the next raises at the plugin's line, and cancelled ones make room.
    @Test func itsTimersAreBoundedInNumber() async throws {
        let sandbox = try self.sandbox()
        let result = try await run(["e:timers(12000)", "e:timers(10)"], in: sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 3, "\(result)")
        #expect(lines[0].hasPrefix("made 10000 ") && lines[0].contains("main.lua:40: plugin 'escape' has 10000 timers active, the most a plugin may have"), "\(lines[0])")
        #expect(lines[1] == "made 10 ", "\(lines[1])")
        #expect(lines[2] == "pong\tscript continues", "\(result)")
    }

    /// package.searchpath looks only where the plugin may read: a file outside its grants is
    /// "not granted" whether it exists or not.
    @Test func searchpathTellsNothingOfFilesOutsideTheGrants() async throws {
        let sandbox = try self.sandbox()
        let home = sandbox.path
        let result = try await run(["e:searchpath('\(home)/secret.txt')", "e:searchpath('\(home)/missing.txt')",
                                    "e:searchpath('\(home)/plugins/escape/?.lua')"], in: sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 4, "\(result)")
        #expect(lines[0] == "ok nil no file '\(home)/secret.txt' (not granted)", "\(lines[0])")
        #expect(lines[1] == "ok nil no file '\(home)/missing.txt' (not granted)", "\(lines[1])")
        #expect(lines[2] == "ok \(home)/plugins/escape/x.lua nil" || lines[2] == "ok nil no file '\(home)/plugins/escape/x.lua'", "\(lines[2])")
    }
}

/// Fourth permissions attack X8, its third form, at open time: a Lua plugin's granted folders are
/// resolved when it starts, and each open begins at the folder by that path. A plugin that may
/// write `granted` could move `granted/sub` (granted to read) away and put a link
/// `granted/sub -> /secret` in its place between the check and the open; the folder was opened
/// following it. It is opened without following any link now: the open is refused.
@Suite struct PluginOpenBeneathTests {
    @Test func aGrantedFolderSwappedForALinkIsNotFollowed() throws {
        let sandbox = try Sandbox()
        try sandbox.write("granted/sub/mine.txt", "MINE")
        try sandbox.write("secret/key.txt", "TOPSECRET")
        let real = URL(fileURLWithPath: sandbox.path).resolvingSymlinksInPath().path
        let root = real + "/granted/sub"
        let mine = crescent_open_beneath(root, "mine.txt", O_RDONLY, 0)
        #expect(mine >= 0, "the granted folder itself opens: \(mine)")
        if mine >= 0 { close(mine) }
        #expect(rename(root, root + "-moved") == 0)
        #expect(symlink(real + "/secret", root) == 0)
        let swapped = crescent_open_beneath(root, "key.txt", O_RDONLY, 0)
        if swapped >= 0 { close(swapped) }
        #expect(swapped == -EXDEV, "a link swapped in for the granted folder is not followed: \(swapped)")
        let itself = crescent_open_beneath(root, "", O_RDONLY | O_DIRECTORY, 0)
        if itself >= 0 { close(itself) }
        #expect(itself == -EXDEV, "\(itself)")
    }
}
