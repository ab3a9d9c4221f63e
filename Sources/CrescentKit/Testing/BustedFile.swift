import Foundation
import LuaBridge
import Model
#if canImport(Glibc)
import Glibc
#endif

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
    /// Bytes, as a test's name (where a tag is found) need not be UTF-8.
    public var tags: [[UInt8]] = []
    public var excludedTags: [[UInt8]] = []
    /// `filter`: a Lua pattern on full names.
    public var filter: [UInt8]?
    /// `output`: `json`, `TAP` or ours (`plain`); busted's other handlers are not crescent's.
    public var output: SpecOutputFormat?
    /// `coverage`: busted's switch for luacov, here crescent's own coverage.
    public var coverage: Bool?
    /// What the file gives that neither busted nor crescent reads (`filtr`, a task `defualt`, a
    /// number for `tags`), one line each: shown, so a misspelling is not silently ignored.
    public var warnings: [String] = []

    /// The options of a task busted reads (crescent takes the first six); anything else is a
    /// misspelling or not an option at all.
    static let taskOptions = ["ROOT", "tags", "exclude-tags", "filter", "output", "coverage",
                              "pattern", "exclude-pattern", "filter-out", "verbose", "lpath", "cpath", "helper", "lang",
                              "loaders", "shuffle", "shuffle-files", "shuffle-tests", "sort", "sort-files", "sort-tests",
                              "seed", "repeat", "run", "directory", "config-file", "suppress-pending", "defer-print",
                              "keep-going", "auto-insulate", "lazy", "list", "recursive", "Xoutput", "Xhelper",
                              "exit", "no-keep-going", "no-auto-insulate", "no-recursive", "ignore-lua", "enable-sound"]

    public init() {}

    /// Reads `path` (default `.busted` in the current folder); nil when there is none.
    /// - Throws: ``SpecRunner/UsageError`` when the file does not run, or gives what busted would refuse.
    public static func read(_ path: String = ".busted") throws(SpecRunner.UsageError) -> BustedFile? {
        guard access(path, F_OK) == 0 else { return nil }
        let data: [UInt8]
        do throws(RegularFile.Refusal) {
            // Only a regular file, bounded: a FIFO or /dev/zero named .busted must not hang the run.
            data = try RegularFile.read(path, limit: 1 << 20)
        } catch {
            throw SpecRunner.UsageError(description: "\(path): \(error.reason)")
        }
        let value: LuaValue
        do {
            value = try evaluate(data, path: path)
        } catch {
            throw SpecRunner.UsageError(description: "\(path): \(error) (a .busted file returns a table such as "
                                        + "return { default = { ROOT = { \"spec\" } } })")
        }
        guard case .table = value else {
            throw SpecRunner.UsageError(description: "\(path) must return a table of tasks, such as return { default = { ROOT = { \"spec\" } } }")
        }
        // As busted, `_all` is merged into every task, the task's own options winning over it.
        let task = Self.merged(value["_all"], value["default"])
        var file = BustedFile()
        file.warnings = Self.warnings(value, path: path)
        file.paths = strings(task["ROOT"])
        file.tags = words(task["tags"])
        file.excludedTags = words(task["exclude-tags"])
        if case .string(let filter) = task["filter"] { file.filter = filter.bytes }
        if case .boolean(let coverage) = task["coverage"] { file.coverage = coverage }
        if case .string(let name) = task["output"] {
            if let format = SpecOutputFormat.allCases.first(where: { $0.rawValue.lowercased() == name.description.lowercased() }) {
                file.output = format
            } else {
                // busted's own handlers (utfTerminal, gtest, junit...) are in real suites' files:
                // the run goes on with crescent's output (-o chooses another), as busted would.
                let formats = SpecOutputFormat.allCases.map(\.rawValue).joined(separator: ", ")
                let junit = name.description.lowercased() == "junit" ? "; for a JUnit file pass --junit FILE" : ""
                file.warnings.append("\(path): output \"\(name)\" is busted's, not one crescent test writes (\(formats)): "
                                     + "writing crescent's own\(junit)")
            }
        }
        file.warnings += Self.unusedOptions(task, path: path)
        try file.checkPatterns(path: path)
        return file
    }

    /// Refuses a `filter`, `tags` or `exclude-tags` that is not a Lua pattern, naming this file
    /// and the key: the command line's checks would name `--filter`, which the user did not give.
    private func checkPatterns(path: String) throws(SpecRunner.UsageError) {
        let escaping = "escape magic characters ( ) . % + - * ? [ ^ $ with %"
        if let filter, let problem = SpecRunner.patternProblem(filter) {
            throw SpecRunner.UsageError(description: "\(path): default.filter \"\(ByteText.shown(filter))\" is not a valid Lua pattern "
                + "(\(problem)); filter is a Lua pattern matched against names such as \"describe-name it-name\": \(escaping), "
                + "as in filter = \"%[\"")
        }
        for (key, words) in [("tags", tags), ("exclude-tags", excludedTags)] {
            for tag in words {
                guard let problem = SpecRunner.patternProblem(Array("#".utf8) + tag) else { continue }
                throw SpecRunner.UsageError(description: "\(path): default.\(key) \"\(ByteText.shown(tag))\" is not a valid tag "
                    + "(\(problem)); a tag is found in a test's name as the Lua pattern #TAG, as busted finds it: \(escaping), "
                    + "as in \(key) = \"%[\"")
            }
        }
    }

    /// Runs the file's chunk in a VM of its own, under a time and a memory limit, without os.exit.
    private static func evaluate(_ data: [UInt8], path: String) throws(LuaError) -> LuaValue {
        let vm = try LuaVM(memoryLimit: 64 << 20)
        defer { vm.close() }
        // A settings file has no business ending the run: os.exit there is an error.
        try vm.run("os.exit = function() error('os.exit cannot be called in a .busted file', 2) end")
        try vm.load(data, name: "@" + path)
        // Its code runs under a time limit, as a test does: a loop there must not hang the run.
        let interrupter = vm.interrupter
        let timer = DispatchWorkItem { interrupter.interruptForTimeout() }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: timer)
        defer { timer.cancel() }
        do {
            try vm.call(arguments: 0, results: 1)
        } catch {
            guard error.kind == .interrupted || error.kind == .timeout else { throw error }
            throw LuaError(.runtime, "it did not return within \(Int(timeLimit)) s (does it loop?)")
        }
        do throws(LuaRaise) {
            return try vm.stack.value(at: -1, vm: vm)
        } catch {
            throw LuaError(.runtime, error.message)
        }
    }

    /// How long the file's code may run (it returns a table; a second is plenty).
    static let timeLimit = 5.0

    /// busted's options that change which files run or how they load, which crescent test does
    /// not take: each one set is said, since the run then differs from busted's.
    static let unusedByCrescent = ["pattern", "exclude-pattern", "filter-out", "lpath", "cpath", "helper", "loaders",
                                   "shuffle", "shuffle-files", "shuffle-tests", "seed", "repeat", "run", "directory",
                                   "auto-insulate", "no-auto-insulate", "lazy", "recursive", "no-recursive"]

    /// A line for each option of `task` that busted reads and crescent test does not.
    static func unusedOptions(_ task: LuaValue, path: String) -> [String] {
        guard case .table(let options) = task else { return [] }
        return options.keys.compactMap { key -> String? in
            guard case .string(let name) = key, unusedByCrescent.contains(name.description) else { return nil }
            let lpath = name.description == "lpath" ? " (crescent test searches busted's default, ./src/?.lua;./src/?/?.lua;./src/?/init.lua)" : ""
            return "\(path): default.\(name) is busted's and crescent test does not use it, so the run may differ from busted's\(lpath)"
        }.sorted()
    }

    /// A string ("a,b"), or a list of them, as a list.
    /// The warnings for `tasks` (the table the file returned), see ``warnings``.
    static func warnings(_ tasks: LuaValue, path: String) -> [String] {
        guard case .table(let entries) = tasks else { return [] }
        var warnings: [String] = []
        let taskNames = entries.keys.compactMap { if case .string(let name) = $0 { name.description } else { nil } }.sorted()
        if !taskNames.contains("default") && !taskNames.contains("_all") {
            let closest = taskNames.first { NameSuggestion.closest(to: $0, among: ["default"], prefixes: false) != nil }
            let hint = closest.map { "; did you mean 'default' for '\($0)'?" } ?? ""
            warnings.append("\(path): no task 'default', so crescent test reads none of its options (tasks: \(taskNames.isEmpty ? "none" : taskNames.joined(separator: ", "))\(hint))")
        }
        for name in ["_all", "default"] { warnings += optionWarnings(tasks[name], task: name, path: path) }
        return warnings
    }

    /// The warnings for the options of the task `name` (`default`, or `_all`, merged into it).
    private static func optionWarnings(_ task: LuaValue, task name: String, path: String) -> [String] {
        guard case .table(let options) = task else { return [] }
        var warnings: [String] = []
        for key in options.keys.compactMap({ if case .string(let name) = $0 { name.description } else { nil } }).sorted()
        where !taskOptions.contains(key) {
            let listing = NameSuggestion.listing("crescent test reads", Array(taskOptions.prefix(6)),
                                                 suggesting: NameSuggestion.closest(to: key, among: taskOptions))
            warnings.append("\(path): \(name).\(key) is not an option of a task (\(listing))")
        }
        for key in ["tags", "exclude-tags", "ROOT"] {
            let kind: String
            switch options[.string(LuaString(key))] {
            case nil, .nil?, .string?, .table?: continue
            case .boolean?: kind = "a boolean"
            case .integer?, .number?: kind = "a number"
            case .reference?: kind = "a function or userdata"
            }
            warnings.append("\(path): \(name).\(key) must be a string or a list of strings, got \(kind)")
        }
        switch options[.string(LuaString("coverage"))] {
        case nil, .nil?, .boolean?: break
        case .string(let text)?:
            warnings.append("\(path): \(name).coverage must be true or false, got the string \"\(text)\": coverage stays off "
                            + "(write coverage = true, or pass --coverage)")
        default:
            warnings.append("\(path): \(name).coverage must be true or false: coverage stays off (write coverage = true, or pass --coverage)")
        }
        return warnings
    }

    /// The options of `all` (the `_all` task) with those of `task` over them.
    static func merged(_ all: LuaValue, _ task: LuaValue) -> LuaValue {
        guard case .table(let shared) = all else { return task }
        guard case .table(let own) = task else { return all }
        return .table(shared.merging(own) { $1 })
    }

    /// A string's or a list of strings' comma-separated words, as bytes.
    static func words(_ value: LuaValue) -> [[UInt8]] {
        switch value {
        case .string(let text): return split(text.bytes)
        case .table:
            return (value.arrayValue ?? []).flatMap { item -> [[UInt8]] in
                if case .string(let text) = item { return split(text.bytes) }
                return []
            }
        default: return []
        }
    }

    static func strings(_ value: LuaValue) -> [String] {
        words(value).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The words between commas, without the spaces and tabs around them (`"fast, db"`).
    public static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        func blank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        return bytes.split(separator: UInt8(ascii: ",")).map { word in
            Array(word.drop(while: blank).reversed().drop(while: blank).reversed())
        }.filter { !$0.isEmpty }
    }
}
