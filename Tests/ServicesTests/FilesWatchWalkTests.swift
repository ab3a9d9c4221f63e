import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// The first walk of a recursive watch shares the reactor thread with every program's pipes
/// (issue 38, N6): walked at once, a large tree held it (/usr/share: a `run({"true"})` took 0.37 s
/// meanwhile). It is walked a few folders per turn now.
@Suite struct FilesWatchWalkTests {
    /// The most inotify watches any instance of this process holds, from /proc/self/fdinfo.
    static func mostWatchesOfAnInstance() -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fdinfo")) ?? []
        return descriptors.map { descriptor in
            let text = (try? String(contentsOfFile: "/proc/self/fdinfo/" + descriptor, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
        }.max() ?? 0
    }

    @Test func theReactorServesOtherWorkWhileALargeTreeIsWalked() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-walk-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A binary tree 11 folders deep: 4,095 folders with the root, each with two below it.
        for leaf in 0..<2048 {
            let path = (0..<11).map { String((leaf >> $0) & 1) }.joined(separator: "/")
            try FileManager.default.createDirectory(atPath: folder + "/" + path, withIntermediateDirectories: true)
        }
        let deepest = folder + "/" + Array(repeating: "1", count: 11).joined(separator: "/")
        let watcher = try FilesService().watch(folder, recursive: true, debounce: 0)
        let changes = Mutex<[String]>([])
        watcher.changes.attach { change in
            guard case .event("didChange", let payload) = change else { return }
            changes.withLock { $0 += (payload["changes"].arrayValue ?? []).compactMap { $0["path"].stringValue } }
        }
        watcher.start()
        // Queued behind the walk's start: it runs before the walk of 4,095 folders ends.
        let seen = Mutex<Int?>(nil)
        DescriptorReactor.shared.submit { seen.withLock { $0 = Self.mostWatchesOfAnInstance() } }
        #expect(await eventually { seen.withLock { $0 } != nil })
        let watchedThen = try #require(seen.withLock { $0 })
        // Walked at once, the job came after all 4,095 were watched; now after a few turns of
        // InotifyWatch.foldersPerTurn folders (two watches each), unless this thread was held
        // for the whole walk.
        #expect(watchedThen < 4095, "other work waited for the whole walk (\(watchedThen) folders watched)")
        // The walk goes on to the end: the last folder is watched.
        #expect(await eventually(timeLimit: 20) { Self.mostWatchesOfAnInstance() >= 4095 })
        FileManager.default.createFile(atPath: deepest + "/late", contents: Data())
        #expect(await eventually { changes.withLock { $0 }.contains(deepest + "/late") }, "\(changes.withLock { $0 })")
        watcher.cancel()
    }
}
