import Foundation
import LineEditing
import Testing

@Suite struct HistoryFileTests {
    /// A fresh directory for one test, removed afterwards by the caller's `defer`.
    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func formatEscapesNewlinesAndBackslashes() {
        let entries = ["print(1)", "for i = 1, 2 do\n  print(i)\nend", #"s = "a\nb\\c""#, "x = '\r'", "語 😀"]
        let text = HistoryFile.encode(entries)
        #expect(text == #"""
            print(1)
            for i = 1, 2 do\n  print(i)\nend
            s = "a\\nb\\\\c"
            x = '\r'
            語 😀

            """#)
        #expect(HistoryFile.decode(Array(text.utf8)) == entries)
    }

    @Test func decodingForgivesCorruption() {
        var bytes = Array("good\nbad \u{FF}\n".utf8)
        bytes[8] = 0xFF  // not UTF-8
        bytes += Array("trailing \\\nunknown \\q escape\r\n\n\nnul".utf8) + [0, 0x0A] + Array("last".utf8)
        #expect(HistoryFile.decode(bytes) == ["good", "trailing \\", "unknown \\q escape", "last"])
        #expect(HistoryFile.decode([]) == [])
        #expect(HistoryFile.decode([0xC3, 0x28, 0x0A, 0xE2, 0x82]) == [])
    }

    @Test func roundTripThroughAFileKeepsMultiLineEntriesWhole() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = HistoryFile(path: directory.appendingPathComponent("nested/deeper/history").path)
        let history = History(["print(1)", "local t = {\n  a = 1,\n}", #"print("\\n")"#])
        try file.save(history)
        #expect(file.load().entries == history.entries)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600, "history may hold secrets")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("nested/deeper").path)
        #expect(leftovers == ["history"], "the temporary file was renamed over the history")
    }

    @Test func aMissingOrCorruptFileLoadsWhatItCan() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(HistoryFile(path: directory.appendingPathComponent("absent").path).load().entries.isEmpty)
        let path = directory.appendingPathComponent("history").path
        var bytes: [UInt8] = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        bytes += Array("\nprint('survived')\n".utf8)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let loaded = HistoryFile(path: path).load()
        #expect(loaded.entries.last == "print('survived')")
        #expect(HistoryFile(path: directory.path).load().entries.isEmpty, "a directory is not a history")
    }

    @Test func appendMergesWithWhatAnotherSessionWrote() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = HistoryFile(path: directory.appendingPathComponent("history").path)
        #expect(try file.append("first"))
        let otherSession = HistoryFile(path: file.path)
        #expect(try otherSession.append("from another session"))
        #expect(try file.append("second"))
        #expect(try !file.append("second"), "a repeat is not written")
        #expect(try !file.append("  "))
        #expect(file.load().entries == ["first", "from another session", "second"])
    }

    /// A history file grown to 20 MB (another program's, a corrupted copy) is read from its end:
    /// its newest entries load (the first 16 MB were read, so the newest were never seen, and the
    /// read and decode of those froze a live app's start for seconds), and an append writes it
    /// back to the entries a history keeps.
    @Test func aTwentyMegabyteFileLoadsItsNewestEntriesFromItsEnd() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("history").path
        let filler = String(repeating: "x", count: 190)
        var text = ""
        text.reserveCapacity(21 << 20)
        for index in 0..<105_000 { text += "\(filler) \(index)\n" }
        let recent = (0..<1_000).map { "recent \($0)" }
        text += recent.joined(separator: "\n") + "\n"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        #expect(text.utf8.count > 20_000_000)
        let file = HistoryFile(path: path)
        let started = ContinuousClock.now
        let loaded = file.load()
        let elapsed = ContinuousClock.now - started
        #expect(loaded.entries == recent)
        #expect(elapsed < .seconds(2), "loading took \(elapsed)")
        #expect(try file.append("newest"))
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
        #expect(size > 0 && size < 100_000, "the file was written back to its newest entries: \(size) bytes")
        #expect(file.load().entries == Array(recent.dropFirst()) + ["newest"])
    }

    /// A write keeps the file within the most read, dropping the oldest entries that do not fit.
    @Test func aWriteKeepsTheNewestEntriesThatFitInTheMostRead() {
        let entry = String(repeating: "y", count: 99)
        let entries = (0..<10).map { "\($0)\(entry)" }
        #expect(HistoryFile.newest(of: entries, within: 350) == entries[7...])
        #expect(HistoryFile.newest(of: entries, within: 10).isEmpty)
        #expect(HistoryFile.newest(of: entries, within: 10_000) == entries[...])
    }

    @Test func appendCapsTheFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = HistoryFile(path: directory.appendingPathComponent("history").path)
        try file.save(History((0..<1_000).map { "entry \($0)" }))
        try file.append("newest")
        let entries = file.load().entries
        #expect(entries.count == 1_000)
        #expect(entries.first == "entry 1")
        #expect(entries.last == "newest")
        #expect(file.load(capacity: 10).entries.count == 10)
    }

    /// A symbolic link at the path is never followed (one planted there had every entry
    /// appended to the file it named): not read, not written through, and said why.
    @Test func aSymbolicLinkIsNeitherReadNorWrittenThrough() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("other-file").path
        #expect(FileManager.default.createFile(atPath: target, contents: Data("SECRET\n".utf8)))
        let link = directory.appendingPathComponent("history").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let file = HistoryFile(path: link)
        #expect(file.unusableReason?.hasPrefix("it is a symbolic link") == true, "\(String(describing: file.unusableReason))")
        #expect(file.load().entries.isEmpty, "not read through the link")
        #expect(throws: HistoryFileError.self) { try file.append("linked") }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "SECRET\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
    }

    @Test func saveReportsAnUnwritablePlace() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let blocker = directory.appendingPathComponent("file").path
        _ = FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8))
        let file = HistoryFile(path: blocker + "/sub/history")
        let error = #expect(throws: HistoryFileError.self) { try file.save(History(["x"])) }
        #expect(error?.description == "cannot save history to \(blocker)/sub/history: cannot create \(blocker)/sub: Not a directory")
    }

    @Test func standardPathFollowsTheEnvironment() {
        func path(_ environment: [String: String]) -> String? {
            HistoryFile.standard(environment: { environment[$0] })?.path
        }
        #expect(path(["HOME": "/home/ada"]) == "/home/ada/.local/share/crescent/history")
        #expect(path(["HOME": "/home/ada/"]) == "/home/ada/.local/share/crescent/history")
        #expect(path(["HOME": "/home/ada", "XDG_DATA_HOME": "/data"]) == "/data/crescent/history")
        #expect(path(["HOME": "/home/ada", "XDG_DATA_HOME": "relative"]) == "/home/ada/.local/share/crescent/history",
                "XDG says relative paths are ignored")
        #expect(path(["HOME": "/home/ada", "CRESCENT_HISTORY": "/tmp/h"]) == "/tmp/h")
        #expect(path(["HOME": "/home/ada", "CRESCENT_HISTORY": ""]) == nil, "empty turns saving off")
    }
}
