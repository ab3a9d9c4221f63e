@testable import CrescentKit
import Foundation
import Testing

/// `PluginSandbox.resolve`: a path as the kernel would reach it. Its existing part goes through
/// realpath (links followed), the part that does not exist yet is appended with `.` dropped and
/// `..` taken lexically, each against the path built so far.
@Suite struct PluginSandboxResolveTests {
    /// A temporary folder holding `real/`, `link -> real` and `real/file`, resolved by realpath.
    final class Folder {
        let path: String

        init() throws {
            let made = FileManager.default.temporaryDirectory.appendingPathComponent("resolve-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: made + "/real", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: made + "/link", withDestinationPath: made + "/real")
            try Data("x".utf8).write(to: URL(fileURLWithPath: made + "/real/file"))
            path = URL(fileURLWithPath: made).resolvingSymlinksInPath().path
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func anExistingPathIsItsRealPath() throws {
        let folder = try Folder()
        #expect(PluginSandbox.resolve(folder.path + "/link/file") == folder.path + "/real/file")
        #expect(PluginSandbox.resolve(folder.path + "/real/../link") == folder.path + "/real")
        #expect(PluginSandbox.resolve("/") == "/")
    }

    /// The missing components are appended in order; `..` among them removes the one before it,
    /// `.` and empty ones are dropped.
    @Test func missingComponentsAreAppendedInOrder() throws {
        let folder = try Folder()
        #expect(PluginSandbox.resolve(folder.path + "/link/new/deeper") == folder.path + "/real/new/deeper")
        #expect(PluginSandbox.resolve(folder.path + "/link/new/./deeper/") == folder.path + "/real/new/deeper")
        #expect(PluginSandbox.resolve(folder.path + "/link/new/../other") == folder.path + "/real/other")
        #expect(PluginSandbox.resolve(folder.path + "/link/new/gone/../../../up") == folder.path + "/up")
    }

    /// `..` past the root stays at the root, as the kernel's walk does.
    @Test func parentsOfTheRootStayAtTheRoot() {
        #expect(PluginSandbox.resolve("/crescent-missing-\(UUID().uuidString)/../../../etc") == "/etc")
        #expect(PluginSandbox.resolve("/crescent-missing-\(UUID().uuidString)/x/../../..") == "/")
        #expect(PluginSandbox.resolve("/crescent-missing-\(UUID().uuidString)").hasPrefix("/crescent-missing-"))
    }
}
