import ChildTestSupport
import Foundation
import Testing

/// A controller app on a terminal whose keys it does not take (`--ui plain`, `--ui json`) read
/// nothing typed: `greet Ada` and `quit` were echoed and dropped, and only Ctrl-C ended the run,
/// the symptom issue 34 opened with, kept in plain mode (two independent attacks met it). Typed
/// lines are commands there, as piped ones are; a plugin's grant question meanwhile takes the
/// next line typed as its answer.
@Suite struct PlainTerminalCommandTests {
    static let app = """
        local C = controller("Greeter")
        function C:loadView() return view.stack { view.text { id = "said", text = "said: nothing" } } end
        function C:viewDidLoad()
          self:command("greet", "greet", "greet NAME", { args = { "name: string" } })
          self:command("ping", "ping", "ask the plugin")
        end
        function C:greet(name) self.view.said.text = "said: hello " .. name end
        function C:ping() self.view.said.text = "said: " .. services.music:ping() end
        app.push(C)
        """

    func start(_ ui: String, in sandbox: Sandbox) throws -> InteractiveTerminal {
        let path = try sandbox.write("app.lua", Self.app)
        return try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--ui", ui, path], directory: sandbox.path,
                                       environment: ["HOME": sandbox.path, "XDG_DATA_HOME": nil], columns: 120, rows: 30)
    }

    @Test(arguments: ["plain", "json"])
    func typedLinesAreCommands(ui: String) async throws {
        let sandbox = try Sandbox()
        let terminal = try start(ui, in: sandbox)
        await terminal.waitFor(line: "said: nothing")
        terminal.type("greet Ada\r")
        await terminal.waitFor(line: "said: hello Ada")
        terminal.type("quit\r")
        #expect(await terminal.finish() == 0)
    }

    /// Ctrl-D ends nothing on a terminal (attack new28t D2): the lines typed after it still run,
    /// where the terminal was read no more and only Ctrl-C ended the run.
    @Test(arguments: ["plain", "json"])
    func linesTypedAfterCtrlDAreCommands(ui: String) async throws {
        let sandbox = try Sandbox()
        let terminal = try start(ui, in: sandbox)
        await terminal.waitFor(line: "said: nothing")
        terminal.type("\u{4}")
        try await Task.sleep(for: .milliseconds(300))
        terminal.type("greet Bob\r")
        await terminal.waitFor(line: "said: hello Bob")
        terminal.type("\u{4}")
        try await Task.sleep(for: .milliseconds(300))
        terminal.type("quit\r")
        #expect(await terminal.finish() == 0)
    }

    @Test func aGrantQuestionTakesTheNextLineTyped() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/music/plugin.toml", PluginGrantTests.manifest("read = [\"~/Music\"]"))
        try sandbox.write("plugins/music/main.lua", PluginGrantTests.main)
        let terminal = try start("plain", in: sandbox)
        await terminal.waitFor(line: "said: nothing")
        terminal.type("ping\r")
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        terminal.type("y\r")
        await terminal.waitFor(line: "said: pong")
        terminal.type("quit\r")
        #expect(await terminal.finish() == 0)
        let grants = (try? String(contentsOfFile: sandbox.path + "/data/plugin-grants.toml", encoding: .utf8)) ?? ""
        #expect(grants.contains("[music]"), "\(grants)")
    }
}
