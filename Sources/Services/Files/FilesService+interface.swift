import Model

extension FilesService: DeclaredService {
    static let serviceName = "files"

    /// The options of `watch`.
    private static let watchOptions: [OptionTable.Option] = [.boolean("recursive"), .string("glob"), .number("debounce", in: 0...3600)]

    private static let pathArgument = ArgumentSpec("path", .string, "A file or folder, absolute or relative to the current folder.")

    static let declaration: AnyInterface = Interface<FilesService>(
        name: serviceName,
        summary: "Files and folders off the loop: read, atomic write, list, stat, and watches over inotify with bursts coalesced."
    ) { d in
        d.function(
            "watch",
            [pathArgument,
             .init("options", .table, "{ recursive = true (folders below too, new ones followed), glob = \"*.lua\" (names, or paths below with a /; * stays within a name, a part ** is any number of folders), debounce = seconds (default 0.05; 0 delivers each change at once) }.", optional: true,
                   options: watchOptions)],
            returns: "a fileWatcher { path, active, cancel(); event didChange { changes = { { path, kind = \"created\"/\"modified\"/\"deleted\" } } } }",
            "Watches a folder or a file; each burst of changes comes as one didChange. It is owned like a subscription and keeps the run alive until cancelled, or until the watched folder is deleted."
        ) { files, arguments throws(ServiceError) in
            let path = try filePath(arguments[0], "path")
            let options = try OptionTable.check(arguments[1], watchOptions)
            return .handle(ObjectHandle(try files.watch(path, recursive: options["recursive"]?.boolValue ?? false,
                                                        glob: options["glob"]?.stringValue,
                                                        debounce: options["debounce"]?.doubleValue ?? FilesService.defaultDebounce)))
        }
        d.method("read", [pathArgument], returns: "a string, the file's bytes",
                 "Reads a whole file (at most 64 MiB).") { files, arguments async throws(ServiceError) in
            .bytes(try files.read(try filePath(arguments[0], "path")))
        }
        d.method("write", [pathArgument, .init("data", .string, "The file's new content.")], returns: "true",
                 "Replaces a file's content atomically: a temporary file in the same folder, flushed, renamed over it (readers see old or new, never half).") { files, arguments async throws(ServiceError) in
            let bytes: [UInt8] = switch arguments[1] {
            case .string(let string): Array(string.utf8)
            case .bytes(let bytes): bytes
            default: throw ServiceError(.invalidArgument, "data must be a string")
            }
            try files.write(try filePath(arguments[0], "path"), bytes)
            return true
        }
        d.method("list", [.init("path", .string, "A folder."),
                          .init("glob", .string, "Only names matching it (\"*.lua\").", optional: true)],
                 returns: "an array of strings, the names in the folder, sorted (each exactly its bytes, UTF-8 or not)", "Lists a folder.") { files, arguments async throws(ServiceError) in
            .array(try files.list(try filePath(arguments[0], "path"), glob: try glob(arguments[1])).map(\.value))
        }
        d.method("stat", [pathArgument], returns: "a fileStat { path, kind = \"file\"/\"folder\"/\"link\"/\"other\", size, modified (seconds since 1970), mode }",
                 "Describes a path (a link itself, not what it points to).") { files, arguments async throws(ServiceError) in
            try files.stat(try filePath(arguments[0], "path"))
        }
    }.erased

    /// A path argument as its bytes: UTF-8 or not (a name listed or watched is given back as
    /// it came), but never holding a NUL.
    private static func filePath(_ value: Value, _ name: String) throws(ServiceError) -> FilePath {
        guard let path = FilePath(value) else { throw ServiceError(.invalidArgument, "\(name) must be a string") }
        // One answer for every function: read, stat and list said `not_found`, write "names no file".
        guard !path.isEmpty else { throw ServiceError(.invalidArgument, "\(name) is empty: give a file or a folder (\".\" for the current one)") }
        guard !path.bytes.contains(0) else {
            // Shown with the NUL as `\0`: cut at it, the message named another path.
            let shown = path.bytes.split(separator: 0, omittingEmptySubsequences: false).map { FilePath(bytes: $0).shown }.joined(separator: "\\0")
            throw ServiceError(.invalidArgument, "\(name) '\(shown)' holds a NUL byte, which no file name can hold: remove it")
        }
        return path
    }

    /// `list`'s glob: text, or nil when not given.
    private static func glob(_ value: Value) throws(ServiceError) -> String? {
        switch value {
        case .null: return nil
        case .string(let text) where !text.utf8.contains(0): return text
        default: throw ServiceError(.invalidArgument, "glob must be UTF-8 text without a NUL byte, such as \"*.lua\"")
        }
    }
}

extension FileWatcher {
    static let declaration: AnyInterface = Interface<FileWatcher>(
        name: "fileWatcher",
        summary: "A watch of files:watch: its changes come as didChange, one per burst."
    ) { d in
        d.property("path", type: "string", "What it watches, as given.") { $0.filePath.value }
        d.property("active", type: "boolean", "True until cancelled, its owner ended or the watched folder was deleted or moved away.") { .bool($0.isActive) }
        d.action("cancel", [], "Stops watching for good (idempotent).") { watcher, _ throws(ServiceError) in watcher.cancel() }
        d.event("didChange", payload: "{ changes = { { path, kind = \"created\"/\"modified\"/\"deleted\" }, ... }, overflow (true when changes were lost) }",
                "A burst of changes ended: each path once, with what the burst did to it. With overflow = true the system dropped some (more than it queues came at once): list the folder again.")
    }.erased
}
