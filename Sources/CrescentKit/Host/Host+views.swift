import LuaBridge
import Model

extension Host {
    /// Installs `view.text`, `view.list`, `view.table`, `view.keyvalue`, `view.progress`,
    /// `view.stack`, `view.row`, `view.slot` and `view.template`.
    func installViews() {
        let nodeType = vm.objectType(
            ViewNode.self, name: "View",
            methods: [
                "update": { [unowned self] stack in
                    let node = try self.viewType.checkSelf(in: stack, function: "update")
                    try node.update(try self.viewValue(at: 2, in: stack, function: "\(node.kind.name).update"))
                    self.warnOfAbsentVariables(node, stack)
                    return .none
                },
                "set": { [unowned self] stack in
                    let node = try self.viewType.checkSelf(in: stack, function: "set")
                    let row = try stack.checkInteger(2, function: "set")
                    let key = try stack.checkString(3, function: "set")
                    try node.kind.setCell(node, row: Int(clamping: row) - 1, key: key,
                                          value: try self.viewValue(at: 4, in: stack, function: "\(node.kind.name).set"))
                    return .none
                },
                "apply": { [unowned self] stack in
                    let node = try self.viewType.checkSelf(in: stack, function: "apply")
                    let changes = try self.viewValue(at: 2, in: stack, function: "\(node.kind.name).apply")
                    let items = try self.viewValue(at: 3, in: stack, function: "\(node.kind.name).apply")
                    try node.apply(changes, items: items)
                    // The selected row removed: another item is selected, which the controller
                    // hears as it hears any move.
                    if node.selection?.lostItsRow == true {
                        node.selection?.lostItsRow = false
                        if let index = node.selection?.index { self.queueSelectionChange(node, index: index, on: stack) }
                    }
                    return .none
                },
                "select": { [unowned self] stack in
                    let node = try self.viewType.checkSelf(in: stack, function: "select")
                    let index = try stack.checkInteger(2, function: "select")
                    guard node.isSelectable else {
                        throw LuaRaise("view.\(node.kind.name):select(index): the component is not selectable (set selectable = true on a view.list or view.table)")
                    }
                    guard (1...Int64(max(node.rowCount, 1))).contains(index), node.rowCount > 0 else {
                        throw LuaRaise("view.\(node.kind.name):select(index): row \(index) does not exist (rows: \(node.rowCount))")
                    }
                    node.select(Int(index) - 1)
                    return .none
                },
                "find": { [unowned self] stack in
                    let node = try self.viewType.checkSelf(in: stack, function: "find")
                    if let found = node.find(try stack.checkString(2, function: "find")) {
                        self.viewType.push(found, onto: stack)
                    } else {
                        stack.pushNil()
                    }
                    return .one
                },
            ],
            getter: { [unowned self] stack in
                guard let node = self.viewType.object(at: 1, in: stack), let key = stack.text(at: 2) else { return .none }
                switch key {
                case "id": if let id = node.id { stack.push(id) } else { stack.pushNil() }
                case "kind": stack.push(node.kind.name)
                case "selected":
                    if let index = node.selection?.index { stack.push(Int64(index + 1)) } else { stack.pushNil() }
                case "selectedItem":
                    if let index = node.selection?.index { self.binding.push(node.item(at: index), onto: stack) } else { stack.pushNil() }
                default:
                    // A field the component takes reads nil when unset; any other name is a
                    // misspelling (`t:updat`, `t.txt`), named with what it has.
                    if node.fields[key] == nil, !node.kind.fields.contains(key) {
                        let selection = node.kind.rowsField != nil ? ["selected", "selectedItem"] : []
                        try UndeclaredField.check(key, on: "view.\(node.kind.name)",
                                                  fields: ["id", "kind"] + node.kind.fields + selection,
                                                  methods: ["apply", "find", "select", "set", "update"], in: stack)
                    }
                    self.binding.push(node.fields[key] ?? .null, onto: stack)
                }
                return .one
            },
            setter: { [unowned self] stack in
                guard let node = self.viewType.object(at: 1, in: stack) else { return .none }
                let key = try stack.checkString(2, function: "__newindex")
                try node.set(key, try self.viewValue(at: 3, in: stack, function: "view.\(node.kind.name).\(key)"))
                self.warnOfAbsentVariables(node, stack)
                return .none
            },
            metamethods: [
                "__tostring": { [unowned self] stack in
                    guard let node = self.viewType.object(at: 1, in: stack) else { return .none }
                    stack.push("<view.\(node.kind.name)\(node.id.map { " #\($0)" } ?? "")>")
                    return .one
                },
            ]
        )
        _ = nodeType
        let stack = vm.stack
        stack.newTable(fieldCount: Int32(ViewKinds.all.count))
        for kind in ViewKinds.all {
            vm.register(field: kind.name) { [unowned self] stack in
                try self.makeView(kind, stack)
            }
        }
        // `view.txt {}`: a name that is not a component is an error listing them (the table
        // holds every component, so a hit never gets here).
        stack.newTable(fieldCount: 1)                                // view mt
        vm.register(field: "__index") { stack in
            guard stack.type(at: 2) == .string, let name = stack.text(at: 2) else { return .none }
            let kinds = ViewKinds.all.map { $0.name }
            let listing = NameSuggestion.listing("components", kinds, suggesting: NameSuggestion.closest(to: name, among: kinds))
            throw LuaRaise("no view component 'view.\(name)' (\(listing))")
        }
        stack.setMetatable(-2)                                       // view
        vm.setGlobal("view")
    }

    var viewType: LuaObjectType<ViewNode> { vm.objectType(ViewNode.self, name: "View") }

    /// `view.text("hi")`, `view.list{ "a", "b" }`, `view.table{ id = "items", columns = {...} }`,
    /// `view.stack{ a, b }`.
    private func makeView(_ kind: any ViewKind.Type, _ stack: LuaStack) throws -> LuaReturn {
        let function = "view." + kind.name
        var id: String?
        var fields: Fields = [:]
        var children: [ViewNode] = []
        var listItems: [Value] = []
        switch stack.type(at: 1) {
        case .none, .nil: break
        case .table:
            stack.pushNil()
            while stack.next(in: 1) {
                defer { stack.pop() }
                if stack.type(at: -2) == .number {
                    if kind.takesPositionalItems {
                        // view.list{ "a", "b" }: the items themselves.
                        do { listItems.append(try binding.value(at: -1, in: stack)) } catch {
                            throw LuaRaise("\(function): item \(stack.describe(at: -2)) cannot be shown: \(error.description)")
                        }
                        continue
                    }
                    guard let child = viewType.object(at: -1, in: stack) else {
                        throw LuaRaise("\(function): item \(stack.describe(at: -2)) must be a view component (view.text, ...), got \(stack.typeName(at: -1))")
                    }
                    children.append(child)
                    continue
                }
                guard let key = stack.text(at: -2) else { continue }
                if key == "id" {
                    id = try stack.checkString(-1, function: "view")
                    continue
                }
                do { fields[key] = try binding.value(at: -1, in: stack) } catch {
                    // `view.row { children = { ... } }`: components in a field of their own, which
                    // was taken as data and refused as such; a stack or row takes them as its items.
                    if kind.holdsChildren, !kind.fields.contains(key), stack.type(at: -1) == .table {
                        _ = stack.rawGet(-1, index: 1)                      // ... key value value[1]
                        let isComponent = viewType.object(at: -1, in: stack) != nil
                        stack.pop()
                        if isComponent {
                            throw LuaRaise("\(function) takes its components as list items, not in a field '\(key)': "
                                + "\(function) { view.text { ... }, view.text { ... } }")
                        }
                    }
                    // Worded as every JSON path words it (`pairs.w is a function: ...`).
                    throw LuaRaise("\(function): \(error.message(root: key, subject: "values shown in a view"))")
                }
            }
        default:
            // Whether the kind takes a bare value at all does not depend on the value.
            guard kind.constructorFields(bare: .null) != nil else {
                // A stack's or row's example shows what it holds: `view.stack(a, b)` for `view.stack { a, b }`.
                let example = kind.holdsChildren ? "\(function) { view.text { text = \"a\" }, view.text { text = \"b\" } }"
                    : "\(function){ id = \"name\" }"
                throw LuaRaise("\(function): pass a table of fields, e.g. \(example)")
            }
            do { fields = kind.constructorFields(bare: try binding.value(at: 1, in: stack)) ?? [:] } catch {
                throw LuaRaise("\(function): \(error.description)")
            }
        }
        // What the constructor takes: the component's fields, its id and (a template) its file.
        let taken = ["id"] + kind.fields + (kind.fileField != nil ? ["file"] : [])
        if let unknown = fields.keys.sorted().first(where: { !taken.contains($0) }) {
            let listing = NameSuggestion.listing("fields", taken, suggesting: NameSuggestion.closest(to: unknown, among: taken))
            throw LuaRaise("\(function): no field '\(unknown)' (\(listing))")
        }
        if !listItems.isEmpty { fields["items"] = .array(listItems) }
        if let problem = kind.constructorProblem(fields, id: id) { throw LuaRaise("\(function): \(problem)") }
        let templateFile = kind.fileField != nil ? fields.removeValue(forKey: "file")?.stringValue : nil
        if let target = kind.fileField, let templateFile { fields[target] = .string(try readTemplate(templateFile)) }
        guard children.isEmpty || kind.holdsChildren else {
            throw LuaRaise("\(function): only view.stack and view.row hold other components")
        }
        let node = ViewNode(kind: kind, id: id)
        node.templateFile = templateFile
        for child in children {
            guard child.parent == nil else { throw LuaRaise("\(function): a component can be placed only once") }
            node.append(child)
        }
        // Two components with one id: self.view.<id> would find only the first, silently.
        if !children.isEmpty {
            var seen: Set<String> = []
            for id in node.ids where !seen.insert(id).inserted {
                throw LuaRaise("\(function): two components have id '\(id)'; an id names one component of a view (self.view.\(id)), so give each its own")
            }
        }
        for key in kind.firstFields + fields.keys.sorted() where fields[key] != nil {
            do { try node.set(key, fields[key] ?? .null) } catch { throw LuaRaise(error.description) }
            if kind.firstFields.contains(key) { fields[key] = nil }
        }
        // A source set later (`t:update { source = ... }`) is not the file's.
        node.templateFile = nil
        warnOfAbsentVariables(node, stack)
        viewType.push(node, onto: stack)
        return .one
    }

    /// A template's variables that its data lacks, with no field of a close name (which is an
    /// error), render as nothing: right for an optional field, silent for a forgotten one. Each
    /// is a warning at the script's line, once per component; a template without data yet (set
    /// later by an update) is not read.
    private func warnOfAbsentVariables(_ node: ViewNode, _ stack: LuaStack) {
        guard node.kind is TemplateKind.Type, let source = node.fields["source"]?.stringValue, let data = node.fields["data"] else { return }
        for finding in TemplateVariables.check(source, data: data) where finding.closest == nil {
            guard node.warnedTemplateVariables.insert(finding.tag).inserted else { continue }
            warnAtCaller("view.template: " + finding.warning, stack)
        }
    }

    /// A template file next to the script (or a path relative to the current folder).
    private func readTemplate(_ file: String) throws -> String {
        let candidates = file.hasPrefix("/") ? [file] : [scriptFolder.map { $0 + "/" + file }, file].compactMap { $0 }
        for path in candidates {
            if let bytes = try? ScriptSource.file(path).read() { return String(decoding: bytes, as: UTF8.self) }
        }
        throw LuaRaise("view.template: cannot open template file '\(file)' (looked in \(candidates.joined(separator: ", ")))")
    }

    private func viewValue(at index: Int32, in stack: LuaStack, function: String) throws -> Value {
        do { return try binding.value(at: index, in: stack) } catch {
            throw LuaRaise("\(function): cannot show \(error.description)")
        }
    }
}
