import CLua
import LuaBridge
import Model

/// The error for reading a name a model value or a host handle does not have (a placemark's
/// `contry`, a task's `reslt`, a response's `jsn`), worded as the services' errors are: the names
/// it has and the closest one, at the script's line.
///
/// `no field 'contry' on placemark (fields: name, ..., country, ...; did you mean 'country'?)`
enum UndeclaredField {
    /// The error for `key` on a value of type `typeName` with `fields` and `methods`, placed at
    /// the Lua function `level` above the Swift function raising it (2 when a C `__index` called
    /// it for the script).
    static func error(_ key: String, on typeName: String, fields: [String], methods: [String],
                      level: Int32 = 2, in stack: LuaStack) -> LuaRaise {
        luaL_where(stack.state, level)
        let place = stack.text(at: -1) ?? ""
        stack.pop()
        return LuaRaise(place + message(key, on: typeName, fields: fields, methods: methods))
    }

    /// The message of ``error(_:on:fields:methods:level:in:)`` without its place.
    static func message(_ key: String, on typeName: String, fields: [String], methods: [String]) -> String {
        let alias = aliases[key.lowercased()].flatMap { fields.contains($0) ? $0 : nil }
        return message(key, on: typeName, kind: "field", fields: fields, methods: methods, alias: alias)
    }

    /// The one wording of a name that is neither a field (`kind`: a service's `property`) nor a
    /// method: the kind it resembles, with its names and the closest; a name close to one of
    /// each (`selectd`: the field `selected`, the method `select`) lists both kinds and offers
    /// both, the field first, since a read of either reads the same.
    static func message(_ key: String, on typeName: String, kind: String, fields: [String], methods: [String],
                        alias: String? = nil) -> String {
        let closest = alias ?? NameSuggestion.closest(to: key, among: fields + methods)
        let kinds = kind == "property" ? "properties" : kind + "s"
        if alias == nil, closest != nil, let field = NameSuggestion.closest(to: key, among: fields, prefixes: false),
           let method = NameSuggestion.closest(to: key, among: methods, prefixes: false) {
            return "no \(kind) or method '\(key)' on \(typeName) (\(NameSuggestion.listing(kinds, fields, suggesting: nil)); "
                + "\(NameSuggestion.listing("methods", methods, suggesting: nil)); did you mean the \(kind) '\(field)' or the method '\(method)'?)"
        }
        return if let closest, methods.contains(closest) {
            "no method '\(key)' on \(typeName) (\(NameSuggestion.listing("methods", methods, suggesting: closest)))"
        } else if closest != nil || (methods.isEmpty && kind == "field") {
            "no \(kind) '\(key)' on \(typeName) (\(NameSuggestion.listing(kinds, fields, suggesting: closest)))"
        } else {
            "no \(kind) or method '\(key)' on \(typeName) (\(NameSuggestion.listing(kinds, fields, suggesting: nil)); "
                + "\(NameSuggestion.listing("methods", methods, suggesting: nil)))"
        }
    }

    /// The metatable plain tables of one declared shape share (an `on` handler's `info`, a
    /// change set): its `__index` runs only for a name the table lacks, and raises at the
    /// script's line unless one of `fields` (an optional field the table lacks reads nil), a
    /// name Lua's tools ask (`__name`) or not a string. One `setmetatable` per table, no copy:
    /// these tables are made per delivery. A `readOnly` shape also refuses a write of a name the
    /// table lacks (`cs.insertd = 1` was kept and read back, while a placemark refuses writes):
    /// `__newindex` runs only then, so reads and the host's own filling cost nothing more.
    static func shapeMetatable(_ typeName: String, fields: [String], readOnly: Bool = false, in vm: LuaVM) -> LuaRef {
        let declared = Set(fields)
        let stack = vm.stack
        _ = stack.ensure(2)
        stack.newTable(fieldCount: readOnly ? 2 : 1)                 // mt
        if readOnly {
            vm.pushFunction { stack in                               // table key value
                let key = stack.describe(at: 2)
                let closest = declared.contains(key) ? nil : NameSuggestion.closest(to: key, among: fields)
                let hint = closest.map { " (did you mean '\($0)'?)" } ?? ""
                throw LuaRaise("cannot set '\(typeName).\(key)'\(hint): a \(typeName) is read-only (it is what its service delivered); "
                               + "keep what you need in a local or a table of your own")
            }
            stack.rawSet(-2, "__newindex")                           // mt
        }
        vm.pushFunction { stack in                                   // table key
            guard stack.type(at: 2) == .string, let key = stack.text(at: 2), !key.hasPrefix("__"), !declared.contains(key) else { return .none }
            // The trampoline places it at the script's read (level 1).
            throw LuaRaise(message(key, on: typeName, fields: fields, methods: []))
        }
        stack.rawSet(-2, "__index")                                  // mt
        return vm.ref()
    }

    /// Names meaning a field spelled otherwise, which letters alone would not find: a location's
    /// `latitude` is its `lat` (the closest by letters was `altitude`), `lng` its `lon`.
    private static let aliases = ["latitude": "lat", "lattitude": "lat", "longitude": "lon", "longtitude": "lon", "lng": "lon",
                                  "long": "lon"]

    /// Gives the library table on top of the stack (`timer`, `log`) an `__index` that names a
    /// function it does not have, with those it has and the closest: `timer.evry(1, f)` raised
    /// Lua's bare "attempt to call a nil value (field 'evry')". Names starting with `__` read nil.
    static func guardLibrary(onTop name: String, in vm: LuaVM) {
        let stack = vm.stack
        _ = stack.ensure(3)
        stack.newTable(fieldCount: 1)                                // lib mt
        vm.pushFunction { stack in                                   // lib key
            guard stack.type(at: 2) == .string, let key = stack.text(at: 2), !key.hasPrefix("__") else { return .none }
            var names: [String] = []
            stack.pushNil()
            while lua_next(stack.state, 1) != 0 {
                if stack.type(at: -2) == .string, let found = stack.text(at: -2) { names.append(found) }
                stack.pop()
            }
            names.sort()
            let listing = NameSuggestion.listing(name, names, suggesting: NameSuggestion.closest(to: key, among: names))
            throw LuaRaise("no function '\(name).\(key)' (\(listing))")
        }
        stack.rawSet(-2, "__index")
        lua_setmetatable(stack.state, -2)
    }

    /// The strings of the list at `index` (a Lua array of names), up to its first non-string.
    static func names(inListAt index: Int32, in stack: LuaStack) -> [String] {
        var names: [String] = []
        var position: Int64 = 1
        while stack.type(at: index) == .table, stack.rawGet(index, index: position) == .string, let text = stack.text(at: -1) {
            names.append(text)
            stack.pop()
            position += 1
        }
        stack.pop()
        return names
    }

    /// The handle getters' answer for a key that is none of theirs: Lua's own names (`__name`,
    /// `__close`, asked by the standard library and tools) and non-string keys read nil, as they
    /// always did; any other name raises.
    static func check(_ key: String?, on typeName: String, fields: [String], methods: [String],
                      in stack: LuaStack) throws(LuaRaise) {
        guard let key, !key.hasPrefix("__") else { return }
        throw error(key, on: typeName, fields: fields, methods: methods, in: stack)
    }
}
