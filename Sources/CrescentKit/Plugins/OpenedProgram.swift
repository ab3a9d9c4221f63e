import Model
#if canImport(Glibc)
import Glibc
#endif

/// A program a plugin may run, opened once by the host: the loader check reads the file that was
/// opened, Landlock's execute right goes to that file, and the child runs that file
/// (`execveat(fd, "", ..., AT_EMPTY_PATH)`). A check of the path followed by an `execve` of the
/// path let a plugin rename a copy of the loader over its granted program between the two, and
/// the loader then ran a program not granted.
///
/// A `#!` script is run the way the kernel would run it, by the host: its `#!` line is parsed,
/// the interpreter (an absolute path only) is opened and checked, and the child runs that open
/// interpreter with the script as `/dev/fd/N`, so nothing is looked up by path after the check.
/// The kernel opened the interpreter by path at the exec: one swapped for a link of the loader
/// (which always has the execute right) between the check and the exec ran it, and a relative
/// interpreter (`#!xq`, a loader copy in the plugin's folder) was never checked at all.
struct OpenedProgram {
    /// The file the child executes: the program, or for a script its last interpreter (the
    /// one that is no script itself). Close-on-exec in the host.
    let executed: Int32
    /// The scripts of a `#!` chain (the program, then each interpreter that is a script itself):
    /// each stays open across the exec, for the next to read it as /dev/fd/N.
    let scripts: [Int32]
    /// The words the executed file gets before the program's own arguments (in place of the
    /// program's path as `argv[0]`): for a script, the interpreter's path as its line wrote it,
    /// its optional argument, and `/dev/fd/N` of the script; each level of a chain in turn.
    let leadingArguments: [String]
    /// Other files opened and checked for the execute right (for `#!/usr/bin/env NAME`, NAME's).
    let others: [Int32]

    /// Every file opened: each gets Landlock's read and execute right.
    var descriptors: [Int32] { [executed] + scripts + others }

    /// Whether the program is a `#!` script.
    var isScript: Bool { !scripts.isEmpty }

    /// What opening a program answered.
    enum Opening {
        case opened(OpenedProgram)
        /// It is the dynamic loader, or its `#!` line runs the loader: how to name it in a refusal.
        case loader(String)
        /// Its `#!` line names what the host does not run (a relative interpreter): why.
        case refused(String)
        /// It could not be opened or is no regular file: why.
        case failed(String)
    }

    /// The most `#!` levels the kernel follows (its own bound), so a chain deeper is refused.
    static let maximumDepth = 4

    /// Opens the program at `path` (absolute) and the interpreters of its `#!` lines, at most
    /// ``maximumDepth`` deep, and checks each opened file for the loader.
    static func open(_ path: String) -> Opening {
        var opened: [Int32] = []
        func ending(_ answer: Opening) -> Opening {
            for descriptor in opened { _ = Glibc.close(descriptor) }
            return answer
        }
        func openChecked(_ file: String, depth: Int) -> (Int32?, Opening?) {
            // Non-blocking: a FIFO swapped in would otherwise hold the host's loop.
            let descriptor = Glibc.open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { return (nil, .failed("\(file): \(String(cString: strerror(errno)))")) }
            opened.append(descriptor)
            var status = stat()
            guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
                return (nil, .failed("\(file) is not a regular file"))
            }
            if PluginExecEntry.isLoader(file, opened: descriptor) {
                guard depth == 0 else { return (nil, .loader("the dynamic loader (\(path)'s #! line runs it)")) }
                let named = PluginExecEntry.isLoader(named: file)
                return (nil, .loader(named ? "the dynamic loader" : "the dynamic loader (\(path) is a copy or link of it, by its contents)"))
            }
            return (descriptor, nil)
        }
        var scripts: [Int32] = []
        var others: [Int32] = []
        // Built inside out: each level puts its interpreter's words in front of what it had.
        var leading: [String] = []
        var current = path
        for depth in 0...maximumDepth {
            let (descriptor, problem) = openChecked(current, depth: depth)
            if let problem { return ending(problem) }
            guard let descriptor else { return ending(.failed("\(current): nothing opened")) }
            guard let line = interpreterLine(descriptor) else {
                return .opened(OpenedProgram(executed: descriptor, scripts: scripts, leadingArguments: leading, others: others))
            }
            guard depth < maximumDepth else {
                return ending(.failed("\(path): its #! interpreters are nested more than \(maximumDepth) deep, the most the kernel runs"))
            }
            guard line.interpreter.hasPrefix("/") else {
                return ending(.refused("\(path): \(depth == 0 ? "its" : "the #! line of its interpreter \(current) names") #! line names the interpreter '\(visible(line.interpreter))', a relative path, which would be looked up from the folder the program runs in and never checked: write the interpreter's absolute path (#!/usr/bin/python3)"))
            }
            scripts.append(descriptor)
            leading = [line.interpreter] + (line.argument.map { [$0] } ?? []) + ["/dev/fd/\(descriptor)"] + leading.dropFirst()
            // `#!/usr/bin/env NAME` runs NAME found on PATH: its file gets the execute right too.
            if line.interpreter.hasSuffix("/env"),
               let name = line.argument?.split(whereSeparator: { $0 == " " || $0 == "\t" }).first(where: { !$0.hasPrefix("-") }),
               let named = PluginSandbox.program(String(name), folder: "/", path: PluginSandbox.confinedPath) {
                let (other, problem) = openChecked(named, depth: depth + 1)
                if let problem { return ending(problem) }
                if let other { others.append(other) }
            }
            current = line.interpreter
        }
        return ending(.failed("\(path): nothing opened"))
    }

    /// The `#!` line of the open file `descriptor` as the kernel reads it (at most 256 bytes, to
    /// the first newline): the interpreter (up to the first space or tab) and the rest, spaces
    /// and tabs trimmed, as one optional argument. Nil when the file has no such line.
    static func interpreterLine(_ descriptor: Int32) -> (interpreter: String, argument: String?)? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 2, buffer[0] == UInt8(ascii: "#"), buffer[1] == UInt8(ascii: "!") else { return nil }
        let blank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var line = buffer[2..<count].prefix { $0 != 10 }
        while let first = line.first, blank(first) { line = line.dropFirst() }
        while let last = line.last, blank(last) { line = line.dropLast() }
        let interpreter = line.prefix { !blank($0) }
        guard !interpreter.isEmpty else { return nil }
        var rest = line.dropFirst(interpreter.count)
        while let first = rest.first, blank(first) { rest = rest.dropFirst() }
        return (String(decoding: interpreter, as: UTF8.self), rest.isEmpty ? nil : String(decoding: rest, as: UTF8.self))
    }

    /// Closes every file opened (after the spawn: the child has its copies then).
    func close() {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
    }
}
