import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// DESIGN.md (Plugins › Permissions): a process plugin granted nothing tries every way out; the
/// kernel refuses each (Landlock, seccomp, a network namespace without interfaces, rlimits), the
/// host and another plugin run on. Granted one permission, it can do exactly that one thing.
@Suite struct ProcessPluginEscapeTests {
    /// `attempt(kind, arg)` answers "ok ..." or "refused <exception>".
    static let program = #"""
        import ctypes, json, os, signal, socket, subprocess, sys

        def attempt(kind, arg):
            try:
                if kind == "read":
                    return "ok " + open(arg).read().strip()
                if kind == "write":
                    open(arg, "w").write("escaped")
                    return "ok written"
                if kind == "connect":
                    socket.create_connection(("127.0.0.1", int(arg)), timeout=2).close()
                    return "ok connected"
                if kind == "exec":
                    return "ok " + subprocess.run([arg, "-c", "echo hello"], capture_output=True, text=True).stdout.strip()
                if kind == "env":
                    value = os.environ.get(arg)
                    return "ok " + value if value is not None else "refused not in the environment"
                if kind == "fork":
                    children = []
                    try:
                        for _ in range(int(arg)):
                            pid = os.fork()
                            if pid == 0:
                                os._exit(0)
                            children.append(pid)
                    finally:
                        for pid in children:
                            os.waitpid(pid, 0)
                    return "ok forked %d" % len(children)
                if kind == "forkbomb":
                    # Children that sleep until killed, as many as it may make (at most arg):
                    # the count is the process limit it met.
                    children = []
                    try:
                        for _ in range(int(arg)):
                            pid = os.fork()
                            if pid == 0:
                                try:
                                    os.execv("/bin/sleep", ["sleep", "60"])
                                finally:
                                    os._exit(1)
                            children.append(pid)
                    except OSError:
                        pass
                    finally:
                        for pid in children:
                            os.kill(pid, signal.SIGKILL)
                        for pid in children:
                            os.waitpid(pid, 0)
                    return "ok forked %d as uid %d" % (len(children), os.getuid())
                if kind == "memfd":
                    # A program not in `exec`, copied into memory and run from there.
                    fd = os.memfd_create("copy", 0)
                    with open(arg, "rb") as source:
                        os.write(fd, source.read())
                    ran = subprocess.run(["/proc/self/fd/%d" % fd], pass_fds=(fd,), capture_output=True, text=True)
                    return "ok ran %s" % ran.stdout.strip()
                if kind == "repoint":
                    link, target = arg.split("|")
                    os.remove(link)
                    os.symlink(target, link)
                    return "ok re-pointed"
                if kind == "memory":
                    blocks = [bytearray(1 << 20) for _ in range(int(arg))]
                    return "ok allocated %d MiB" % len(blocks)
                if kind == "ptrace":
                    libc = ctypes.CDLL(None, use_errno=True)
                    if libc.ptrace(16, os.getppid(), 0, 0) == 0:
                        return "ok attached"
                    return "refused errno " + os.strerror(ctypes.get_errno())
                if kind == "signal":
                    os.kill(os.getppid(), 0)
                    return "ok signalled"
                if kind == "hoststdin":
                    open("/proc/%d/fd/0" % os.getppid(), "w").write("escaped\n")
                    return "ok wrote the host's stdin"
                if kind == "tty":
                    open("/dev/tty", "w").write("escaped\n")
                    return "ok wrote the tty"
                if kind == "raw":
                    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()
                    return "ok raw socket"
                if kind == "mark":
                    marked = socket.socket()
                    marked.setsockopt(socket.SOL_SOCKET, 36, 1)  # SO_MARK: CAP_NET_ADMIN
                    marked.close()
                    return "ok marked"
                if kind == "clock":
                    # settimeofday(NULL, NULL) changes nothing but is checked for CAP_SYS_TIME.
                    libc = ctypes.CDLL(None, use_errno=True)
                    if libc.syscall(164, None, None) == 0:
                        return "ok may set the clock"
                    return "refused errno " + os.strerror(ctypes.get_errno())
                if kind == "unshare":
                    libc = ctypes.CDLL(None, use_errno=True)
                    if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
                        return "ok unshared"
                    return "refused errno " + os.strerror(ctypes.get_errno())
                if kind == "setuid":
                    made = []
                    for way in ("chmod", "open", "mknod"):
                        path = "%s/%s" % (arg, way)
                        try:
                            if way == "chmod":
                                open(path, "w").close()
                                os.chmod(path, 0o4755)
                            elif way == "open":
                                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o2755))
                            else:
                                os.mknod(path, 0o100000 | 0o4755)
                        except OSError:
                            pass
                        if os.path.exists(path) and os.stat(path).st_mode & 0o6000:
                            made.append(way)
                    return "ok made setuid files by " + ",".join(made) if made else "refused every way"
                if kind == "metadata":
                    changed = []
                    for way in ("chmod", "fchmod", "utime", "chown", "xattr", "capability"):
                        try:
                            if way == "chmod":
                                os.chmod(arg, 0o666)
                            elif way == "fchmod":
                                descriptor = os.open(arg, os.O_RDONLY)
                                try:
                                    os.fchmod(descriptor, 0o666)
                                finally:
                                    os.close(descriptor)
                            elif way == "utime":
                                os.utime(arg, (0, 0))
                            elif way == "chown":
                                os.chown(arg, os.getuid(), os.getgid())
                            elif way == "xattr":
                                os.setxattr(arg, "user.crescent", b"1")
                            else:
                                os.setxattr(arg, "security.capability", bytes.fromhex("0100000202000000000000000000000000000000"))
                            changed.append(way)
                        except OSError:
                            pass
                    return "ok changed by " + ",".join(changed) if changed else "refused every way"
                if kind == "udp":
                    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    sent = sender.sendto(b"exfil", ("127.0.0.1", int(arg)))
                    sender.close()
                    return "ok sent %d bytes" % sent
                if kind == "socket":
                    family, kind_, protocol = (int(field) for field in arg.split(","))
                    socket.socket(family, kind_, protocol).close()
                    return "ok socket"
                if kind == "byname":
                    host, port = arg.rsplit(":", 1)
                    socket.create_connection((host, int(port)), timeout=5).close()
                    return "ok connected"
                if kind == "unix":
                    socket.socket(socket.AF_UNIX).connect(arg)
                    return "ok connected"
                return "unknown " + kind
            except BaseException as error:
                return "refused %s: %s" % (type(error).__name__, error)

        for line in sys.stdin:
            message = json.loads(line)
            method, id, params = message.get("method"), message.get("id"), message.get("params") or {}
            if method == "shutdown":
                break
            if id is None:
                continue
            if method == "initialize":
                declared = {"name": "attempt", "args": [{"name": "kind", "type": "string"}, {"name": "arg", "type": "string"}], "returns": "string"}
                answer = {"services": [{"name": "pescape", "summary": "Tries to get out.", "properties": [], "methods": [declared], "events": []}]}
                print(json.dumps({"jsonrpc": "2.0", "id": id, "result": answer}), flush=True)
                continue
            args = params.get("args") or []
            print(json.dumps({"jsonrpc": "2.0", "id": id, "result": attempt(args[0], args[1])}), flush=True)
        """#

    func sandbox(_ permissions: String = "") throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/pescape/plugin.toml", """
            name = "pescape"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "escape.py"]
            services = ["pescape"]

            [permissions]
            memory_mib = 64
            \(permissions)
            """)
        try sandbox.write("plugins/pescape/escape.py", Self.program)
        try sandbox.write("secret.txt", "TOPSECRET\n")
        try sandbox.write("other/secret.txt", "OTHERSECRET\n")
        try FileManager.default.createDirectory(atPath: sandbox.path + "/out", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/plugins/pescape/link", withDestinationPath: sandbox.path + "/secret.txt")
        _ = try luaPluginSandbox("bystander", main: """
            local s = service("bystander", "Unharmed.")
            s:method("ping", {}, "string", "Answers.", function() return "pong" end)
            """, in: sandbox)
        return sandbox
    }

    /// Runs `attempts` (kind, argument) on the plugin, one printed line each.
    func run(_ attempts: [(String, String)], in sandbox: Sandbox) async throws -> RunResult {
        let body = attempts.map { "print((p:attempt(\(luaString($0.0)), \(luaString($0.1))):gsub('\\n', ' ')))" }.joined(separator: "\n")
        return try await inHome(["-e", """
            task(function()
              local p = services.pescape
              \(body)
              print(services.bystander:ping(), p:attempt("env", "CRESCENT_DATA_DIR") ~= nil, "script continues")
            end)
            """], sandbox, environment: ["TOKEN": "s3cr3t-token"], timeLimit: 90)
    }

    @Test func grantedNothingTheKernelRefusesEveryWayOut() async throws {
        let server = try LoopbackListener()
        defer { server.close() }
        let sandbox = try self.sandbox()
        let home = sandbox.path
        let folder = home + "/plugins/pescape"
        let data = home + "/.local/share/crescent/plugin-data/pescape"
        let result = try await run([
            ("read", home + "/secret.txt"),
            ("read", folder + "/link"),
            ("read", folder + "/../../secret.txt"),
            ("read", "/proc/self/root" + home + "/secret.txt"),
            ("write", home + "/out.txt"),
            ("write", data + "/../outside.txt"),
            ("connect", String(server.port)),
            ("exec", "/bin/sh"),
            ("env", "TOKEN"),
            ("fork", "50"),
            ("memory", "200"),
            ("ptrace", ""),
            ("signal", ""),
            ("hoststdin", ""),
            ("tty", ""),
            ("write", data + "/inside.txt"),
            ("read", folder + "/escape.py"),
        ], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        try #require(lines.count == 18, "\(result)")
        for (index, line) in lines.prefix(15).enumerated() {
            #expect(line.hasPrefix("refused"), "attempt \(index + 1): \(line)\n\(result)")
        }
        #expect(lines[0].contains("PermissionError") && lines[0].contains("Permission denied"), "\(lines[0])")
        #expect(lines[8] == "refused not in the environment", "\(lines[8])")
        #expect(lines[9].contains("PermissionError"), "no new processes: \(lines[9])")
        #expect(lines[10].contains("MemoryError"), "\(lines[10])")
        #expect(lines[15] == "ok written", "its data folder is its own: \(lines[15])")
        #expect(lines[16].hasPrefix("ok import ctypes"), "its own folder is readable: \(lines[16])")
        #expect(lines[17] == "pong\ttrue\tscript continues", "\(result)")
        #expect(!result.stdout.contains("TOPSECRET") && !result.stdout.contains("s3cr3t-token"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: home + "/out.txt"))
        #expect(!FileManager.default.fileExists(atPath: home + "/.local/share/crescent/plugin-data/outside.txt"))
        #expect(server.accepted() == 0, "nothing reached the loopback server")
    }

    /// Each permission granted lets it do exactly that one thing.
    @Test func grantedOnePermissionItCanDoExactlyThat() async throws {
        let server = try LoopbackListener()
        defer { server.close() }
        let other = try LoopbackListener()
        defer { other.close() }
        let cases: [(permission: String, allowed: (String, String), expected: String, stillRefused: (String, String))] = [
            ("read = [\"~/secret.txt\"]", ("read", "HOME/secret.txt"), "ok TOPSECRET", ("read", "HOME/other/secret.txt")),
            ("write = [\"~/out\"]", ("write", "HOME/out/file.txt"), "ok written", ("write", "HOME/other/file.txt")),
            ("net = [\"127.0.0.1:\(server.port)\"]", ("connect", String(server.port)), "ok connected", ("connect", String(other.port))),
            ("exec = [\"sh\"]", ("exec", "/bin/sh"), "ok hello", ("exec", "/usr/bin/env")),
            ("env = [\"TOKEN\"]", ("env", "TOKEN"), "ok s3cr3t-token", ("env", "HOME")),
        ]
        for (permission, allowed, expected, stillRefused) in cases {
            let sandbox = try self.sandbox(permission)
            let granted = try await inHome(["plugins", "allow", "pescape"], sandbox)
            #expect(granted.status == 0, "\(granted)")
            func inSandbox(_ attempt: (String, String)) -> (String, String) {
                (attempt.0, attempt.1.replacingOccurrences(of: "HOME", with: sandbox.path))
            }
            let result = try await run([inSandbox(allowed), inSandbox(stillRefused)], in: sandbox)
            let lines = result.stdoutLines
            #expect(lines.first == expected, "\(permission): \(result)")
            #expect(lines.dropFirst().first?.hasPrefix("refused") == true, "\(permission): \(result)")
            #expect(lines.last == "pong\ttrue\tscript continues", "\(permission): \(result)")
        }
    }

    /// Granted a port, it still has no power over the host a root user's capabilities would give
    /// (the attack found a plugin of a host run as root, granted `net`, could open raw sockets,
    /// set CAP_NET_ADMIN socket options and pass the clock's and reboot's checks): it runs in a
    /// user namespace of its own whatever it is granted, and may make no namespace of its own
    /// (the attack's unshare(CLONE_NEWUSER) succeeded: every capability inside a namespace it owns).
    @Test func grantedANetworkPortItHasNoPowerOverTheHost() async throws {
        let server = try LoopbackListener()
        defer { server.close() }
        let sandbox = try self.sandbox("net = [\"127.0.0.1:\(server.port)\"]")
        #expect(try await inHome(["plugins", "allow", "pescape"], sandbox).status == 0)
        let result = try await run([("connect", String(server.port)), ("raw", ""), ("mark", ""), ("clock", ""), ("unshare", "")], in: sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 6, "\(result)")
        #expect(lines[0] == "ok connected", "\(result)")
        for line in lines[1...4] { #expect(line.hasPrefix("refused"), "\(line)\n\(result)") }
        #expect(lines[4] == "refused errno Operation not permitted", "no namespace of its own making: \(lines[4])")
        #expect(lines[5] == "pong\ttrue\tscript continues", "\(result)")
    }

    /// It makes no set-user-ID or set-group-ID file (the attack made one, mode 04755 in its data
    /// folder, owned by the host's user: root's, where the host runs as root), whether by chmod,
    /// by creating it with that mode or by mknod.
    @Test func itMakesNoSetuidFile() async throws {
        let sandbox = try self.sandbox()
        let data = sandbox.path + "/.local/share/crescent/plugins/pescape"
        let result = try await run([("setuid", data)], in: sandbox)
        #expect(result.stdoutLines.first == "refused every way", "\(result)")
        #expect(result.stdoutLines.last == "pong\ttrue\tscript continues", "\(result)")
    }

    /// Fourth permissions attack X15, X13: Landlock does not govern a file's mode, owner, times
    /// or extended attributes, and the seccomp filter let them through: a plugin asking nothing
    /// made the user's key world-writable, set mtimes, and (a host run as root) wrote a
    /// `security.capability` that gave a program root's powers. All are refused, outside its
    /// grants, in its data folder and on a file it may read alike.
    @Test func itChangesNoFilesModeTimesOwnerOrAttributes() async throws {
        let sandbox = try self.sandbox()
        let outside = sandbox.path + "/secret.txt"
        let readable = sandbox.path + "/plugins/pescape/escape.py"
        let data = sandbox.path + "/.local/share/crescent/plugin-data/pescape"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        try sandbox.write(".local/share/crescent/plugin-data/pescape/own.txt", "mine")
        let files = [outside, readable, data + "/own.txt"]
        func state(_ path: String) -> String {
            var status = stat()
            guard stat(path, &status) == 0 else { return "gone" }
            return "\(status.st_mode) \(status.st_mtim.tv_sec) \(status.st_uid)"
        }
        let before = files.map(state)
        let result = try await run(files.map { ("metadata", $0) }, in: sandbox)
        #expect(result.stdoutLines.prefix(3) == ["refused every way", "refused every way", "refused every way"], "\(result)")
        #expect(result.stdoutLines.last == "pong\ttrue\tscript continues", "\(result)")
        #expect(files.map(state) == before, "\(files.map(state)) \(before)")
    }

    /// Fourth permissions attack X4: the kernel exempts root from RLIMIT_NPROC, so with the host
    /// run as root a plugin granted `exec` made 2,916 processes in 6 s past its limit of 64. Its
    /// programs run as nobody then (uid 65534, in and outside its user namespace), and the limit
    /// holds; it still writes its data folder (root's, mode 0700) and reads its own folder.
    @Test func grantedExecAForkBombStopsAtTheProcessLimitEvenForARootHost() async throws {
        let sandbox = try self.sandbox("exec = [\"sleep\"]")
        #expect(try await inHome(["plugins", "allow", "pescape"], sandbox).status == 0)
        let data = sandbox.path + "/.local/share/crescent/plugin-data/pescape"
        let result = try await run([("forkbomb", "400"), ("write", data + "/inside.txt"), ("read", sandbox.path + "/plugins/pescape/escape.py")], in: sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 4, "\(result)")
        let words = lines[0].split(separator: " ")
        let forked = words.count == 6 ? Int(words[2]) : nil
        #expect(forked.map { $0 > 0 && $0 < 64 } == true, "the limit is 64 processes: \(lines[0])")
        if getuid() == 0 {
            #expect(lines[0].hasSuffix("as uid 65534"), "a root host's plugin runs as nobody: \(lines[0])")
        }
        #expect(lines[1] == "ok written", "its data folder stays its own: \(result)")
        #expect(lines[2].hasPrefix("ok import ctypes"), "its own folder stays readable: \(result)")
        #expect(lines[3] == "pong\ttrue\tscript continues", "\(result)")
    }

    /// Fourth permissions attack X8, its third form, while it runs: granted `~/w` to write and
    /// `~/w/lnk` (leading to `~/w/sub`) to read, it re-points the link at a secret folder. Its
    /// Landlock rules hold the folders the paths led to when it started, so through the link it
    /// reads nothing new; the next start asks again (PluginGrantTests.aGrantedLinkRePointedSinceAsksAgain).
    @Test func aGrantedLinkItRePointsLeadsNowhereNewWhileItRuns() async throws {
        let sandbox = try self.sandbox("write = [\"~/w\"]\nread = [\"~/w/lnk\"]")
        try sandbox.write("w/sub/mine.txt", "MINE")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/w/lnk", withDestinationPath: sandbox.path + "/w/sub")
        #expect(try await inHome(["plugins", "allow", "pescape"], sandbox).status == 0)
        let link = sandbox.path + "/w/lnk"
        let result = try await run([("read", link + "/mine.txt"), ("repoint", link + "|" + sandbox.path + "/other"),
                                    ("read", link + "/secret.txt")], in: sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 4, "\(result)")
        #expect(lines[0] == "ok MINE" && lines[1] == "ok re-pointed", "\(result)")
        #expect(lines[2].hasPrefix("refused PermissionError"), "\(result)")
        #expect(!result.stdout.contains("OTHERSECRET"), "\(result)")
    }

    /// Fourth permissions attack X1: granted `exec = ["sleep"]`, it copied /usr/bin/id into a
    /// memfd and ran it through /proc/self/fd/N (in no Landlock rule, not in `exec`). Memory files
    /// of its PID namespace cannot be executed now (vm.memfd_noexec 2); `sleep` still runs.
    @Test func grantedOneProgramItRunsNoOtherFromMemory() async throws {
        let sandbox = try self.sandbox("exec = [\"sleep\"]")
        #expect(try await inHome(["plugins", "allow", "pescape"], sandbox).status == 0)
        let result = try await run([("memfd", "/usr/bin/id"), ("forkbomb", "2")], in: sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 3, "\(result)")
        #expect(lines[0].hasPrefix("refused PermissionError"), "\(result)")
        #expect(lines[1].hasPrefix("ok forked 2"), "a granted program still runs: \(result)")
    }

    /// Fourth permissions attack X6: netlink was open whatever the protocol, so a plugin granted
    /// `net` (which shares the host's network namespace) listed every TCP connection of the
    /// machine (NETLINK_SOCK_DIAG) and opened uevent and audit sockets. Only NETLINK_ROUTE, which
    /// name lookups read, is left.
    @Test func grantedANetworkPortItOpensOnlyRouteNetlinkSockets() async throws {
        let sandbox = try self.sandbox("net = [\"127.0.0.1:9\"]")
        #expect(try await inHome(["plugins", "allow", "pescape"], sandbox).status == 0)
        let result = try await run([("socket", "16,3,4"), ("socket", "16,3,15"), ("socket", "16,3,9"), ("socket", "16,3,0")], in: sandbox)
        let lines = result.stdoutLines
        #expect(lines.count == 5, "\(result)")
        for line in lines.prefix(3) { #expect(line.hasPrefix("refused PermissionError"), "\(result)") }
        #expect(lines.dropFirst(3).first == "ok socket", "\(result)")
        #expect(lines.last == "pong\ttrue\tscript continues", "\(result)")
    }

    /// Fourth permissions attack X14: with a relative `--data-dir`, `CRESCENT_DATA_DIR` was
    /// relative to the host's folder while the plugin's program runs in its own folder: it named
    /// no folder. It is absolute.
    @Test func aRelativeDataFolderReachesThePluginAbsolute() async throws {
        let sandbox = try self.sandbox()
        let result = try await inHome(["--data-dir", "data", "-e", """
            task(function() print((services.pescape:attempt("env", "CRESCENT_DATA_DIR"))) end)
            """], sandbox, timeLimit: 90)
        let real = URL(fileURLWithPath: sandbox.path).resolvingSymlinksInPath().path
        #expect(result.stdoutLines == ["ok \(real)/data/plugin-data/pescape"], "\(result)")
    }

    /// A name server on TCP 127.0.0.1:53 answering every A question with 127.0.0.1 ("ready"
    /// once listening; "denied" when the port cannot be bound, as for a user who is not root).
    static let nameServer = #"""
        import socket, struct, sys
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            server.bind(("127.0.0.1", 53))
        except OSError as error:
            print("denied", error, flush=True)
            sys.exit(0)
        server.listen(8)
        server.settimeout(60)
        print("ready", flush=True)
        def exactly(connection, count):
            data = b""
            while len(data) < count:
                chunk = connection.recv(count - len(data))
                if not chunk:
                    raise EOFError
                data += chunk
            return data
        while True:
            connection, _ = server.accept()
            connection.settimeout(5)
            try:
                while True:
                    query = exactly(connection, struct.unpack("!H", exactly(connection, 2))[0])
                    end = 12
                    while query[end] != 0:
                        end += query[end] + 1
                    question = query[12:end + 5]
                    qtype = struct.unpack("!H", query[end + 1:end + 3])[0]
                    answers = struct.pack("!HHHIH4s", 0xC00C, 1, 1, 60, 4, bytes([127, 0, 0, 1])) if qtype == 1 else b""
                    reply = query[:2] + struct.pack("!HHHHH", 0x8180, 1, 1 if answers else 0, 0, 0) + question + answers
                    connection.sendall(struct.pack("!H", len(reply)) + reply)
            except (EOFError, OSError):
                pass
            connection.close()
        """#

    /// Granted a TCP port, it may not send UDP (second permissions attack D8: a plugin granted
    /// one port sent datagrams to any host and port; Landlock has no UDP rules), nor open sockets
    /// of other kinds; its name lookups go over TCP to the name servers (port 53), so a granted
    /// host name still resolves.
    @Test func grantedANetworkPortItSendsNoDatagramsAndStillResolvesNames() async throws {
        let server = try LoopbackListener()
        defer { server.close() }
        let receiver = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { Glibc.close(receiver) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(receiver, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(receiver, $0, &length) } }
        _ = fcntl(receiver, F_SETFL, O_NONBLOCK)
        let udpPort = UInt16(bigEndian: address.sin_port)

        let sandbox = try self.sandbox("net = [\"granted.test:\(server.port)\"]")
        #expect(try await inHome(["plugins", "allow", "pescape"], sandbox).status == 0)
        try sandbox.write("resolv.conf", "nameserver 127.0.0.1\n")
        let names = Process()
        names.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        names.arguments = ["python3", "-c", Self.nameServer]
        let said = Pipe()
        names.standardOutput = said
        try names.run()
        defer {
            // SIGKILL: the test process's threads may hold SIGTERM blocked, and the child its mask.
            kill(names.processIdentifier, SIGKILL)
            names.waitUntilExit()
        }
        let firstLine = String(decoding: said.fileHandleForReading.availableData, as: UTF8.self)
        let body = """
            task(function()
              local p = services.pescape
              for _, a in ipairs({ {"udp", "\(udpPort)"}, {"socket", "2,2,0"}, {"socket", "10,2,0"}, {"socket", "2,1,132"},
                                   {"socket", "40,1,0"}, {"read", "/etc/resolv.conf"}, {"byname", "granted.test:\(server.port)"} }) do
                print((p:attempt(a[1], a[2]):gsub("\\n", " ")))
              end
            end)
            """
        let result = try await inHome(["-e", body], sandbox, environment: ["CRESCENT_RESOLV_CONF": sandbox.path + "/resolv.conf"], timeLimit: 90)
        let lines = result.stdoutLines
        try #require(lines.count == 7, "\(result)")
        for (index, line) in lines.prefix(5).enumerated() {
            #expect(line.hasPrefix("refused PermissionError"), "attempt \(index + 1): \(line)\n\(result)")
        }
        var byte: UInt8 = 0
        #expect(recv(receiver, &byte, 1, 0) < 0, "a datagram reached the loopback receiver")
        #expect(lines[5] == "ok nameserver 127.0.0.1 options use-vc", "\(lines[5])")
        if firstLine.hasPrefix("ready") {
            #expect(lines[6] == "ok connected", "the granted name resolves over TCP: \(result)")
            #expect(server.accepted() == 1)
        } else {
            // Port 53 takes root to bind: the lookup itself is checked only where the tests run as root.
            #expect(firstLine.hasPrefix("denied"), "\(firstLine)")
        }
    }

    /// Without Landlock a process plugin does not start unless `[plugins] allow_unsandboxed`
    /// names it, and the message says why.
    @Test func withoutLandlockItRunsOnlyWhenAllowedUnsandboxed() async throws {
        let sandbox = try self.sandbox()
        let script = """
            task(function()
              local ok, result = pcall(function() return services.pescape:attempt('env', 'TOKEN') end)
              print(ok, type(result) == "table" and result.message or result)
            end)
            """
        let refused = try await inHome(["-e", script], sandbox, environment: ["CRESCENT_LANDLOCK_ABI": "0"])
        #expect(refused.stdout.contains("plugin 'pescape' is a process plugin and this kernel has no Landlock"), "\(refused)")
        #expect(refused.stdout.contains("[plugins] allow_unsandboxed = [\"pescape\"]"), "\(refused)")
        try sandbox.write("crescent.toml", "[plugins]\nallow_unsandboxed = [\"pescape\"]\n")
        let allowed = try await inHome(["-e", script], sandbox, environment: ["CRESCENT_LANDLOCK_ABI": "0", "TOKEN": "s3cr3t-token"])
        #expect(allowed.stdoutLines == ["true\tok s3cr3t-token"], "unconfined, it sees the host's environment: \(allowed)")
    }
}

/// A TCP listener on 127.0.0.1 that never accepts: a connection completes in its backlog, which
/// ``accepted()`` counts.
final class LoopbackListener: @unchecked Sendable {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        descriptor = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// The connections waiting in the backlog, accepted (and closed) now.
    func accepted() -> Int {
        var count = 0
        while count < 100 {
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { break }
            Glibc.close(connection)
            count += 1
        }
        return count
    }

    func close() { Glibc.close(descriptor) }
}
