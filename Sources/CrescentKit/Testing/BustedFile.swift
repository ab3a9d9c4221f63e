import Foundation
import LuaBridge

/// A project's `.busted` file, as busted reads it: a Lua chunk returning a table of tasks, whose
/// `default` task gives the options a bare run uses. `crescent test` takes the ones it shares
/// with busted; the command line wins over the file.
///
/// ```lua
/// return { default = { ROOT = { "spec" }, tags = "fast", ["exclude-tags"] = "slow", output = "TAP" } }
/// ```
public struct BustedFile: Sendable {
    /// `ROOT`: the spec files and folders.
    public var paths: [String] = []
    /// `tags` and `exclude-tags` (a string, commas allowed, or a list).
    public var tags: [String] = []
    public var excludedTags: [String] = []
    /// `filter`: a Lua pattern on full names.
    public var filter: String?
    /// `output`: `json`, `TAP` or ours (`plain`); busted's other handlers are not crescent's.
    public var output: SpecOutputFormat?
    /// `coverage`: busted's switch for luacov, here crescent's own coverage.
    public var coverage: Bool?

    public init() {}

    /// Reads `path` (default `.busted` in the current folder); nil when there is none.
    /// - Throws: ``SpecRunner/UsageError`` when the file does not run, or gives what busted would refuse.
    public static func read(_ path: String = ".busted") throws(SpecRunner.UsageError) -> BustedFile? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let value: LuaValue
        do {
            let vm = try LuaVM(memoryLimit: 64 << 20)
            try vm.load(Array(data), name: "@" + path)
            try vm.call(arguments: 0, results: 1)
            value = try vm.stack.value(at: -1, vm: vm)
        } catch {
            throw SpecRunner.UsageError(description: "\(path): \(error) (a .busted file returns a table such as "
                                        + "return { default = { ROOT = { \"spec\" } } })")
        }
        guard case .table = value else {
            throw SpecRunner.UsageError(description: "\(path) must return a table of tasks, such as return { default = { ROOT = { \"spec\" } } }")
        }
        let task = value["default"]
        var file = BustedFile()
        file.paths = strings(task["ROOT"])
        file.tags = strings(task["tags"])
        file.excludedTags = strings(task["exclude-tags"])
        if case .string(let filter) = task["filter"] { file.filter = filter.description }
        if case .boolean(let coverage) = task["coverage"] { file.coverage = coverage }
        if case .string(let name) = task["output"] {
            guard let format = SpecOutputFormat.allCases.first(where: { $0.rawValue.lowercased() == name.description.lowercased() }) else {
                throw SpecRunner.UsageError(description: "\(path): output \"\(name)\" is not one crescent test writes; use "
                                            + SpecOutputFormat.allCases.map(\.rawValue).joined(separator: ", "))
            }
            file.output = format
        }
        return file
    }

    /// A string ("a,b"), or a list of them, as a list.
    static func strings(_ value: LuaValue) -> [String] {
        switch value {
        case .string(let text): return split(text.description)
        case .table:
            return (value.arrayValue ?? []).flatMap { item -> [String] in
                if case .string(let text) = item { return split(text.description) }
                return []
            }
        default: return []
        }
    }

    /// busted's lists on the command line: `--tags=a,b`.
    public static func split(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
