import Foundation
import Glibc
@testable import Services
import Testing

/// The one `mkdir -p`: folders on the way are made with the mode asked, existing ones are left,
/// and a folder that cannot be made is named with the reason. The one listing: every name but
/// `.` and `..`, nil for what is not a folder.
@Suite struct FoldersTests {
    @Test func makesEveryMissingFolderWithItsMode() throws {
        let folder = try TemporaryFolder()
        let base = folder.path
        #expect(Folders.make(base + "/a/b/c", mode: 0o700) == nil)
        var status = stat()
        #expect(stat(base + "/a/b/c", &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
        #expect(status.st_mode & 0o777 == 0o700)
        #expect(Folders.make(base + "/a/b/c", mode: 0o700) == nil, "existing folders are no failure")
    }

    @Test func namesTheFolderThatCannotBeMade() throws {
        let folder = try TemporaryFolder()
        let base = folder.path
        try "not a folder".write(toFile: base + "/file", atomically: true, encoding: .utf8)
        let failed = try #require(Folders.make(base + "/file/inner/deeper", mode: 0o700))
        #expect(failed.folder == base + "/file/inner")
        #expect(failed.errno == ENOTDIR)
    }

    @Test func listsEveryEntryButDotAndDotDot() throws {
        let folder = try TemporaryFolder()
        let base = folder.path
        try "x".write(toFile: base + "/file", atomically: true, encoding: .utf8)
        try "x".write(toFile: base + "/.hidden", atomically: true, encoding: .utf8)
        #expect(Folders.make(base + "/inner", mode: 0o700) == nil)
        #expect(Folders.names(in: base)?.sorted() == [".hidden", "file", "inner"])
        #expect(Folders.names(in: base + "/inner") == [])
        #expect(Folders.names(in: base + "/file") == nil)
        #expect(Folders.names(in: base + "/missing") == nil)
    }
}
