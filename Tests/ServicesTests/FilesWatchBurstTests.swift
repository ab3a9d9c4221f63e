import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// Watches read their events into the reactor's one buffer and stop reading once a read left
/// room for another event: a burst bigger than the buffer is still read whole (the reads go on
/// while they fill it, and poll reports the rest), and two watches reading in turn each get
/// their own names.
@Suite struct FilesWatchBurstTests {
    /// The created names a watch reported, across its batches.
    final class Names: Sendable {
        private let names = Mutex<Set<String>>([])
        func insert(_ name: String) { _ = names.withLock { $0.insert(name) } }
        var all: Set<String> { names.withLock { $0 } }
    }

    private func watch(_ folder: String, _ files: FilesService) throws -> (FileWatcher, Names) {
        let watcher = try files.watch(folder, debounce: 0)
        let names = Names()
        watcher.changes.attach { change in
            guard case .event("didChange", let payload) = change else { return }
            for item in payload["changes"].arrayValue ?? [] where item["kind"].stringValue == "created" {
                names.insert(String((item["path"].stringValue ?? "").dropFirst(folder.count + 1)))
            }
        }
        watcher.start()
        return (watcher, names)
    }

    @Test func aBurstBiggerThanTheReadBufferIsReadWholeByTwoWatchesInTurn() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-burst-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folders = [root + "/one", root + "/two"]
        for folder in folders { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let files = FilesService()
        let (first, firstNames) = try watch(folders[0], files)
        let (second, secondNames) = try watch(folders[1], files)
        defer {
            first.cancel()
            second.cancel()
        }
        try await Task.sleep(for: .milliseconds(100))
        // Names of 200 bytes: each event takes 224 bytes of the 64 KiB buffer, so the 600
        // files' creations, writes and closes in each folder fill it six times over.
        let count = 600
        let padding = String(repeating: "n", count: 190)
        var expected: Set<String> = []
        for index in 0..<count {
            let name = "\(padding)\(String(format: "%05d", index))"
            expected.insert(name)
            for folder in folders { try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/" + name)) }
        }
        // Only the files' own names (a temporary name of an atomic write is none of them).
        let heard = { (names: Names) in names.all.intersection(expected) }
        #expect(await eventually(timeLimit: 20) { heard(firstNames).count == count && heard(secondNames).count == count },
                "heard \(heard(firstNames).count) and \(heard(secondNames).count) of \(count) each")
        #expect(firstNames.all.allSatisfy { !$0.isEmpty && !$0.contains("/") })
    }
}
