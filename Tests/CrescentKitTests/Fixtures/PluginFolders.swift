import Foundation

/// Plugin folders written for a test: a `plugin.toml` and an empty `main.lua` each.
enum PluginFolders {
    /// Writes the Lua plugin `name` in `root/name`, providing `services` and requiring `requires`
    /// (TOML arrays as written), of `kind` (a wrong one makes a broken manifest).
    static func write(in root: String, _ name: String, services: String, requires: String = "[]", kind: String = "lua") throws {
        try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
        try """
            name = "\(name)"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "\(kind)"
            services = \(services)
            requires = \(requires)
            """.write(toFile: root + "/\(name)/plugin.toml", atomically: true, encoding: .utf8)
        try "".write(toFile: root + "/\(name)/main.lua", atomically: true, encoding: .utf8)
    }
}
