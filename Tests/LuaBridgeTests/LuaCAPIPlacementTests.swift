import Foundation
import Testing

/// The Lua C API is called from the bridge only: `Sources/LuaBridge` (the Swift face of the API)
/// and `Sources/CrescentKit/Binding` (the model in Lua). Everything else goes through their named
/// operations. `Sources/crescent-bench` may call it too: its baselines are loops in C against the
/// raw API, which the bridge's rows are measured against.
@Suite struct LuaCAPIPlacementTests {
    static let allowedFolders = ["Sources/LuaBridge/", "Sources/CrescentKit/Binding/", "Sources/crescent-bench/"]

    @Test func theLuaCAPIIsCalledOnlyFromTheBridge() throws {
        let scan = try LuaCAPIScan(root: LuaCAPIScan.packageRoot)
        let findings = try scan.findings(in: "Sources")
        let outside = findings.filter { finding in !Self.allowedFolders.contains { finding.path.hasPrefix($0) } }
        for finding in outside {
            Issue.record("""
                \(finding): the Lua C API outside the bridge; call a named operation of LuaStack, LuaVM, \
                LuaRef or LuaCoroutine (Sources/LuaBridge) or of a Binding type (Sources/CrescentKit/Binding) instead
                """)
        }
        // The scan sees the bridge's own calls: a wrong root or a broken pattern cannot pass.
        #expect(findings.contains { $0.path.hasPrefix("Sources/LuaBridge/") && $0.name == "lua_settop" })
        #expect(findings.contains { $0.path.hasPrefix("Sources/CrescentKit/Binding/") && $0.name == "crescent_getref" })
    }

    @Test func theScanNamesCallsAndTypesButNotCommentsOrStrings() throws {
        let scan = try LuaCAPIScan(root: LuaCAPIScan.packageRoot)
        #expect(scan.shimNames.contains("crescent_pgettable"), "the shim's functions on a lua_State are read from CLua.h")
        #expect(!scan.shimNames.contains("crescent_flag_new"), "the shim's functions without a lua_State are not the Lua API")
        let text = """
            while lua_next(stack.state, 1) != 0 {}   // lua_settop in a comment
            let name = "lua_loop"
            var info = lua_Debug()
            _ = crescent_pgettable(stack.state, -2) == LUA_OK
            crescent_write_stdout(pointer, count)
            /// luaL_where in a doc comment
            let lua = \"""
                lua_pushnil(L)
                \"""
            if stack.pendingInterrupt == Int32(CRESCENT_INTERRUPT_SIGNAL) {}
            """
        let names = scan.findings(inText: text, path: "Sources/X/Y.swift").map { "\($0.line):\($0.name)" }
        #expect(names == ["1:lua_next", "3:lua_Debug", "4:crescent_pgettable", "4:LUA_OK", "10:CRESCENT_INTERRUPT_SIGNAL"])
    }
}

/// Finds the Lua C API in Swift sources: Lua's own names (`lua_*`, `luaL_*`, `LUA_*`) and the
/// shim's functions that take a `lua_State` and its constants, as `CLua/Shim/include/CLua.h`
/// declares them. Comments and string literals are skipped.
struct LuaCAPIScan {
    struct Finding: CustomStringConvertible {
        let path: String
        let line: Int
        let name: String
        var description: String { "\(path):\(line): \(name)" }
    }

    /// The package root, from this file's place: Tests/LuaBridgeTests/LuaCAPIPlacementTests.swift.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    let root: URL
    /// The shim's names that are the Lua API (functions on a `lua_State`, the host's constants).
    let shimNames: Set<String>
    private let pattern: NSRegularExpression

    init(root: URL) throws {
        self.root = root
        let header = try String(contentsOf: root.appendingPathComponent("CLua/Shim/include/CLua.h"), encoding: .utf8)
        let code = header.replacingOccurrences(of: #"/\*[\s\S]*?\*/"#, with: "", options: .regularExpression)
        var names = Set(Self.captures(#"\b(crescent_\w+)\s*\(\s*lua_State\b"#, in: code))
        names.formUnion(Self.captures(#"#define\s+(CRESCENT_\w+)\s"#, in: code))
        names.formUnion(Self.captures(#"\b(CRESCENT_\w+)\s*="#, in: code))
        names.remove("CRESCENT_CLUA_H")
        shimNames = names
        let alternatives = ([#"lua_\w+"#, #"luaL_\w+"#, #"LUA_\w+"#] + names.sorted()).joined(separator: "|")
        pattern = try NSRegularExpression(pattern: #"(?<![\w.])("# + alternatives + #")\b"#)
    }

    /// Every use under `folder` (relative to the root), in path and line order.
    func findings(in folder: String) throws -> [Finding] {
        let base = root.appendingPathComponent(folder)
        guard let walk = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var findings: [Finding] = []
        for case let file as String in walk where file.hasSuffix(".swift") {
            let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
            findings += self.findings(inText: text, path: folder + "/" + file)
        }
        return findings.sorted { ($0.path, $0.line) < ($1.path, $1.line) }
    }

    /// The uses in one file's text.
    func findings(inText text: String, path: String) -> [Finding] {
        var findings: [Finding] = []
        var inMultilineString = false
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(rawLine)
            if line.components(separatedBy: "\"\"\"").count % 2 == 0 {
                inMultilineString.toggle()
                continue
            }
            guard !inMultilineString else { continue }
            let code = Self.withoutStringsAndComments(line)
            let range = NSRange(code.startIndex..., in: code)
            for match in pattern.matches(in: code, range: range) {
                guard let name = Range(match.range(at: 1), in: code) else { continue }
                findings.append(Finding(path: path, line: offset + 1, name: String(code[name])))
            }
        }
        return findings
    }

    /// The line with its string literals emptied and its `//` comment cut.
    private static func withoutStringsAndComments(_ line: String) -> String {
        var result = ""
        var inString = false
        var previous: Character = " "
        var escaped = false
        for character in line {
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false; result.append(character) }
                continue
            }
            if character == "/" && previous == "/" {
                result.removeLast()
                break
            }
            if character == "\"" { inString = true }
            result.append(character)
            previous = character
        }
        return result
    }

    private static func captures(_ pattern: String, in text: String) -> [String] {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return [] }
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
