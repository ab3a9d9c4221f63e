import LuaBridge
import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

/// Tab completion for the REPL, without side effects: it reads tables with raw access, follows
/// `__index` only where it is a table, and learns what a service or data model offers from its
/// declaration. No function is ever called, so no user code runs (a model object's property is
/// read through the binding, which is the host's own code), but a command's own `complete`, which
/// its author declared for this and the terminal's Tab calls too.
///
/// | before the cursor | candidates |
/// |---|---|
/// | `pri` | globals and keywords |
/// | `string.fo`, `services.lo` | fields of the table, then of its `__index` tables |
/// | `services.location.lo` | the object's properties and methods |
/// | `services.location:st`, `s:up` | methods: functions of the table, the object's methods, the string library |
/// | `services.location:on("did`, `on(x, "`, `observe(x, "` | events, properties |
/// | `services.geocoder:search("Mün` | what the object offers for that argument (``ArgumentCompleting``): place names |
/// | `:ref` at the start | the top controller's commands |
/// | `:add m` | the command's argument: its `complete`, else its declared type's values |
/// | `.he`, `.load scr`, `.services lo` | dot commands, files, service names |
struct LuaCompletion {
    let host: Host

    /// Full replacements for the fragment before the cursor, and the fragment's length.
    struct Answer: Equatable {
        var candidates: [String] = []
        var fragmentLength = 0
    }

    static let keywords = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
                           "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"]

    /// The candidates for the text before the cursor.
    func complete(_ prefix: String) -> Answer {
        let line = prefix.drop { $0 == " " || $0 == "\t" }
        if line.hasPrefix("."), let answer = completeDotCommand(String(line)) { return answer }
        if line.hasPrefix(":"), !line.contains(" ") {
            let fragment = String(line.dropFirst())
            return Answer(candidates: Self.matching(host.commandNames(), fragment), fragmentLength: fragment.count)
        }
        // A command's argument (`:add m`): what Tab offers on the terminal's command line (the
        // command's `complete`, else its declared type's values), not Lua's names.
        if line.hasPrefix(":") {
            let (candidates, count) = host.completions(before: String(line.dropFirst()))
            return Answer(candidates: candidates, fragmentLength: count)
        }
        if let answer = completeStringArgument(Self.tail(of: line)) { return answer }
        guard !Self.endsInsideString(line) else { return Answer() }
        let chain = String(line.reversed().prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == ":" }.reversed())
        return completeChain(chain)
    }

    // MARK: Names

    /// `a.b.c:frag`: resolves `a.b.c` and lists what follows the separator.
    private func completeChain(_ chain: String) -> Answer {
        guard let separatorIndex = chain.lastIndex(where: { $0 == "." || $0 == ":" }) else {
            guard chain.first.map({ !$0.isNumber }) ?? true else { return Answer() }
            let stack = host.vm.stack
            stack.pushGlobals()
            defer { stack.pop() }
            let names = fieldNames(at: -1, methodsOnly: false) + Self.keywords
            return Answer(candidates: Self.matching(names, chain), fragmentLength: chain.count)
        }
        let fragment = String(chain[chain.index(after: separatorIndex)...])
        let path = chain[..<separatorIndex].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !path.contains(where: { $0.isEmpty || $0.contains(":") || $0.first?.isNumber == true }) else { return Answer() }
        let stack = host.vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        guard resolve(path) else { return Answer() }
        let names = fieldNames(at: -1, methodsOnly: chain[separatorIndex] == ":")
        return Answer(candidates: Self.matching(names, fragment), fragmentLength: fragment.count)
    }

    /// Pushes the value `path` names, starting from the globals; false when any step is missing.
    private func resolve(_ path: [String]) -> Bool {
        let stack = host.vm.stack
        stack.pushGlobals()
        for name in path {
            guard field(name, of: -1) else { return false }
            stack.replace(at: -2)
        }
        return true
    }

    /// Pushes field `name` of the value at `index` without running Lua code: raw lookups through
    /// `__index` tables, or a model object's property. False (nothing pushed) when there is none.
    private func field(_ name: String, of index: Int32) -> Bool {
        let stack = host.vm.stack
        let value = stack.absolute(index)
        let base = stack.top
        if host.binding.isServicesTable(at: value, in: stack) {
            return host.binding.pushService(named: name, onto: stack)
        }
        if let box = host.binding.anyObjectBox(at: value, in: stack) {
            guard box.interface.property(name) != nil else { return false }
            stack.push(name)
            // The object's __index is the host's own (a cache, then the declared getter).
            guard stack.pushIndexed(value), stack.type(at: -1) != .nil else {
                stack.setTop(base)
                return false
            }
            return true
        }
        var current = value
        for _ in 0..<8 {
            if stack.type(at: current) == .table {
                stack.push(name)
                if stack.rawGet(current) != .nil {
                    // Keep only the value: drop the metatables and __index tables under it.
                    if stack.top > base + 1 { stack.replace(at: base + 1) }
                    stack.setTop(base + 1)
                    return true
                }
                stack.pop()
            }
            guard ModelBinding.pushIndexTable(of: current, in: stack) else { break }
            current = stack.top
        }
        stack.setTop(base)
        return false
    }

    /// The names a value at `index` offers: its fields through `__index` tables, or a model
    /// object's declared properties and methods. With `methodsOnly`, only what `:` can call.
    private func fieldNames(at index: Int32, methodsOnly: Bool) -> [String] {
        let stack = host.vm.stack
        let value = stack.absolute(index)
        if let box = host.binding.anyObjectBox(at: value, in: stack) {
            let methods = host.binding.methodNames[box.name] ?? box.interface.methods.map(\.name)
            return methodsOnly ? methods : box.interface.properties.map(\.name) + methods
        }
        if host.binding.isServicesTable(at: value, in: stack) { return host.binding.services.map(\.name) }
        var names: [String] = []
        var current = value
        let base = stack.top
        defer { stack.setTop(base) }
        for _ in 0..<8 {
            if stack.type(at: current) == .table { names += keys(of: current, functionsOnly: methodsOnly) }
            guard ModelBinding.pushIndexTable(of: current, in: stack) else { break }
            current = stack.top
        }
        return names
    }

    /// The identifier keys of the table at `table` (with `functionsOnly`, those holding functions).
    private func keys(of table: Int32, functionsOnly: Bool) -> [String] {
        let stack = host.vm.stack
        var names: [String] = []
        stack.pushNil()
        while stack.next(in: table) {
            if stack.type(at: -2) == .string, let name = stack.text(at: -2), Self.isIdentifier(name),
               !functionsOnly || stack.type(at: -1) == .function {
                names.append(name)
            }
            stack.pop()
        }
        return names
    }

    // MARK: Strings and commands

    /// Inside the string argument of `obj:on("`, `obj:observe("`, `on(obj, "` or `observe(obj, "`:
    /// the object's events or properties. `on("` lists `service.event` names.
    private func completeStringArgument(_ line: String) -> Answer? {
        let object = #"([A-Za-z_][A-Za-z0-9_.]*)"#
        let open = #"\(\s*["']([A-Za-z0-9_.]*)$"#
        let patterns: [(String, Bool)] = [
            (object + #":on"# + open, true), (object + #":observe"# + open, false),
        ]
        for (pattern, events) in patterns {
            guard let regex = try? Regex(pattern), let match = try? regex.firstMatch(in: line),
                  let path = match.output[1].substring, let fragment = match.output[2].substring else { continue }
            return members(of: String(path), events: events, fragment: String(fragment))
        }
        if let answer = completeFirstArgument(line, object: object) { return answer }
        let global = #"(?:^|[^A-Za-z0-9_.:])(on|observe)\(\s*"# + object + #"\s*,\s*["']([A-Za-z0-9_]*)$"#
        if let regex = try? Regex(global), let match = try? regex.firstMatch(in: line),
           let function = match.output[1].substring, let path = match.output[2].substring,
           let fragment = match.output[3].substring {
            return members(of: String(path), events: function == "on", fragment: String(fragment))
        }
        if let regex = try? Regex(#"(?:^|[^A-Za-z0-9_.:])on\(\s*["']([A-Za-z0-9_.]*)$"#), let match = try? regex.firstMatch(in: line),
           let fragment = match.output[1].substring {
            let names = host.binding.services.flatMap { service in
                service.interface.events.map { service.name + "." + $0.name }
            }
            return Answer(candidates: Self.matching(names, String(fragment)), fragmentLength: fragment.count)
        }
        return nil
    }

    /// How many values an object's own completions (``ArgumentCompleting``) may offer at once.
    static let argumentCompletionLimit = 20

    /// Inside the first string argument of `obj:method("…`, where the object completes that
    /// argument itself (``ArgumentCompleting``): `services.geocoder:search("Mün` → `München`.
    private func completeFirstArgument(_ line: String, object: String) -> Answer? {
        guard let regex = try? Regex(object + #":([A-Za-z_][A-Za-z0-9_]*)\(\s*(["'])([^"'\\]*)$"#),
              let match = try? regex.firstMatch(in: line),
              let path = match.output[1].substring, let method = match.output[2].substring,
              let fragment = match.output[4].substring else { return nil }
        let stack = host.vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        guard resolve(path.split(separator: ".").map(String.init)),
              let box = host.binding.anyObjectBox(at: -1, in: stack),
              let completing = box.object as? any ArgumentCompleting else { return nil }
        let candidates = completing.completions(method: String(method), argument: 1, prefix: String(fragment),
                                                limit: Self.argumentCompletionLimit)
        return Answer(candidates: candidates, fragmentLength: fragment.count)
    }

    /// The events (or properties) of the model object `path` names.
    private func members(of path: String, events: Bool, fragment: String) -> Answer {
        let stack = host.vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        guard resolve(path.split(separator: ".").map(String.init)),
              let box = host.binding.anyObjectBox(at: -1, in: stack) else { return Answer() }
        let names = events ? box.interface.events.map(\.name) : box.interface.properties.map(\.name)
        return Answer(candidates: Self.matching(names, fragment), fragmentLength: fragment.count)
    }

    /// `.he` → `.help`; `.load s` → files; `.services l` → service names.
    private func completeDotCommand(_ line: String) -> Answer? {
        guard let space = line.firstIndex(of: " ") else {
            guard line.dropFirst().allSatisfy(\.isLetter) else { return nil }
            return Answer(candidates: Self.matching(DotCommand.list.map(\.name), line), fragmentLength: line.count)
        }
        let command = line[..<space]
        let argument = String(line[line.index(after: space)...].drop { $0 == " " })
        switch command {
        case ".services":
            return Answer(candidates: Self.matching(host.binding.services.map(\.name), argument), fragmentLength: argument.count)
        case ".load":
            return Self.files(completing: argument)
        default:
            return Answer()
        }
    }

    /// Paths that complete `partial`: folders end with `/`.
    static func files(completing partial: String) -> Answer {
        let slash = partial.lastIndex(of: "/")
        let folder = slash.map { String(partial[...$0]) } ?? ""
        let fragment = slash.map { String(partial[partial.index(after: $0)...]) } ?? partial
        guard let entries = Folders.names(in: folder.isEmpty ? "." : folder) else { return Answer() }
        var names: [String] = []
        for name in entries {
            guard name.hasPrefix(fragment), !name.hasPrefix(".") || fragment.hasPrefix(".") else { continue }
            var status = stat()
            let isFolder = stat(folder + name, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
            names.append(folder + name + (isFolder ? "/" : ""))
        }
        return Answer(candidates: names.sorted(), fragmentLength: partial.count)
    }

    // MARK: Helpers

    /// How many characters at the end of the line the string-argument patterns read.
    static let patternWindow = 256

    /// The end of `line` the string-argument patterns are matched against: at most
    /// ``patternWindow`` characters, so a completion costs the same on a line of any length (the
    /// patterns are tried at every start; on a whole 10,000-character line that took 23 s). A name
    /// the window cuts is dropped whole, so no shorter name is completed in its place.
    static func tail(of line: Substring) -> String {
        guard line.count > patternWindow else { return String(line) }
        return String(line.suffix(patternWindow).drop { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == ":" })
    }

    /// The names that start with `fragment`, sorted and unique; names starting with `_` only when
    /// the fragment does.
    static func matching(_ names: [String], _ fragment: String) -> [String] {
        let hidden = !fragment.hasPrefix("_")
        return Set(names.filter { $0.hasPrefix(fragment) && !(hidden && $0.hasPrefix("_")) }).sorted()
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil)) }
            && !keywords.contains(name)
    }

    /// Whether the text ends inside a quoted string (where names are not completed).
    static func endsInsideString(_ text: Substring) -> Bool {
        var quote: Character?
        var escaped = false
        for character in text {
            if escaped { escaped = false; continue }
            if let open = quote {
                if character == "\\" { escaped = true } else if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            }
        }
        return quote != nil
    }
}
