import Foundation
import LuaBridge

/// `crescent test --coverage`: how often each line of each Lua file ran, across every spec file's host,
/// counted by a line hook (``LuaVM/setLineHook(_:)``) that is set only while coverage is on. Files are the
/// chunks loaded from files (`@path`): scripts, required modules, plugins loaded in the test's
/// VM; not the `*_spec.lua` files, the prelude or strings.
///
/// The hook is set on each host's main thread, and the coroutines the host makes take it from
/// there (Lua 5.4 gives a new thread its creator's hook). The interrupt shim saves and restores
/// it around its own.
final class LineCoverage: @unchecked Sendable {
    // @unchecked Sendable: the hook runs on the runner thread running the hosts' Lua (one at a time:
    // a runner abandoned in a finalizer loop runs no hook there), and the run reads the counts once
    // the runner has finished, after the session's lock has passed its results across.

    /// The files in the order first seen, and each one's hits by line (index 0 unused).
    private(set) var files: [String] = []
    private(set) var hits: [[Int]] = []
    private var indexByName: [String: Int] = [:]
    /// Each chunk's source string (a Lua string that lives as long as the function's prototype)
    /// by address: the file index, or -1 for a chunk not counted. Valid for one VM: cleared when
    /// the hook goes on a new one, whose strings may reuse the addresses.
    private var indexBySource: [UnsafeRawPointer: Int] = [:]
    /// The last chunk seen and its index: most line events follow one in the same chunk.
    private var lastSource: UnsafeRawPointer?
    private var lastIndex = -1

    /// The collector the hook counts into while a run measures coverage.
    nonisolated(unsafe) static var active: LineCoverage?
    // nonisolated(unsafe): set when a host starts, on the runner thread, the only one running Lua
    // in `crescent test` (SpecSession), and cleared once the last runner has finished.

    /// Puts the line hook on `vm` (a new test host's).
    func install(on vm: LuaVM) {
        indexBySource.removeAll(keepingCapacity: true)
        lastSource = nil
        Self.active = self
        vm.setLineHook { state, record in
            guard let event = LuaLineEvent(state, record), let coverage = LineCoverage.active else { return }
            coverage.count(event)
        }
    }

    private func count(_ event: LuaLineEvent) {
        let line = event.line
        guard line > 0, let source = event.source() else { return }
        let key = UnsafeRawPointer(source)
        let index: Int
        if key == lastSource {
            index = lastIndex
        } else if let known = indexBySource[key] {
            index = known
        } else {
            index = fileIndex(String(cString: source))
            indexBySource[key] = index
        }
        lastSource = key
        lastIndex = index
        guard index >= 0 else { return }
        if hits[index].count <= line { hits[index].append(contentsOf: repeatElement(0, count: line + 1 - hits[index].count)) }
        hits[index][line] += 1
    }

    /// The index of the file `source` names, or -1 when it is not counted.
    private func fileIndex(_ source: String) -> Int {
        guard source.hasPrefix("@"), !source.hasSuffix("_spec.lua") else { return -1 }
        var name = String(source.dropFirst())
        while name.hasPrefix("./") { name.removeFirst(2) }
        if let known = indexByName[name] { return known }
        files.append(name)
        hits.append([])
        indexByName[name] = files.count - 1
        return files.count - 1
    }

    /// The counts by file name, each a map from line to hits.
    var byFile: [String: [Int: Int]] {
        var result: [String: [Int: Int]] = [:]
        for (index, name) in files.enumerated() {
            var lines: [Int: Int] = [:]
            for (line, count) in hits[index].enumerated() where count > 0 { lines[line] = count }
            result[name] = lines
        }
        return result
    }
}

extension LineCoverage {
    /// The reports of the run, made by the `coverage` prelude module with luacov's rule for which
    /// lines count: `luacov.report.out`'s text, the per-file table with the total, and LCOV.
    struct Reports: Sendable {
        let report: String
        let summary: String
        let lcov: String
    }

    /// Makes the reports from the counts and the files as they are now (sorted by name).
    ///
    /// The files go to the report's VM through raw stack operations, the counts as an array from
    /// line 1: a model value (a dictionary keyed by line) cost a hashed insert per line of a
    /// million-line file.
    func reports() throws(LuaError) -> Reports {
        let vm = try LuaVM()
        defer { vm.close() }
        try Prelude.coverage.load(into: vm)                              // fn
        let stack = vm.stack
        let named = files.sorted().compactMap { name -> (String, Int, Data)? in
            guard let index = indexByName[name], let data = FileManager.default.contents(atPath: name) else { return nil }
            return (name, index, data)
        }
        stack.newTable(arrayCount: Int32(clamping: named.count))        // fn files
        for (position, (name, index, data)) in named.enumerated() {
            stack.newTable(fieldCount: 3)                                // fn files file
            stack.push(name)
            stack.rawSet(-2, "name")
            data.withUnsafeBytes { stack.push(bytes: $0) }
            stack.rawSet(-2, "source")
            let counts = hits[index]
            stack.newTable(arrayCount: Int32(clamping: max(counts.count - 1, 0)))
            for line in counts.indices.dropFirst() {
                stack.push(counts[line])
                stack.rawSet(-2, index: Int64(line))
            }
            stack.rawSet(-2, "hits")                                     // fn files file
            stack.rawSet(-2, index: Int64(position + 1))                 // fn files
        }
        try vm.call(arguments: 1, results: 3)
        return Reports(report: vm.stack.text(at: -3) ?? "", summary: vm.stack.text(at: -2) ?? "", lcov: vm.stack.text(at: -1) ?? "")
    }

    /// Writes `luacov.report.out` and `coverage/lcov.info` under `folder`; the summary table to print.
    func write(to folder: String) throws(SpecRunner.ReportFailure) -> String {
        let reports: Reports
        do {
            reports = try self.reports()
        } catch {
            throw SpecRunner.ReportFailure(description: "cannot make the coverage report: \(error.message)")
        }
        guard !folder.isEmpty, FileManager.default.fileExists(atPath: folder) else {
            throw SpecRunner.ReportFailure(description: "cannot write the coverage report: the working folder \(folder) was removed "
                                            + "while the tests ran (run crescent test --coverage in a folder that stays)")
        }
        // Named as the user knows them: relative to the working folder.
        let prefix = folder == FileManager.default.currentDirectoryPath ? "" : folder + "/"
        do throws(ProjectFiles.Failure) {
            try ProjectFiles.write(reports.report, to: prefix + "luacov.report.out")
            try ProjectFiles.write(reports.lcov, to: prefix + "coverage/lcov.info")
        } catch {
            throw SpecRunner.ReportFailure(description: "cannot write the coverage report: \(error)")
        }
        return reports.summary
    }
}
