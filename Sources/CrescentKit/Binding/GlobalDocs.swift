/// The reference of every global a script has and of each function inside the global tables
/// (`app.push`, `view.table`, `timer.every` …): what `help("name")`, `help(value)` and `help()`
/// show, and what editor stubs are made from. A test checks it against the globals a fresh host
/// really has, both ways, so nothing is left undocumented and nothing documented is missing.
enum GlobalDocs {
    /// One documented name.
    struct Entry: Sendable {
        /// `observe`, or a dotted member such as `app.push`.
        let name: String
        let signature: String
        let summary: String

        /// The global table it belongs to (`app` for `app.push`), nil for a global itself.
        var table: String? { name.firstIndex(of: ".").map { String(name[..<$0]) } }
        /// `signature` then `summary`, as `help` prints them.
        var text: String { "\(signature)\n    \(summary)" }
    }

    private static func entry(_ name: String, _ signature: String, _ summary: String) -> Entry {
        Entry(name: name, signature: signature, summary: summary)
    }

    /// A view component's entry, its fields read from its kind (the one list the constructor
    /// checks): written out here, they had drifted (`data`, `keys`, `empty`, which it refuses).
    private static func viewEntry(_ kind: any ViewKind.Type, _ summary: String) -> Entry {
        let fields = ["id"] + kind.fields + (kind.fileField != nil ? ["file"] : []) + (kind.holdsChildren ? ["child, ..."] : [])
        return entry("view." + kind.name, "view.\(kind.name) { \(fields.joined(separator: ", ")) }", summary)
    }

    static let entries: [Entry] = [
        entry("services", "services.<name>", "Read-only table of service objects by name; an unknown name raises, listing the services."),
        entry("observe", "observe(obj, key, handler[, { initial, coalesce, once, latest }])",
              "Observe property `key`; handler(new, old, change). Returns a Subscription. With latest = true each "
                + "delivery runs the handler as a task and cancels the task of the one before if it still waits."),
        entry("on", "on(name, handler[, { once, latest }])",
              "Handle named notifications; handler(payload, info). Returns a Subscription. latest as for observe."),
        entry("post", "post(name[, payload])", "Post a named notification; delivered on a later turn."),
        entry("subscriptions", "subscriptions()", "The live subscriptions: owner, target, site, deliveries, errors."),
        entry("task", "task(fn, ...)", "Run fn as a coroutine task; returns a Task (cancel(), done, result, error)."),
        entry("sleep", "sleep(seconds)", "Inside a task: wait without blocking the loop."),
        entry("timer", "timer.after(s, fn), timer.every(s, fn), timer.at(time, fn), timer.cron(expr, fn)", "Timers; each returns a handle with cancel() and active."),
        entry("timer.after", "timer.after(seconds, fn)", "Run fn once after `seconds`; returns a handle with cancel() and active."),
        entry("timer.every", "timer.every(seconds, fn)", "Run fn every `seconds` until cancelled; returns a handle with cancel() and active."),
        entry("timer.at", "timer.at(time[, { zone }], fn)", "Run fn every day at `time` (\"09:30\" or \"09:30:15\") in `zone` (an IANA name such as \"Europe/Paris\"; the local zone by default), following daylight saving; virtual time under crescent test."),
        entry("timer.cron", "timer.cron(expression[, { zone }], fn)", "Run fn at the times a five-field cron expression names (\"*/5 8-18 * * mon-fri\": minute hour day-of-month month day-of-week; ranges, steps, lists, names, @daily …) in `zone`, following daylight saving."),
        entry("controller", "controller(name[, base])",
              "Define a controller class (deriving from base): lifecycle init, loadView, viewDidLoad, viewWillAppear, "
                + "viewDidAppear, viewWillDisappear, viewDidDisappear, dealloc; self:observe/on/after/every/task/start/"
                + "command/addChild/removeChild own what they make."),
        entry("view", "view.<component> { id = ..., ... }",
              "Text view components: text, list, table, keyvalue, progress, stack, row, slot, template. "
                + "A component with an id is self.view.<id>; update(data) or setting a field re-renders it."),
        viewEntry(TextKind.self, "A line or paragraph of text."),
        viewEntry(ListKind.self, "A bulleted list of items; apply(change[, items]) follows a collection."),
        viewEntry(TableKind.self,
                  "A table; columns are keys or { key, title, align, width } (without columns, the first row's keys); "
                    + "set(row, key, value) and apply(change[, items])."),
        viewEntry(KeyValueKind.self, "Aligned key: value lines of pairs: a record, a data model or { { key, value }, ... }."),
        viewEntry(ProgressKind.self, "A progress bar."),
        viewEntry(StackKind.self, "Children one above the other."),
        viewEntry(RowKind.self, "Children side by side."),
        viewEntry(SlotKind.self, "Where a child controller's view goes (self:addChild(child, id))."),
        viewEntry(TemplateKind.self, "A Mustache template rendered with data (source, or file next to the script)."),
        entry("app", "app.push/pop/replace/route/open/send, app.top, app.stack, app.args, app.exit([code])",
              "Navigation, routing, commands, the script's arguments and exit."),
        entry("app.push", "app.push(ControllerOrInstance[, args])", "Push a controller onto the navigation stack; returns it."),
        entry("app.pop", "app.pop()", "Pop the top controller (it disappears and deallocs)."),
        entry("app.replace", "app.replace(ControllerOrInstance[, args])", "Replace the top controller; returns the new one."),
        entry("app.route", "app.route(pattern, Controller)", "Route a path pattern such as \"goods/:id\" to a controller class."),
        entry("app.open", "app.open(path[, args])", "Push the controller routed for path, with its parameters in args."),
        entry("app.send", "app.send(command, ...)", "Send a command to the top controller, as typed at the REPL (:command)."),
        entry("app.press", "app.press(key, ...)", "Press keys on the top controller, as on its terminal (\"down\", \"enter\", \"ctrl-r\")."),
        entry("app.commandLine", "app.commandLine([text])", "Open the terminal's : command line with text typed; false without a terminal."),
        entry("app.top", "app.top", "The top controller, or nil."),
        entry("app.stack", "app.stack", "The navigation stack, bottom first (a copy)."),
        entry("app.args", "app.args", "The script's arguments (as arg[1...])."),
        entry("app.exit", "app.exit([code])", "Tear down and exit at once with code (default 0; true is 0, false is 1)."),
        entry("inspect", "inspect(v[, { depth, length, string, indent, width }])", "Readable, cycle-safe rendering of any value."),
        entry("inspect.defaults", "inspect.defaults", "The default options of inspect (depth 4, length 100, string 10000, indent 2, width 72); may be changed."),
        entry("json", "json.encode(v[, opts]), json.decode(s[, opts])", "JSON; json.null, json.array(t), json.object(t)."),
        entry("json.encode", "json.encode(v[, { indent, sortKeys }])", "The JSON text of v; floats keep a fraction, keys are sorted."),
        entry("json.decode", "json.decode(s[, { maxDepth }])", "The value of JSON text s; null is json.null, arrays and objects keep their shape."),
        entry("json.null", "json.null", "The JSON null sentinel (keeps keys and array positions)."),
        entry("json.array", "json.array([t])", "Mark t (or a new table) to encode as a JSON array; returns it."),
        entry("json.object", "json.object([t])", "Mark t (or a new table) to encode as a JSON object; returns it."),
        entry("log", "log.debug/info/warn/error(...)", "Leveled logs to stderr (--log-level)."),
        entry("log.debug", "log.debug(...)", "Log at debug level (shown with --log-level debug)."),
        entry("log.info", "log.info(...)", "Log at info level."),
        entry("log.warn", "log.warn(...)", "Log at warn level."),
        entry("log.error", "log.error(...)", "Log at error level."),
        entry("help", "help([x])", "Documentation of a service, method, controller or global; help() for the overview."),
    ]

    /// The entry documenting `name` (`observe`, `app.push`).
    static func entry(named name: String) -> Entry? { entries.first { $0.name == name } }

    /// The members of global table `name`, in the order they are documented.
    static func members(of name: String) -> [Entry] { entries.filter { $0.table == name } }
}
