import Model

extension StubWriter {
    /// Why an existing `.luarc.json` cannot take Crescent's settings.
    public struct LuarcProblem: Error, CustomStringConvertible {
        public let description: String
    }

    /// The user's `.luarc.json` text `existing` with Crescent's settings for the stubs in `library`
    /// added, or nil when it has them all already (then the file need not be written).
    ///
    /// The user's keys are kept, values included: an array Crescent also sets
    /// (`workspace.library`, `diagnostics.globals`) gets the entries it lacks appended; a key the
    /// user does not have is added, into the nested table (`"workspace": {"library": …}`) when the
    /// file spells that section nested, else with its dotted name. Members are written one a line.
    ///
    /// ```swift
    /// let text = try StubWriter.mergedLuarc(existing: #"{"runtime.version": "LuaJIT"}"#, library: "types")
    /// // keeps "LuaJIT", adds "workspace.library": ["types"] and the globals
    /// ```
    ///
    /// - Throws: ``LuarcProblem`` when `existing` is not a JSON object (LuaLS's comments included:
    ///   Crescent does not rewrite what it cannot read whole).
    public static func mergedLuarc(existing: String, library: String) throws(LuarcProblem) -> String? {
        let decoded: Value
        do throws(ServiceError) {
            decoded = try Value(jsonText: existing)
        } catch {
            throw LuarcProblem(description: "it is not JSON that Crescent can read (\(error.message))")
        }
        guard case .object(let user) = decoded else { throw LuarcProblem(description: "it is not a JSON object") }
        // Our own text, which this same decoder reads (LuarcTests checks it).
        guard case .object(let ours) = (try? Value(jsonText: luarc(library: library))) ?? .null else { return nil }
        var merged = user
        for (key, value) in ours {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            if merged[key] == nil, parts.count == 2, case .object(var section)? = merged[parts[0]] {
                section[parts[1]] = adding(value, to: section[parts[1]])
                merged[parts[0]] = .object(section)
            } else {
                merged[key] = adding(value, to: merged[key])
            }
        }
        guard merged != user else { return nil }
        return luarcText(merged)
    }

    /// The warning for a `.luarc.json` text `existing` whose `runtime.version` (dotted or nested)
    /// is not Crescent's Lua 5.4: the merge keeps it, as every setting of the user's, and LuaLS
    /// would then check the scripts as another Lua without a word. Nil when it is 5.4 or unset.
    public static func runtimeVersionWarning(existing: String, path: String) -> String? {
        guard case .object(let user)? = try? Value(jsonText: existing) else { return nil }
        var version = user["runtime.version"]
        if version == nil, case .object(let runtime)? = user["runtime"] { version = runtime["version"] }
        guard let version, version != .string("Lua 5.4") else { return nil }
        return "warning: \(path) keeps your \"runtime.version\": \(version.jsonText), but crescent runs Lua 5.4, so the editor would "
            + "check your scripts as another Lua: set it to \"Lua 5.4\""
    }

    /// The user's `existing` value with `ours` added: the entries an array lacks appended; any
    /// other value the user set is kept.
    private static func adding(_ ours: Value, to existing: Value?) -> Value {
        guard let existing else { return ours }
        guard case .array(let theirs) = existing, case .array(let wanted) = ours else { return existing }
        return .array(theirs + wanted.filter { !theirs.contains($0) })
    }

    /// A JSON object with one member a line, as ``luarc(library:)`` writes it.
    private static func luarcText(_ fields: Fields) -> String {
        let members = fields.map { key, value in "  " + Value.jsonString(key) + ": " + value.jsonText }
        return "{\n" + members.joined(separator: ",\n") + "\n}\n"
    }
}
