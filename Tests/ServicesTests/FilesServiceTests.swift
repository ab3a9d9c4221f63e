import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// The files service on real temporary folders: atomic writes, listings, stats, errors naming
/// the path, and watches (editor saves through a rename, deletes, new subfolders followed, glob
/// filters, bursts coalesced, cancel closing the inotify descriptor).
@Suite(.serialized) struct FilesServiceTests {
    let files = FilesService()
    let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-files-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    private func cleanUp() { try? FileManager.default.removeItem(atPath: folder) }

    @Test func writeIsAtomicAndKeepsTheModeThenReadListAndStatSeeIt() throws {
        defer { cleanUp() }
        let path = folder + "/notes.txt"
        try files.write(path, Array("first".utf8))
        #expect(try files.read(path) == Array("first".utf8))
        chmod(path, 0o600)
        try files.write(path, Array("second".utf8))
        #expect(String(decoding: try files.read(path), as: UTF8.self) == "second")
        let stat = try files.stat(path)
        #expect(stat["kind"] == "file")
        #expect(stat["size"] == 6)
        #expect(stat["mode"] == .integer(0o600), "an existing file keeps its mode")
        #expect(try files.list(folder, glob: nil) == ["notes.txt"], "no temporary file is left behind")
        try files.write(folder + "/b.lua", [])
        #expect(try files.list(folder, glob: "*.lua") == ["b.lua"])
        #expect(try files.stat(folder)["kind"] == "folder")
    }

    @Test func errorsNameThePath() {
        defer { cleanUp() }
        func failure(_ body: () throws(ServiceError) -> Void) -> String {
            do { try body() } catch { return "\(error.code.name): \(error.message)" }
            return "no error"
        }
        #expect(failure { () throws(ServiceError) in _ = try files.read(folder + "/missing") } == "not_found: '\(folder)/missing' does not exist")
        #expect(failure { () throws(ServiceError) in _ = try files.read(folder) } == "invalid_argument: '\(folder)' is a folder: files:list(path) lists it")
        #expect(failure { () throws(ServiceError) in _ = try files.list(folder + "/missing", glob: nil) } == "not_found: '\(folder)/missing' does not exist")
        #expect(failure { () throws(ServiceError) in try files.write(folder + "/no/such/file", [1]) } == "not_found: '\(folder)/no/such' does not exist")
        #expect(failure { () throws(ServiceError) in _ = try files.watch(folder + "/missing") } == "not_found: '\(folder)/missing' does not exist")
        let tooLong = folder + "/" + String(repeating: "n", count: 300)
        #expect(failure { () throws(ServiceError) in try files.write(tooLong, [1]) }
            == "invalid_argument: '\(clipped(tooLong))' is too long: a name may have at most 255 bytes, a path 4095",
            "the path the script gave is named, not its folder")
        let nearTheLimit = folder + "/" + String(repeating: "é", count: 120)
        #expect(failure { () throws(ServiceError) in try files.write(nearTheLimit, [1]) } == "no error",
            "a 240-byte name is written: the temporary file's name is cut to fit")
        #expect(failure { () throws(ServiceError) in _ = try files.read(nearTheLimit) } == "no error")
    }

    /// Issue 38, M2 and M3: the rename replaced whatever was at the path by a file (a link was
    /// cut from its target, a FIFO or a device node replaced), and the file became the writer's.
    @Test func writeGoesThroughALinkRefusesWhatIsNotAFileAndKeepsTheOwner() throws {
        defer { cleanUp() }
        try files.write(folder + "/target.txt", Array("old".utf8))
        symlink("target.txt", folder + "/link.txt")
        try files.write(folder + "/link.txt", Array("new".utf8))
        var status = stat()
        #expect(lstat(folder + "/link.txt", &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the link stays a link")
        #expect(try files.read(folder + "/target.txt") == Array("new".utf8), "its target has the new content")
        symlink("made.txt", folder + "/dangling")
        try files.write(folder + "/dangling", Array("made".utf8))
        #expect(try files.read(folder + "/made.txt") == Array("made".utf8), "a link to nothing makes its target")
        mkfifo(folder + "/fifo", 0o644)
        do throws(ServiceError) {
            try files.write(folder + "/fifo", [1])
            Issue.record("a FIFO was written")
        } catch {
            #expect(error.code == .invalidArgument && error.message.hasPrefix("'\(folder)/fifo' is a FIFO"), "\(error)")
        }
        #expect(lstat(folder + "/fifo", &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "the FIFO is left as it was")
        guard getuid() == 0 else { return }
        // Run as root: another user's file stays theirs, with its setuid bit.
        chown(folder + "/target.txt", 1234, 1234)
        chmod(folder + "/target.txt", 0o4750)
        try files.write(folder + "/target.txt", Array("newer".utf8))
        #expect(stat(folder + "/target.txt", &status) == 0)
        #expect(status.st_uid == 1234 && status.st_gid == 1234, "owner \(status.st_uid):\(status.st_gid)")
        #expect(status.st_mode & 0o7777 == 0o4750, "mode \(String(status.st_mode & 0o7777, radix: 8))")
    }

    /// What a watch reported, one string per batch.
    final class Batches: Sendable {
        private let items = Mutex<[String]>([])
        func append(_ item: String) { items.withLock { $0.append(item) } }
        func withLock<T>(_ body: ([String]) -> T) -> T { items.withLock { body($0) } }
    }

    /// Starts a watch and returns what it reports (a burst that lost events starts with
    /// `overflow:`).
    private func watching(_ watcher: FileWatcher, finished: (@Sendable () -> Void)? = nil) -> Batches {
        let batches = Batches()
        watcher.changes.attach { change in
            guard case .event("didChange", let payload) = change else { return }
            let items = (payload["changes"].arrayValue ?? []).map { item in
                "\(item["kind"].stringValue ?? "?") \(String((item["path"].stringValue ?? "").dropFirst(folder.count + 1)))"
            }
            batches.append((payload["overflow"].boolValue == true ? "overflow: " : "") + items.joined(separator: ", "))
        }
        watcher.start(finished: finished)
        return batches
    }

    /// Lets the watch's first listing happen before the test changes anything.
    private func settle() async { try? await Task.sleep(for: .milliseconds(100)) }

    @Test func anEditorsSaveThroughARenameIsOneModification() async throws {
        defer { cleanUp() }
        try files.write(folder + "/main.lua", Array("v1".utf8))
        // A burst is what comes within the debounce: long enough here that a loaded machine
        // cannot split the write from the rename.
        let watcher = try files.watch(folder, debounce: 0.5)
        let batches = watching(watcher)
        await settle()
        // What editors do: write a temporary file, then rename it over the original.
        try Data("v2".utf8).write(to: URL(fileURLWithPath: folder + "/.main.lua.swp"))
        rename(folder + "/.main.lua.swp", folder + "/main.lua")
        #expect(await eventually { !batches.withLock { $0 }.isEmpty })
        try await Task.sleep(for: .milliseconds(600))
        #expect(batches.withLock { $0 } == ["modified main.lua"])
        watcher.cancel()
    }

    /// Issue 38, M11: a change that came after the burst began was delivered two debounces
    /// after it (the wait started again at the check), not one after the last change.
    @Test func aBurstEndsOneDebounceAfterItsLastChange() async throws {
        defer { cleanUp() }
        let clock = ManualClock()
        let files = FilesService(clock: clock)
        try files.write(folder + "/a", Array("v1".utf8))
        let watcher = try files.watch(folder, debounce: 2)
        let batches = watching(watcher)
        await settle()
        unlink(folder + "/a")
        try await Task.sleep(for: .milliseconds(300))
        _ = clock.advance(by: .seconds(1))
        try Data("v2".utf8).write(to: URL(fileURLWithPath: folder + "/a"))
        try await Task.sleep(for: .milliseconds(300))
        _ = clock.advance(by: .seconds(1))
        try await Task.sleep(for: .milliseconds(300))
        #expect(batches.withLock { $0 }.isEmpty, "1 s after the last change the burst goes on")
        _ = clock.advance(by: .seconds(1))
        #expect(await eventually { batches.withLock { $0 } == ["modified a"] }, "2 s after the last change: \(batches.withLock { $0 })")
        watcher.cancel()
    }

    @Test func createsDeletesAndABurstAreCoalesced() async throws {
        defer { cleanUp() }
        let watcher = try files.watch(folder, debounce: 0.5)
        let batches = watching(watcher)
        await settle()
        for index in 0..<50 { try Data("\(index)".utf8).write(to: URL(fileURLWithPath: folder + "/burst.txt")) }
        try Data().write(to: URL(fileURLWithPath: folder + "/gone.txt"))
        unlink(folder + "/gone.txt")
        #expect(await eventually { !batches.withLock { $0 }.isEmpty })
        try await Task.sleep(for: .milliseconds(700))
        #expect(batches.withLock { $0 } == ["created burst.txt"], "fifty writes and a file made and removed are one change")
        unlink(folder + "/burst.txt")
        #expect(await eventually { batches.withLock { $0 }.count == 2 })
        #expect(batches.withLock { $0 }.last == "deleted burst.txt")
        watcher.cancel()
    }

    @Test func aRecursiveWatchFollowsNewFoldersAndTheGlobFilters() async throws {
        defer { cleanUp() }
        try FileManager.default.createDirectory(atPath: folder + "/old", withIntermediateDirectories: true)
        let watcher = try files.watch(folder, recursive: true, glob: "*.lua", debounce: 0)
        let batches = watching(watcher)
        await settle()
        try Data().write(to: URL(fileURLWithPath: folder + "/old/a.lua"))
        #expect(await eventually { batches.withLock { $0 }.contains("created old/a.lua") })
        try FileManager.default.createDirectory(atPath: folder + "/new/deeper", withIntermediateDirectories: true)
        await settle()
        try Data().write(to: URL(fileURLWithPath: folder + "/new/deeper/b.lua"))
        try Data().write(to: URL(fileURLWithPath: folder + "/new/deeper/skip.txt"))
        #expect(await eventually { batches.withLock { $0 }.contains { $0.contains("new/deeper/b.lua") } }, "\(batches.withLock { $0 })")
        try await Task.sleep(for: .milliseconds(100))
        #expect(!batches.withLock { $0 }.contains { $0.contains("skip.txt") })
        watcher.cancel()
    }

    @Test func aBurstPastTheKernelsQueueSaysEventsWereLostAndTheWatchGoesOn() async throws {
        defer { cleanUp() }
        let watcher = try files.watch(folder, debounce: 0.2)
        let batches = watching(watcher)
        await settle()
        // inotify queues max_queued_events events, then drops the rest with IN_Q_OVERFLOW.
        try overflowTheQueue()
        #expect(await eventually(timeLimit: 60) { batches.withLock { $0 }.contains { $0.hasPrefix("overflow: ") } },
            "the burst says events were lost: \(batches.withLock { $0.map { String($0.prefix(80)) } })")
        #expect(watcher.isActive)
        // Still watching: one more file after the burst arrives on its own.
        try await Task.sleep(for: .milliseconds(400))
        try Data().write(to: URL(fileURLWithPath: folder + "/later"))
        #expect(await eventually(timeLimit: 30) { batches.withLock { $0 }.last == "created later" },
            "\(batches.withLock { $0.suffix(2).map { String($0.prefix(80)) } })")
        watcher.cancel()
    }

    @Test func aRecursiveWatchThatOverflowedWatchesTheFoldersMadeMeanwhile() async throws {
        defer { cleanUp() }
        let watcher = try files.watch(folder, recursive: true, debounce: 0.2)
        let batches = watching(watcher)
        await settle()
        // The folder is made once the queue is full: its own event is lost with the rest.
        try overflowTheQueue { try FileManager.default.createDirectory(atPath: folder + "/late/deeper", withIntermediateDirectories: true) }
        #expect(await eventually(timeLimit: 60) { batches.withLock { $0 }.contains { $0.hasPrefix("overflow: ") } })
        try await Task.sleep(for: .milliseconds(400))
        try Data().write(to: URL(fileURLWithPath: folder + "/late/deeper/found.txt"))
        #expect(await eventually(timeLimit: 30) { batches.withLock { $0 }.last == "created late/deeper/found.txt" },
            "\(batches.withLock { $0.suffix(2).map { String($0.prefix(80)) } })")
        watcher.cancel()
    }

    /// Makes more files in the folder than inotify queues (`max_queued_events` + 100, two events
    /// each: created, closed after writing) while the reactor thread is held, so it cannot read
    /// the queue meanwhile and the kernel drops the rest; then `after`, then lets the reactor go.
    private func overflowTheQueue(after: () throws -> Void = {}) throws {
        let limit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16384
        let count = limit + 100
        try #require(count <= 300_000, "max_queued_events is \(limit): too many files to make here")
        let release = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        DescriptorReactor.shared.submit {
            held.signal()
            release.wait()
        }
        held.wait()
        defer { release.signal() }
        for index in 0..<count {
            let descriptor = open(folder + "/f\(index)", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            if descriptor >= 0 { close(descriptor) }
        }
        try after()
    }

    @Test func deletingTheWatchedFolderReportsItAndEndsTheWatch() async throws {
        defer { cleanUp() }
        let watched = folder + "/watched"
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
        try files.write(watched + "/a.txt", [])
        let before = inotifyDescriptors()
        let watcher = try files.watch(watched, debounce: 0.05)
        let ended = Mutex(false)
        let batches = watching(watcher) { ended.withLock { $0 = true } }
        await settle()
        try FileManager.default.removeItem(atPath: watched)
        #expect(await eventually { ended.withLock { $0 } }, "the watcher lets its owner go: the run can end")
        #expect(!watcher.isActive)
        #expect(batches.withLock { $0 }.joined(separator: "; ").contains("deleted watched"), "\(batches.withLock { $0 })")
        #expect(await eventually { inotifyDescriptors() == before }, "the inotify instance is closed")
    }

    @Test func watchingOneFileSeesOnlyItAndCancelClosesTheDescriptor() async throws {
        defer { cleanUp() }
        try files.write(folder + "/config.toml", [])
        let before = inotifyDescriptors()
        let watcher = try files.watch(folder + "/config.toml", debounce: 0)
        let batches = watching(watcher)
        await settle()
        #expect(inotifyDescriptors() == before + 1, "one inotify instance")
        try files.write(folder + "/other.txt", [])
        try files.write(folder + "/config.toml", Array("x = 1".utf8))
        #expect(await eventually { !batches.withLock { $0 }.isEmpty })
        try await Task.sleep(for: .milliseconds(100))
        #expect(batches.withLock { $0 } == ["modified config.toml"])
        watcher.cancel()
        #expect(!watcher.isActive)
        #expect(await eventually { inotifyDescriptors() == before }, "the inotify instance is closed")
    }
}

/// How many inotify instances this process has open (the watches of this suite, which runs its
/// tests one at a time; no other suite uses inotify).
private func inotifyDescriptors() -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.filter { name in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) == "anon_inode:inotify"
    }.count
}
