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
    func confine(_ spec: inout crescent_sandbox, program: String, strings: CStrings) {
        let exec = [program] + Self.loaders
            + permissions.exec.compactMap { Self.program($0, folder: folder, path: Self.confinedPath) }
        let read = Self.systemRead + (permissions.net.isEmpty ? [] : Self.networkRead) + self.read
        let ports = permissions.net.compactMap(PluginPermissions.port(of:))
        spec.confine = 1
        spec.read_paths = strings.constants(read.map(Self.resolve))
        spec.read_count = Int32(read.count)
        spec.exec_paths = strings.constants(exec.map(Self.resolve) + [folder])
        spec.exec_count = Int32(exec.count + 1)
        spec.write_paths = strings.constants([dataFolder, "/dev/null"] + write)
        spec.write_count = Int32(write.count + 2)
        spec.ports = strings.ports(ports)
        spec.port_count = Int32(ports.count)
        spec.isolate_network = permissions.net.isEmpty ? 1 : 0
        spec.allow_processes = permissions.exec.isEmpty ? 0 : 1
        spec.memory_bytes = UInt64(permissions.memoryMiB ?? PluginPermissions.defaultMemoryMiB) << 20
        spec.max_files = 256
        spec.max_processes = permissions.exec.isEmpty ? 0 : 64
    }
}
