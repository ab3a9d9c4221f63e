#if canImport(Glibc)
import Glibc
#endif

/// The rules an `exec` entry of a manifest follows beyond its syntax: it names one program, and
/// not the dynamic loader. `exec = ["*"]` and `["."]` were taken and explained as "may run *
/// (found on /usr/local/bin:/usr/bin:/bin)", which nothing could ever run; and
/// `exec = ["/lib64/ld-linux-x86-64.so.2"]` read as one program while the loader runs any
/// program it is given (`ld.so ./prog`). A program not installed is taken, and said to be
/// missing (``isInstalled(_:)``).
enum PluginExecEntry {
    /// Why the entry `text` of the manifest at `manifest` is refused, or nil when it is taken.
    /// Said after "field 'permissions.exec' ", before the entry and an example.
    static func problem(_ text: String, manifest: String) -> String? {
        if text.hasPrefix("/") {
            if text.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) {
                return "must be an absolute path without . or .. (write the program's own path)"
            }
            var status = stat()
            if text.hasSuffix("/") || (stat(text, &status) == 0 && (status.st_mode & S_IFMT) != S_IFREG) {
                return "must name a program, not a folder or another kind of file (a folder would let the plugin run and read "
                    + "everything beneath it): write the program's own path"
            }
        } else if text.hasPrefix("-") {
            return "must be a program's name, which cannot start with '-' (a program's arguments are not part of the entry)"
        } else if text == "." || text == ".." || !text.unicodeScalars.allSatisfy(isNameCharacter) {
            return "must be one program's name, of letters, digits, '_', '+', '.' and '-' (no pattern such as *: "
                + "each program is named)"
        }
        let folder = manifest.hasSuffix("/" + PluginManifest.fileName)
            ? String(manifest.dropLast(PluginManifest.fileName.count + 1)) : "."
        // A program not installed here is taken (a plugin may run ffmpeg where it is installed;
        // `plugin check` says it is missing, and running it fails naming it).
        let program = PluginSandbox.program(text, folder: folder, path: PluginSandbox.confinedPath) ?? text
        if isLoader(program) {
            return "names \(loaderShown(program)), \(loaderRefusal)"
        }
        // A `#!` interpreter by a relative path is refused when the program runs: said here too.
        if program.hasPrefix("/") {
            switch OpenedProgram.open(program) {
            case .opened(let file): file.close()
            case .refused(let reason): return "names a program the host will not run: \(reason)"
            case .loader, .failed: break
            }
        }
        return nil
    }

    /// `[A-Za-z0-9_+.-]`: what program names are made of (`python3`, `g++`, `x86_64-linux-gnu-gcc`).
    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || scalar == "_" || scalar == "+" || scalar == "." || scalar == "-"
    }

    /// True when `program` is a dynamic loader: one of ``PluginSandbox/loaders`` (resolved: the
    /// same file under another name, /usr/lib64/... or a link, counts), named as loaders are, or
    /// a file that is one whatever its name (``isLoaderFile(_:)``: a copy, a hard link).
    /// A script whose `#!` line names the loader (`#!/lib64/ld-linux-x86-64.so.2 /usr/bin/id`)
    /// is one too: the kernel runs the loader with the rest of the line.
    static func isLoader(_ program: String) -> Bool {
        let resolved = PluginSandbox.resolve(program)
        return isLoaderItself(resolved) || PluginSandbox.interpreters(of: resolved).contains { isLoaderItself(PluginSandbox.resolve($0)) }
    }

    /// True when the open file `descriptor`, opened at `path`, is a dynamic loader: by its name
    /// or path (``isLoader(named:)``), or by what the file opened is (``isLoaderFile(descriptor:)``).
    static func isLoader(_ path: String, opened descriptor: Int32) -> Bool {
        isLoader(named: path) || isLoaderFile(descriptor: descriptor)
    }

    /// True when `path`, resolved, is one of ``PluginSandbox/loaders`` or named as loaders are.
    static func isLoader(named path: String) -> Bool {
        let resolved = PluginSandbox.resolve(path)
        if PluginSandbox.loaders.contains(where: { PluginSandbox.resolve($0) == resolved }) { return true }
        return isLoaderName(resolved.split(separator: "/").last.map(String.init) ?? resolved)
    }

    private static func isLoaderItself(_ resolved: String) -> Bool {
        isLoader(named: resolved) || isLoaderFile(resolved)
    }

    /// What a refusal of the loader says after the program's name.
    static let loaderRefusal = "which runs any program it is given (ld.so PROGRAM), so it would grant every program; "
        + "name the programs the plugin runs instead"

    /// How a loader found at `program` (an entry's file) is named in a refusal: by its name, or
    /// as what the file is when its name does not say so.
    static func loaderShown(_ program: String) -> String {
        let name = PluginSandbox.resolve(program).split(separator: "/").last.map(String.init) ?? program
        let named = isLoaderName(name) || PluginSandbox.loaders.contains { PluginSandbox.resolve($0) == PluginSandbox.resolve(program) }
        if named { return "the dynamic loader" }
        if !isLoaderItself(PluginSandbox.resolve(program)) { return "the dynamic loader (\(program)'s #! line runs it)" }
        return "the dynamic loader (\(program) is a copy or link of it, by its contents)"
    }

    /// Whether the program an entry names is installed: an executable at its absolute path, or
    /// found on ``PluginSandbox/confinedPath``.
    static func isInstalled(_ text: String) -> Bool {
        PluginSandbox.program(text, folder: ".", path: PluginSandbox.confinedPath) != nil
    }
}
