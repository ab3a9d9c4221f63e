import CSandbox
#if canImport(Glibc)
import Glibc
#endif

/// The kernel confinement of a plugin's programs: a process plugin's program, and what a Lua
/// plugin runs through its `exec` grant (`io.popen`, `os.execute`) — the same ruleset for both.
extension PluginSandbox {
    /// The environment a confined program gets: `PATH` (``confinedPath``) and the granted
    /// variables the host has, nothing else.
    func environment() -> [String: String] {
        var variables = ["PATH": Self.confinedPath]
        for name in permissions.env {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return variables
    }

    /// Fills the confinement of `spec` for `program` (absolute): no_new_privs; Landlock (read: the
    /// system folders, name resolution when `net` is granted, the `read` grants; read and execute:
    /// the program, the loaders, the `exec` programs and the plugin folder; write: its data folder,
    /// /dev/null and the `write` grants); a network namespace without `net`, else only the granted
    /// ports; no new processes without `exec`; rlimits. `strings` keeps the C copies until the spawn.
    ///
    /// With `opened` (what a Lua plugin runs), the child runs that open file, and its execute
    /// right is on that file. The `exec` programs' rights are on the files opened and checked
    /// here: a loader saved at a granted path is left out (it was refused when the plugin loaded),
    /// and a file swapped in at one after this gets no right.
    func confine(_ spec: inout crescent_sandbox, program: String, opened: OpenedProgram? = nil, strings: CStrings) {
        var descriptors = opened?.descriptors ?? []
        for entry in permissions.exec {
            guard let path = Self.program(entry, folder: folder, path: Self.confinedPath),
                  case .opened(let file) = OpenedProgram.open(path) else { continue }
            strings.closeAfterSpawn(file.descriptors)
            descriptors += file.descriptors
        }
        // A process plugin's own program runs by its path (it may be anything, the loader too:
        // what it runs is confined all the same). Only regular files get the execute right: on a
        // folder (an interpreter line `#!/usr/bin/`) the rule would cover everything beneath it.
        let byPath = opened == nil ? [program] + Self.interpreters(of: program) : []
        let exec = (byPath + Self.loaders).filter(Self.isExecutableFile)
        let read = Self.systemRead + (permissions.net.isEmpty ? [] : Self.networkRead) + self.read
        // Name lookups go over TCP (`options use-vc`, below): datagram sockets are refused.
        let ports = permissions.net.isEmpty ? [] : permissions.net.compactMap(PluginPermissions.port(of:)) + [Self.nameServerPort]
        spec.confine = 1
        spec.read_paths = strings.constants(read.map(Self.resolve))
        spec.read_count = Int32(read.count)
        spec.exec_paths = strings.constants(exec.map(Self.resolve) + [folder])
        spec.exec_count = Int32(exec.count + 1)
        spec.exec_fds = strings.descriptors(descriptors)
        spec.exec_fd_count = Int32(descriptors.count)
        if let opened {
            spec.program_fd = opened.executed
            spec.run_program_fd = 1
            spec.keep_fds = strings.descriptors(opened.scripts)
            spec.keep_fd_count = Int32(opened.scripts.count)
        }
        // The data folder by descriptor, opened without following any link on its way (it was
        // checked so, PluginSandbox.dataFolder(of:dataDirectory:)): a link swapped in for it
        // since, in a data folder someone else can change, gets no right (none at all when
        // the open fails: the plugin's writes there fail).
        let data = crescent_open_beneath(dataFolder, "", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        let dataFolders: [Int32] = data >= 0 ? [data] : []
        strings.closeAfterSpawn(dataFolders)
        spec.write_fds = strings.descriptors(dataFolders)
        spec.write_fd_count = Int32(dataFolders.count)
        spec.write_paths = strings.constants(["/dev/null"] + write)
        spec.write_count = Int32(write.count + 1)
        spec.ports = strings.ports(ports)
        spec.port_count = Int32(ports.count)
        spec.isolate_network = permissions.net.isEmpty ? 1 : 0
        if !permissions.net.isEmpty, let text = Self.resolverText() {
            spec.resolver_text = strings.constant(text)
            spec.resolver_folder = strings.constant(folder)
            spec.resolver_scratch = strings.constant(folder + "/resolv.conf")
        }
        spec.allow_processes = permissions.exec.isEmpty ? 0 : 1
        spec.memory_bytes = UInt64(permissions.memoryMiB ?? PluginPermissions.defaultMemoryMiB) << 20
        spec.max_files = 256
        spec.max_processes = permissions.exec.isEmpty ? 0 : 64
    }

    /// The interpreters the kernel runs for the script `program` (`#!` line), and theirs, and for
    /// `#!/usr/bin/env NAME` the program NAME on ``confinedPath``: Landlock's execute right must
    /// cover them too, else a granted script (`./run.sh`, /usr/bin's many scripts) fails with
    /// "exec: Permission denied". At most 4 deep (the kernel's own bound is 4 as well).
    static func interpreters(of program: String) -> [String] {
        var found: [String] = []
        var current = program
        for _ in 0..<4 {
            guard let line = firstLine(current), line.hasPrefix("#!") else { break }
            let words = line.dropFirst(2).split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let interpreter = words.first, interpreter.hasPrefix("/") else { break }
            found.append(interpreter)
            if interpreter.hasSuffix("/env"), let name = words.dropFirst().first(where: { !$0.hasPrefix("-") }),
               let named = Self.program(name, folder: "/", path: confinedPath) {
                found.append(named)
                current = named
            } else {
                current = interpreter
            }
        }
        return found
    }

    /// The first line of the file at `path` (at most 256 bytes: the kernel reads no more of a
    /// `#!` line), nil when it cannot be read.
    private static func firstLine(_ path: String) -> String? {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = Glibc.read(descriptor, &buffer, buffer.count)
        guard count > 2 else { return nil }
        let line = buffer[0..<count].prefix { $0 != 10 }
        return String(decoding: line, as: UTF8.self)
    }

    /// The TCP port of name servers, which a plugin granted `net` may connect to on any host.
    static let nameServerPort: UInt16 = 53

    /// What `/etc/resolv.conf` reads as for a confined program granted `net`: the host's file
    /// (its name servers, search list and options) with `options use-vc`, so the C library asks
    /// the name servers over TCP port 53: Landlock has no rules for UDP, so the sandbox refuses
    /// datagram sockets (a plugin granted one TCP port could send UDP to any host and port).
    /// Nil where the host has no such file (nothing to bind over). `CRESCENT_RESOLV_CONF` in the
    /// host's environment names another file to read it from (the tests' own name server).
    static func resolverText() -> String? {
        let system = "/etc/resolv.conf"
        guard access(system, F_OK) == 0 else { return nil }
        let source = getenv("CRESCENT_RESOLV_CONF").map { String(cString: $0) } ?? system
        var text = ""
        if let file = fopen(source, "r") {
            defer { fclose(file) }
            // At most 64 KiB (a resolv.conf is a few lines); a NUL would end the C string early.
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            let count = fread(&buffer, 1, buffer.count, file)
            text = String(decoding: buffer[0..<count].filter { $0 != 0 }, as: UTF8.self)
        }
        if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
        return text + "options use-vc\n"
    }
}
