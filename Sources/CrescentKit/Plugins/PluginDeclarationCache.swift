import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

/// The declarations a folder plugin made when it last started, kept under the data folder
/// (`plugin-declarations/NAME.json`), so a host knows a plugin's services before starting it.
///
/// With them, `crescent services`, `help()` and completion document a plugin's services in full
/// while it has not started, and a process plugin's services exist before its `initialize`
/// answer arrives, so that handshake never holds the loop. A record holds only while nothing it
/// was made from has changed: the plugin's folder, its version, the settings, and the size and change time
/// of every file in the plugin's folder; anything else makes the host start the plugin to learn
/// them again. No record is kept for a `:memory:` data folder.
struct PluginDeclarationCache {
    let manifest: PluginManifest
    let settings: Value
    /// The record's file, nil when nothing is kept.
    let path: String?

    init(manifest: PluginManifest, settings: Value, dataDirectory: String?) {
        self.manifest = manifest
        self.settings = settings
        if dataDirectory == ":memory:" {
            path = nil
        } else if let base = dataDirectory ?? (try? StoreSettings.defaultDataFolder()) {
            path = base + "/plugin-declarations/" + manifest.name + ".json"
        } else {
            path = nil
        }
    }

    /// The record's bytes when it is a regular file of at most 16 MiB (a FIFO put there held the
    /// start, and a 4 GB file was read whole), else nil: it is then made again.
    private static func read(_ path: String) -> [UInt8]? {
        try? PluginFile.read(path, limit: PluginFile.sourceLimit, what: "the plugin's declarations record")
    }

    /// The declarations recorded for the plugin as it is now, nil when none hold.
    func load() -> [ServiceDeclaration]? {
        // `access` first: a plugin never started has no record, and a failed read builds its message.
        guard let path, access(path, R_OK) == 0, let bytes = Self.read(path), let record = try? Value(jsonBytes: bytes),
              record["stamp"].stringValue == stamp(),
              let declarations = try? ServiceDeclaration.list(from: record["services"]),
              manifest.mismatch(declared: declarations.map(\.name), by: path) == nil else { return nil }
        return declarations
    }

    /// Records `declarations` unless they are recorded already (best effort: a folder that cannot
    /// be written keeps nothing).
    func save(_ declarations: [ServiceDeclaration]) {
        guard let path else { return }
        let record: Value = ["stamp": .string(stamp()), "services": .array(declarations.map(\.jsonValue))]
        let bytes = Array(record.jsonText.utf8)
        if let kept = Self.read(path), kept == bytes { return }
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        Folders.make(folder, mode: 0o700)
        // Written aside and renamed, so a reader never sees half a record.
        let temporary = path + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        if written != bytes.count || rename(temporary, path) != 0 { unlink(temporary) }
    }

    /// What the record was made from, as text: the folder, the version, the settings and the
    /// folder's files, one line each.
    func stamp() -> String {
        var files: [(path: String, line: String)] = []
        Self.listFiles(in: manifest.folder, relative: "", into: &files, depth: 0)
        files.sort { $0.path < $1.path }
        return ([manifest.folder, manifest.version, settings.jsonText] + files.map(\.line)).joined(separator: "\n")
    }

    /// The regular files under `folder` (a few levels down, no hidden entries or `__pycache__`),
    /// each with its line of the stamp: its path, size and modification time.
    private static func listFiles(in folder: String, relative: String, into files: inout [(path: String, line: String)], depth: Int) {
        guard depth < 4, files.count < 1000, let names = Folders.names(in: folder + (relative.isEmpty ? "" : "/" + relative)) else { return }
        for name in names {
            guard !name.hasPrefix("."), name != "__pycache__" else { continue }
            let path = relative.isEmpty ? name : relative + "/" + name
            var status = stat()
            guard stat(folder + "/" + path, &status) == 0 else { continue }
            if (status.st_mode & S_IFMT) == S_IFDIR {
                listFiles(in: folder, relative: path, into: &files, depth: depth + 1)
            } else if (status.st_mode & S_IFMT) == S_IFREG {
                files.append((path, "\(path):\(status.st_size):\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"))
            }
        }
    }
}
