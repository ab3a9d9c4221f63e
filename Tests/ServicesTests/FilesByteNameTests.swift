import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// Names that are not UTF-8 (issue 38, N2): `list` gave each such name as U+FFFD, so four files
/// listed as two names twice, and reading a listed name read another file (one named U+FFFD
/// U+FFFD); watches reported paths that did not exist. Paths are their bytes now.
@Suite struct FilesByteNameTests {
    let files = FilesService()
    let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-bytes-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    private func cleanUp() { try? FileManager.default.removeItem(atPath: folder) }

    /// Makes the file `name` (its bytes) in the folder holding `text`, without the service.
    private func make(_ name: [UInt8], _ text: String) throws {
        let path = FilePath(folder).appending(FilePath(bytes: name))
        let descriptor = path.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        try #require(descriptor >= 0)
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    /// The content of `name` in the folder, read without the service.
    private func content(_ name: [UInt8]) -> String? {
        let path = FilePath(folder).appending(FilePath(bytes: name))
        guard let file = path.withCString({ fopen($0, "r") }) else { return nil }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 100)
        let count = fread(&buffer, 1, 100, file)
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    static let invalidPair: [UInt8] = [0xFF, 0xFE]
    static let replacementPair: [UInt8] = Array("\u{FFFD}\u{FFFD}".utf8)

    @Test func namesThatAreNotUTF8AreListedReadWrittenAndStatedAsTheirBytes() throws {
        defer { cleanUp() }
        let contents: [[UInt8]: String] = [Self.invalidPair: "real", Self.replacementPair: "decoy", [0xFF]: "a", [0xFE]: "b"]
        for (name, text) in contents { try make(name, text) }
        let listed = try files.list(FilePath(folder), glob: nil)
        #expect(Set(listed.map(\.bytes)) == Set(contents.keys), "four names, each as its bytes: \(listed.map(\.shown))")
        for name in listed {
            let read = try files.read(FilePath(folder).appending(name))
            #expect(String(decoding: read, as: UTF8.self) == contents[name.bytes], "reading \(name.shown) reads that file")
        }
        #expect(listed.first(where: { $0.bytes == [0xFF] })?.value == .bytes([0xFF]), "a script gets exactly the bytes")
        #expect(listed.first(where: { $0.bytes == Self.replacementPair })?.value == .string("\u{FFFD}\u{FFFD}"))
        // Written by that name: that file changes, no other, and no temporary file is left.
        try files.write(FilePath(folder).appending(FilePath(bytes: Self.invalidPair)), Array("new".utf8))
        #expect(content(Self.invalidPair) == "new")
        #expect(content(Self.replacementPair) == "decoy")
        #expect(try files.list(FilePath(folder), glob: nil).count == 4)
        let stat = try files.stat(FilePath(folder).appending(FilePath(bytes: [0xFE])))
        #expect(stat["path"] == .bytes(Array(folder.utf8) + [UInt8(ascii: "/"), 0xFE]))
        #expect(stat["size"] == 1)
        // The glob sees the bytes too.
        #expect(try files.list(FilePath(folder), glob: "?").map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) } == [[0xFE], [0xFF]])
    }

    @Test func anErrorNamesAPathThatIsNotUTF8WithItsBytesEscaped() {
        defer { cleanUp() }
        let missing = FilePath(folder).appending(FilePath(bytes: [0x6E, 0xFF, 0x6F]))
        do throws(ServiceError) {
            _ = try files.read(missing)
            Issue.record("a missing file was read")
        } catch {
            #expect("\(error.code.name): \(error.message)" == "not_found: '\(folder)/n\\xFFo' does not exist")
        }
    }

    @Test func aWatchReportsANameThatIsNotUTF8AsItsBytes() async throws {
        defer { cleanUp() }
        let watcher = try files.watch(FilePath(folder), debounce: 0)
        let paths = Mutex<[Value]>([])
        watcher.changes.attach { change in
            guard case .event("didChange", let payload) = change else { return }
            paths.withLock { $0 += (payload["changes"].arrayValue ?? []).map { $0["path"] } }
        }
        watcher.start()
        try await Task.sleep(for: .milliseconds(100))
        try make([0xFF], "x")
        #expect(await eventually { !paths.withLock { $0 }.isEmpty })
        #expect(paths.withLock { $0 }.first == .bytes(Array(folder.utf8) + [UInt8(ascii: "/"), 0xFF]), "\(paths.withLock { $0 })")
        watcher.cancel()
    }
}
