#if canImport(Glibc)
import Glibc
#endif

/// The hosts listening in a user's ``RemoteFolder``: what `crescent ls` lists and how a client
/// finds the host it names.
public enum RemoteHosts {
    /// A listening host.
    public struct Entry: Sendable {
        public let name: String
        public let path: String
        public let pid: Int32
    }

    /// The live hosts, by name. Sockets of dead hosts are skipped (the next host to take the
    /// name replaces them).
    public static func live(in folder: RemoteFolder = .standard()) -> [Entry] {
        folder.socketNames().compactMap { name in
            let path = folder.socketPath(for: name)
            guard case .live(let pid) = UnixSocket.probe(path) else { return nil }
            return Entry(name: name, path: path, pid: pid)
        }
    }

    /// The host `target` names: a name, a pid, or (nil) the only one running.
    public static func resolve(_ target: String?, in folder: RemoteFolder = .standard()) throws(RemoteError) -> Entry {
        let hosts = live(in: folder)
        guard let target else {
            switch hosts.count {
            case 1: return hosts[0]
            case 0: throw RemoteError("no host is listening in \(folder.path); start one with --listen (crescent --listen script.lua)")
            default:
                throw RemoteError("several hosts are listening (\(hosts.map(\.name).joined(separator: ", "))); name one (crescent ls lists them)")
            }
        }
        if let host = hosts.first(where: { $0.name == target }) { return host }
        if let pid = Int32(target), let host = hosts.first(where: { $0.pid == pid }) { return host }
        let known = hosts.isEmpty ? "none is listening" : "listening: " + hosts.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", ")
        throw RemoteError("no host named '\(target)' is listening (\(known))")
    }
}
