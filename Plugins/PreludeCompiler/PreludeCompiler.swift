import Foundation
import PackagePlugin

/// Compiles the Lua prelude (CrescentKit's `Prelude/*.lua`) to bytecode at build time, so no
/// compiled file is committed and editing a module needs no extra step.
///
/// One build command runs `lua5.4 tools/compile-prelude.lua`, which loads each module under its
/// chunk name and writes `Prelude.Bytecode`, a Swift file of byte arrays that the target compiles.
/// It runs again whenever a module or the script changes. The bytecode is that of the `lua5.4`
/// Debian ships with the `liblua5.4` the binary links (tools/setup.sh installs both); a liblua that
/// refuses it makes the host compile the sources instead (`Prelude.Module.load(into:)`).
@main
struct PreludeCompiler: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let folder = target.directoryURL.appending(path: "Prelude")
        let modules = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".lua") }
            .sorted()
            .map { folder.appending(path: $0) }
        let script = context.package.directoryURL.appending(path: "tools/compile-prelude.lua")
        let output = context.pluginWorkDirectoryURL.appending(path: "PreludeBytecode.swift")
        let lua = (try? context.tool(named: "lua5.4").url) ?? URL(fileURLWithPath: "/usr/bin/lua5.4")
        return [.buildCommand(
            displayName: "Compiling the Lua prelude of \(target.name)",
            executable: lua,
            arguments: [script.path, output.path] + modules.map(\.path),
            inputFiles: [script] + modules,
            outputFiles: [output]
        )]
    }
}
