import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A plugin's manifest or `main` that is not a regular file of a bounded size (a FIFO,
/// `/dev/zero`, a huge file) breaks that plugin, named with the path and the reason; the run goes on.
@Suite struct PluginFileKindTests {
    static let manifest = """
        name = "devz"
        version = "1.0.0"
        crescent = ">=0.1.0"
        kind = "lua"
        services = ["devz"]
        """

    @Test func aManifestThatIsAFIFOOrDevZeroIsRefusedAndTheRunGoesOn() async throws {
        let sandbox = try Sandbox()
        try FileManager.default.createDirectory(atPath: sandbox.path + "/plugins/fifo", withIntermediateDirectories: true)
        #expect(mkfifo(sandbox.path + "/plugins/fifo/plugin.toml", 0o644) == 0)
        try FileManager.default.createDirectory(atPath: sandbox.path + "/plugins/zero", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/plugins/zero/plugin.toml", withDestinationPath: "/dev/zero")
        let result = try await crescent(["-e", "print('ran')"], in: sandbox, timeLimit: 20)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["ran"], "\(result)")
        #expect(result.stderr.contains("plugins/fifo/plugin.toml: cannot use it as the plugin's manifest: it is a FIFO, not a regular file"), "\(result)")
        // A manifest that is a link is refused as such, never followed (to /dev/zero or a user's file).
        #expect(result.stderr.contains("plugins/zero/plugin.toml: cannot use it as the plugin's manifest: it is a symbolic link, not a regular file"), "\(result)")
    }

    @Test func aManifestPastOneMiBIsRefused() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("plugins/big/plugin.toml", Self.manifest + "\n" + String(repeating: "# padding\n", count: 110_000))
        let result = try await crescent(["-e", "print('ran')"], in: sandbox, timeLimit: 20)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["ran"], "\(result)")
        #expect(result.stderr.contains("plugins/big/plugin.toml: cannot use it as the plugin's manifest: it is larger than 1 MiB"), "\(result)")
    }

    @Test func aMainThatIsDevZeroBreaksThePluginOnly() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("plugins/devz/plugin.toml", Self.manifest)
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/plugins/devz/main.lua", withDestinationPath: "/dev/zero")
        let result = try await crescent(["-e", "print(pcall(function() return services.devz end)) print('ran')"], in: sandbox, timeLimit: 20)
        #expect(result.stdoutLines.last == "ran", "\(result)")
        // A main that leads out of the plugin folder (here to /dev/zero) is refused before it is read.
        #expect(result.stderr.contains("plugins/devz/plugin.toml: field 'main' names main.lua, which leads out of the plugin folder (to /dev/zero)"), "\(result)")
    }
}
