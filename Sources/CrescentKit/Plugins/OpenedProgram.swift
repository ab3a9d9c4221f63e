#if canImport(Glibc)
import Glibc
#endif

/// A program a plugin may run, opened once by the host: the loader check reads the file that was
/// opened, Landlock's execute right goes to that file, and the child runs that file
/// (`execveat(fd, "", ..., AT_EMPTY_PATH)`). A check of the path followed by an `execve` of the
/// path let a plugin rename a copy of the loader over its granted program between the two, and
/// the loader then ran a program not granted.
///
/// A `#!` script's interpreters are opened and checked the same way. The kernel opens them by
/// path at the exec, but their execute right is only on the files opened here: one swapped in
/// since has none, and the exec fails.
struct OpenedProgram {
    /// The program's open file (close-on-exec in the host).
    let descriptor: Int32
    /// Whether it starts with `#!`: the child then keeps ``descriptor`` open across the exec,
    /// since its interpreter reads it as /dev/fd/N.
    let isScript: Bool
    /// Its interpreters' open files (and for `#!/usr/bin/env NAME`, NAME's).
    let interpreters: [Int32]

    /// Every file opened: each gets Landlock's read and execute right.
    var descriptors: [Int32] { [descriptor] + interpreters }

    /// What opening a program answered.
    enum Opening {
        case opened(OpenedProgram)
        /// It is the dynamic loader, or its `#!` line runs the loader: how to name it in a refusal.
        case loader(String)
        /// It could not be opened or is no regular file: why.
        case failed(String)
    }

    /// Opens the program at `path` (absolute) and the interpreters of its `#!` lines, at most
    /// 4 deep (the kernel's own bound), and checks each opened file for the loader.
    static func open(_ path: String) -> Opening {
        var opened: [Int32] = []
        func ending(_ answer: Opening) -> Opening {
            for descriptor in opened { _ = Glibc.close(descriptor) }
            return answer
        }
        var pending = [path]
        var isScript = false
        for depth in 0...4 {
            for file in pending {
                // Non-blocking: a FIFO swapped in would otherwise hold the host's loop.
                let descriptor = Glibc.open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
                guard descriptor >= 0 else { return ending(.failed("\(file): \(String(cString: strerror(errno)))")) }
                opened.append(descriptor)
                var status = stat()
                guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
                    return ending(.failed("\(file) is not a regular file"))
                }
                if PluginExecEntry.isLoader(file, opened: descriptor) {
                    guard depth == 0 else { return ending(.loader("the dynamic loader (\(path)'s #! line runs it)")) }
                    let named = PluginExecEntry.isLoader(named: file)
                    return ending(.loader(named ? "the dynamic loader" : "the dynamic loader (\(path) is a copy or link of it, by its contents)"))
                }
            }
            // The next round opens what the last file's `#!` line runs (env's program, when env).
            guard depth < 4, let last = opened.last, let words = Self.interpreterLine(last) else { break }
            if depth == 0 { isScript = true }
            guard let interpreter = words.first, interpreter.hasPrefix("/") else { break }
            pending = [interpreter]
            if interpreter.hasSuffix("/env"), let name = words.dropFirst().first(where: { !$0.hasPrefix("-") }),
               let named = PluginSandbox.program(name, folder: "/", path: PluginSandbox.confinedPath) {
                pending.append(named)
            }
        }
        guard let first = opened.first else { return .failed("\(path): nothing opened") }
        return .opened(OpenedProgram(descriptor: first, isScript: isScript, interpreters: Array(opened.dropFirst())))
    }

    /// The words after `#!` on the first line of the open file `descriptor` (at most 256 bytes:
    /// the kernel reads no more of it), nil when it has no such line.
    private static func interpreterLine(_ descriptor: Int32) -> [String]? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 2, buffer[0] == UInt8(ascii: "#"), buffer[1] == UInt8(ascii: "!") else { return nil }
        let line = String(decoding: buffer[2..<count].prefix { $0 != 10 }, as: UTF8.self)
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }

    /// Closes every file opened (after the spawn: the child has its copies then).
    func close() {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
    }
}
