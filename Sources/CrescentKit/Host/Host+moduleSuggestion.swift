import Foundation
import LuaBridge
import Model

extension Host {
    /// Adds a last searcher to `package.searchers`, run only when every other one found nothing:
    /// it finds nothing either, but names the module beside the script that a misspelled name
    /// meant (`require("mymdo")` beside `mymod.lua`), where Lua lists only the files it tried.
    func addModuleSuggestion() {
        let stack = vm.stack
        let top = stack.top
        defer { stack.setTop(top) }
        _ = stack.ensure(4)
        guard vm.getGlobal("package") == .table, stack.rawGet(-1, "searchers") == .table else { return }  // package searchers
        let position = Int64(stack.rawLength(-1)) + 1
        vm.pushFunction { [unowned self] stack in                                     // name
            guard let name = stack.text(at: 1), let folder = self.scriptFolder else { return .none }
            // `require("mymod.lua")` looks for `mymod/lua.lua`: a file name where a module name goes.
            if name.hasSuffix(".lua"), name.count > 4, let file = Self.module(String(name.dropLast(4)), in: folder) {
                stack.push("no module '\(name)': require takes a module name, without '.lua': require(\"\(name.dropLast(4))\") loads \(file)")
                return .one
            }
            guard let (module, file) = Self.nearModule(to: name, in: folder) else { return .none }
            stack.push("no module '\(name)' beside the script; did you mean '\(module)' (\(file))?")
            return .one
        }                                                                              // package searchers searcher
        stack.rawSet(-2, index: position)                                              // package searchers
    }

    /// The file of module `name` (dotted) in `folder`, `NAME.lua` or `NAME/init.lua`; nil when
    /// it has neither.
    private static func module(_ name: String, in folder: String) -> String? {
        let path = folder + "/" + name.split(separator: ".", omittingEmptySubsequences: false).joined(separator: "/")
        return [path + ".lua", path + "/init.lua"].first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The module in `folder` (a `NAME.lua` or a `NAME/init.lua`) whose name is closest to
    /// `name`, with its file; a dotted name (`ui.lst`) is looked for in its folder (`ui/`).
    private static func nearModule(to name: String, in folder: String) -> (module: String, file: String)? {
        var parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let last = parts.popLast(), !last.isEmpty else { return nil }
        let prefix = parts.isEmpty ? "" : parts.joined(separator: ".") + "."
        let directory = parts.isEmpty ? folder : folder + "/" + parts.joined(separator: "/")
        let manager = FileManager.default
        var files: [String: String] = [:]
        for entry in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] {
            if entry.hasSuffix(".lua") {
                files[String(entry.dropLast(4))] = directory + "/" + entry
            } else if manager.fileExists(atPath: directory + "/" + entry + "/init.lua") {
                files[entry] = files[entry] ?? directory + "/" + entry + "/init.lua"
            }
        }
        guard let closest = NameSuggestion.closest(to: last, among: files.keys.sorted(), prefixes: false), let file = files[closest] else { return nil }
        return (prefix + closest, file)
    }
}
