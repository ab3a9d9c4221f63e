import CrescentKit
import Model
import Foundation
import Synchronization

/// `crescent plugins install` and `remove`: a plugin folder, a git repository (a path or a URL) or
/// a `.tar.gz` archive copied into the user's plugin folder after its manifest and its contents
/// (``PluginContents``: files and folders only, bounded) are checked. Nothing of the plugin runs:
/// git clones without hooks, tar only unpacks.
enum PluginInstaller {
    /// Installs the plugin `source` names and answers its manifest (in its new folder). Over an
    /// installed newer version, `downgrade` (the installed manifest, the incoming one) decides
    /// whether to go on, as package managers ask before a downgrade; refused, nothing changes.
    static func install(_ source: String, builtins: [String],
                        downgrade: (PluginManifest, PluginManifest) -> Bool) -> Result<PluginManifest, PluginProblem> {
        guard let destination = PluginSearch.userFolder() else {
            return .failure(PluginProblem("cannot find the user's plugin folder: HOME is not set"))
        }
        let files = FileManager.default
        // A folder only its user reads (mkdtemp's 0700) holds the copy: it was made 0755, and a
        // copy left behind could be read by anyone (attack new27g D8).
        var template = Array((files.temporaryDirectory.path + "/crescent-install-XXXXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) != nil else {
            let temporary = files.temporaryDirectory.path
            return .failure(PluginProblem("\(source): cannot make a folder in \(temporary) to check the plugin in (\(String(cString: strerror(errno)))); set TMPDIR to a writable folder"))
        }
        let holder = String(cString: template)
        let staging = holder + "/plugin"
        defer { try? files.removeItem(atPath: holder) }
        do throws(PluginProblem) {
            try fetch(source, into: staging)
            let folder = try pluginFolder(in: staging, source: source)
            let checked: PluginManifest
            do throws(PluginProblem) {
                checked = try PluginManifest.load(folder: folder, hostVersion: CrescentVersion.current)
            } catch {
                throw PluginProblem(shown(error.message, staging: staging, source: source))
            }
            if let clash = checked.services.first(where: builtins.contains) {
                throw PluginProblem(shown(checked.path, staging: staging, source: source)
                    + ": field 'services': service '\(clash)' is already provided by the builtin plugins (choose another service name)")
            }
            let target = destination + "/" + checked.name
            // An installed plugin whose manifest no longer loads is replaced without a question.
            if let installed = try? PluginManifest.load(folder: target, hostVersion: CrescentVersion.current),
               checked.isOlder(than: installed), !InterruptCleanup.removing(holder, while: { downgrade(installed, checked) }) {
                throw PluginProblem("plugin '\(checked.name)' \(installed.version) is installed in \(target), and \(source) holds "
                    + "\(checked.version), an older version: installing it would be a downgrade; nothing was installed "
                    + "(run crescent plugins install --force \(source) to downgrade)")
            }
            try? files.createDirectory(atPath: destination, withIntermediateDirectories: true)
            // Copied whole beside the plugins first (a hidden name, which no search lists), then
            // renamed into place: a failed copy never leaves a half-installed plugin, nor the
            // older version moved aside.
            let suffix = UUID().uuidString.prefix(8)
            let incoming = destination + "/.\(checked.name).new-\(suffix)"
            let replaced = destination + "/.\(checked.name).old-\(suffix)"
            do throws(PluginProblem) {
                try copy(folder, to: incoming, shown: source, into: destination)
            } catch {
                try? files.removeItem(atPath: incoming)
                throw error
            }
            if files.fileExists(atPath: target) || (try? files.destinationOfSymbolicLink(atPath: target)) != nil {
                do throws(PluginProblem) {
                    try move(target, to: replaced)
                } catch {
                    try? files.removeItem(atPath: incoming)
                    throw error
                }
            }
            do throws(PluginProblem) {
                try move(incoming, to: target)
            } catch {
                if (try? files.attributesOfItem(atPath: replaced)) != nil { try? move(replaced, to: target) }
                try? files.removeItem(atPath: incoming)
                throw error
            }
            try? files.removeItem(atPath: replaced)
            return .success(try PluginManifest.load(folder: target, hostVersion: CrescentVersion.current))
        } catch {
            // Whatever still names the temporary copy (a git or tar message) names the source.
            return .failure(PluginProblem(shown(error.message, staging: staging, source: source)))
        }
    }

    /// `text` with the temporary copy's paths named as the user gave the plugin: a folder or a
    /// repository by its own name (`src/tune/plugin.toml`), an archive by its name and the entry
    /// (`tune.tar.gz: tune/plugin.toml`).
    static func shown(_ text: String, staging: String, source: String) -> String {
        let archive = source.hasSuffix(".tar.gz") || source.hasSuffix(".tgz")
        let named = text.replacingOccurrences(of: staging + "/", with: archive ? source + ": " : source + "/")
        return named.replacingOccurrences(of: staging, with: source)
    }

    /// Removes plugin `name` from the user's plugin folder and answers the folder removed.
    static func remove(_ name: String) -> Result<String, PluginProblem> {
        guard let destination = PluginSearch.userFolder() else {
            return .failure(PluginProblem("cannot find the user's plugin folder: HOME is not set"))
        }
        let target = destination + "/" + name
        guard !name.isEmpty, !name.contains("/"), name != ".", name != "..",
              FileManager.default.fileExists(atPath: target + "/plugin.toml") else {
            return .failure(PluginProblem("no plugin '\(name)' is installed in \(destination) (crescent plugins remove removes only what install put there)"))
        }
        // Renamed aside first (a hidden name, which no search lists), then deleted: an install or
        // remove of the same plugin running meanwhile sees it whole or gone, and a remove that
        // loses the race says so (deleting in place it met files changing under it and said
        // "You don't have permission." or "The file doesn't exist.").
        let aside = destination + "/.\(name).removed-\(UUID().uuidString.prefix(8))"
        guard rename(target, aside) == 0 else {
            let code = errno
            if code == ENOENT {
                return .failure(PluginProblem("plugin '\(name)' was removed from \(destination) by another command meanwhile: nothing left to remove"))
            }
            return .failure(PluginProblem("cannot remove \(target): \(String(cString: strerror(code))) (remove the folder by hand, then run the command again)"))
        }
        do {
            try FileManager.default.removeItem(atPath: aside)
        } catch {
            return .failure(PluginProblem("plugin '\(name)' is removed, but its files in \(aside) could not be deleted: \(FileErrorText.reason(error)) (remove that folder by hand)"))
        }
        return .success(target)
    }

    /// Copies, clones or unpacks `source` into the new folder `staging`.
    private static func fetch(_ source: String, into staging: String) throws(PluginProblem) {
        var isFolder: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: source, isDirectory: &isFolder)
        if source.hasSuffix(".tar.gz") || source.hasSuffix(".tgz") {
            guard exists, !isFolder.boolValue else { throw PluginProblem("\(source): no such archive") }
            // A FIFO there held the install for good (tar waiting for a writer): only a regular
            // file (a link to one included) is unpacked.
            var status = stat()
            guard stat(source, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
                throw PluginProblem("\(source): not a regular file (a FIFO, a device or a socket): an archive to install must be a file")
            }
            do {
                try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
            } catch {
                let temporary = FileManager.default.temporaryDirectory.path
                throw PluginProblem("\(source): cannot unpack it: no folder can be made in \(temporary) (\(FileErrorText.reason(error))); set TMPDIR to a writable folder")
            }
            // Its listing first: nothing past the bounds, nothing but files and folders is unpacked.
            _ = try PluginContents.check(archive: source)
            // GNU tar keeps members inside the folder (it refuses `..` and strips a leading `/`;
            // the listing check refused both already, naming them).
            try run(["tar", "-xzf", source, "-C", staging, "--no-same-owner", "--no-same-permissions"], what: "unpacking \(source)")
            // Paths are bounded inside the plugin: an archive's top folder does not count.
            try PluginContents.check(folder: staging, shown: source,
                                     topFolder: !FileManager.default.fileExists(atPath: staging + "/plugin.toml"))
        } else if exists && isFolder.boolValue && !FileManager.default.fileExists(atPath: source + "/.git") {
            // Checked before the copy, which would wait for ever on a FIFO.
            try PluginContents.check(folder: source, shown: source)
            try copy(source, to: staging, shown: source, into: FileManager.default.temporaryDirectory.path)
            try PluginContents.check(folder: staging, shown: source)
        } else if exists || source.contains("://") || source.hasPrefix("git@") || source.hasSuffix(".git") {
            // No hooks, no submodules: cloning runs nothing of the repository.
            // A server that accepts and never answers held the install without bound or word:
            // git's http gives up after 20 s below 1 byte a second (ssh has its own settings).
            try run(["git", "-c", "core.hooksPath=/dev/null", "-c", "http.lowSpeedLimit=1", "-c", "http.lowSpeedTime=20",
                     "clone", "--quiet", "--depth", "1", "--", source, staging],
                    what: "cloning \(source)")
            try? FileManager.default.removeItem(atPath: staging + "/.git")
            try PluginContents.check(folder: staging, shown: source)
        } else {
            throw PluginProblem("\(source): not a plugin folder, a git repository or a .tar.gz archive")
        }
    }

    /// The folder holding plugin.toml: `staging` itself or its one subfolder (an archive's top
    /// folder). Two plugins, or a plugin's folder with other entries beside it, are refused as
    /// such (they were "holds no plugin.toml").
    private static func pluginFolder(in staging: String, source: String) throws(PluginProblem) -> String {
        if FileManager.default.fileExists(atPath: staging + "/plugin.toml") { return staging }
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        let plugins = entries.filter { FileManager.default.fileExists(atPath: staging + "/" + $0 + "/plugin.toml") }
        if entries.count == 1, plugins.count == 1 { return staging + "/" + entries[0] }
        if plugins.count > 1 {
            // Names as the archive or folder has them, control characters written as escapes.
            throw PluginProblem("\(source): holds \(plugins.count) plugins (\(plugins.map { visible($0, limit: 200) }.joined(separator: ", "))): one install "
                + "takes one plugin; install each from a folder or archive of its own; nothing was installed")
        }
        if let plugin = plugins.first {
            let beside = entries.filter { $0 != plugin }
            throw PluginProblem("\(source): holds the plugin folder \(visible(plugin, limit: 200)) and beside it \(beside.map { visible($0, limit: 200) }.joined(separator: ", ")): "
                + "a plugin's files belong inside its folder (or plugin.toml at the top, with no folder); nothing was installed")
        }
        throw PluginProblem("\(source): holds no plugin.toml (a plugin is a folder with a plugin.toml)")
    }

    /// Copies the folder `from` (the plugin `shown`) to `to` inside the folder `into`
    /// (``PluginCopy``: files and folders only, never through a link).
    private static func copy(_ from: String, to: String, shown: String, into: String) throws(PluginProblem) {
        if let failure = PluginCopy.copy(from, to: to) {
            throw PluginProblem("\(shown): cannot copy the plugin into \(into): \(failure); nothing was installed")
        }
    }

    private static func move(_ from: String, to: String) throws(PluginProblem) {
        do {
            try FileManager.default.moveItem(atPath: from, toPath: to)
        } catch {
            throw PluginProblem("cannot move \(from) to \(to): \(FileErrorText.reason(error)); nothing was installed")
        }
    }

    /// Runs a program (found on PATH), its output kept for the message when it fails.
    private static func run(_ arguments: [String], what: String) throws(PluginProblem) {
        let errors = Pipe()
        let process = try start(arguments, output: FileHandle.nullDevice, errors: errors, what: what)
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw PluginProblem("\(what) failed: \(said.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// Starts a program (found on PATH) with no stdin, its stdout and stderr as given.
    static func start(_ arguments: [String], output: Any, errors: Any, what: String) throws(PluginProblem) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["GIT_TERMINAL_PROMPT"] = "0"
        process.environment = environment
        process.standardError = errors
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw PluginProblem("\(what): cannot run \(arguments[0]): \(FileErrorText.reason(error)) (is \(arguments[0]) installed?)")
        }
        return process
    }

    /// On a terminal, asks `question` and answers whether the user typed y; elsewhere the
    /// command itself is the consent. End of input (Ctrl-D, a terminal that closed) is a no at
    /// once, said on stderr. There is no time limit, as apt and pip set none: the user started the
    /// command and nothing is held meanwhile (the incoming copy waits in a temporary folder, what
    /// is installed is untouched until the answer).
    static func confirm(_ question: String) -> Bool {
        guard ProcessIO.isTerminal(0) else { return true }
        ProcessIO.writeOut(question + " [y/N] ")
        guard let answer = readAnswer() else {
            ProcessIO.writeOut("\n")
            ProcessIO.writeError("crescent: no answer (the input ended): taken as no\n")
            return false
        }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// A line from stdin (a terminal), without its newline; nil at the end of input. Read a
    /// few times a second rather than blocking in `readLine`, so that a signal noted meanwhile
    /// (``InterruptCleanup``) ends the wait, as an empty answer.
    private static func readAnswer() -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while !InterruptCleanup.interrupted {
            var ready = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) > 0 else { continue }
            let count = read(0, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            // An answer is a word: a pasted megabyte is not kept.
            if line.count < 4096 { line.append(byte) }
        }
        return ""
    }

    static func fail(_ message: String) -> Never {
        ProcessIO.writeError("crescent: \(message)\n")
        ProcessIO.exit(1)
    }
}

/// The signal that interrupted the question ``InterruptCleanup`` guards (0: none). Set from the
/// signal handler: an atomic store is all it does.
private let interruptingSignal = Atomic<Int32>(0)

/// Removes a temporary folder when SIGINT or SIGTERM ends the command while it waits for a
/// person (the downgrade question), then exits 130 or 143 as the other commands do: the
/// interrupted install left its copy of the plugin behind (attack new27g D8). The handler only
/// notes the signal; the question's read (``PluginInstaller/confirm(_:)``) looks for it a few
/// times a second, whichever thread the signal reached.
enum InterruptCleanup {
    /// True once SIGINT or SIGTERM came while a guarded question waited.
    static var interrupted: Bool { interruptingSignal.load(ordering: .relaxed) != 0 }

    /// Runs `body` with `folder` removed, and the command ended, if SIGINT or SIGTERM comes
    /// meanwhile.
    static func removing<Answer>(_ folder: String, while body: () -> Answer) -> Answer {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signalNumber in interruptingSignal.store(signalNumber, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        var savedInterrupt = sigaction(), savedTerminate = sigaction()
        sigaction(SIGINT, &action, &savedInterrupt)
        sigaction(SIGTERM, &action, &savedTerminate)
        let answer = body()
        sigaction(SIGINT, &savedInterrupt, nil)
        sigaction(SIGTERM, &savedTerminate, nil)
        let signalNumber = interruptingSignal.load(ordering: .relaxed)
        guard signalNumber != 0 else { return answer }
        try? FileManager.default.removeItem(atPath: folder)
        ProcessIO.writeError("\ncrescent: interrupted (\(signalNumber == SIGINT ? "SIGINT" : "SIGTERM")): nothing was installed\n")
        ProcessIO.exit(128 + signalNumber)
    }
}
