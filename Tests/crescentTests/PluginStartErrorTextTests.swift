import Foundation
import Testing

/// A plugin's folder name is its author's choice (a cloned project's `plugins/`): the grant
/// question and the listings escape it, but a plugin that failed to start had its error, which
/// names the folder in its `file:line` and traceback, written raw, so an escape sequence in the
/// name reached the terminal (colours, the title, erased lines).
@Suite struct PluginStartErrorTextTests {
    @Test func aFailedStartShowsTheFolderNameEscaped() async throws {
        let sandbox = try Sandbox()
        let folder = "plugins/ev\u{1B}[31mil"
        try sandbox.write(folder + "/plugin.toml", """
            name = "evil"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["evil"]
            """)
        try sandbox.write(folder + "/main.lua", "error('boom at start')\n")
        let result = try await crescent(["-e", "print(pcall(function() return services.evil end))"], in: sandbox,
                                        environment: ["HOME": sandbox.path, "XDG_DATA_HOME": nil])
        let all = result.stdout + result.stderr
        #expect(!all.contains("\u{1B}"), "an escape sequence reached the output: \(result)")
        #expect(result.stderr.contains("plugin 'evil' skipped: plugins/ev\\u{1B}[31mil/main.lua:1: boom at start"), "\(result)")
        #expect(result.stdout.contains("see `crescent plugin check plugins/ev\\u{1B}[31mil`"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }
}
