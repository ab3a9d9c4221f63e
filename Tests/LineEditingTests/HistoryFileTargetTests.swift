import Foundation
import LineEditing
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The history file is only ever a regular file: `/dev/null`, a device, a FIFO or a folder at its
/// path is never read without bound, never waited on and never replaced, and a replaced regular
/// file keeps its mode.
@Suite struct HistoryFileTargetTests {
    private func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    private func fileType(_ path: String) -> mode_t {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & S_IFMT : 0
    }

    @Test func aFIFOIsNeitherWaitedOnNorReplaced() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/fifo"
        #expect(mkfifo(path, 0o600) == 0)
        let file = HistoryFile(path: path)
        #expect(file.unusableReason == "it is a FIFO")
        // Without a writer, opening a FIFO to read would block forever: load returns at once.
        #expect(file.load().entries.isEmpty)
        #expect(throws: HistoryFileError.self) { try file.save(History(["print(1)"])) }
        #expect(fileType(path) == S_IFIFO, "the FIFO is still a FIFO")
    }

    @Test func aDeviceIsNotReadWithoutBoundNorReplaced() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Copies of /dev/null and /dev/zero (where the test may create device nodes), else the
        // real ones, which the checks below only read.
        for (name, minor) in [("null", UInt32(3)), ("zero", UInt32(5))] {
            var path = directory + "/" + name
            // dev_t(0x100 | minor) is makedev(1, minor), a macro that does not import.
            if mknod(path, S_IFCHR | 0o666, dev_t(0x100 | minor)) != 0 { path = "/dev/" + name }
            let file = HistoryFile(path: path)
            #expect(file.unusableReason == "it is a device", "\(path)")
            #expect(file.load().entries.isEmpty, "\(path)")
            if path.hasPrefix(directory) {
                #expect(throws: HistoryFileError.self) { try file.save(History(["x"])) }
                #expect(fileType(path) == S_IFCHR, "\(path) is still a device")
            }
        }
    }

    @Test func aLinkToAFIFOIsNotFollowedToReplaceIt() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(mkfifo(directory + "/fifo", 0o600) == 0)
        #expect(symlink(directory + "/fifo", directory + "/history") == 0)
        let file = HistoryFile(path: directory + "/history")
        #expect(throws: HistoryFileError.self) { try file.append("print(2)") }
        #expect(fileType(directory + "/fifo") == S_IFIFO)
    }

    @Test func aReplacedFileKeepsItsMode() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/history"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("a\n".utf8)))
        #expect(chmod(path, 0o640) == 0)
        try HistoryFile(path: path).append("b")
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o640)
        #expect(HistoryFile(path: path).load().entries == ["a", "b"])
    }

    @Test func devNullTurnsHistoryOffLikeTheEmptyString() {
        #expect(HistoryFile.standard { $0 == "CRESCENT_HISTORY" ? "/dev/null" : nil } == nil)
        #expect(HistoryFile.standard { $0 == "CRESCENT_HISTORY" ? "" : nil } == nil)
    }
}
