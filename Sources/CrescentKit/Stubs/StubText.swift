import Model

/// The typed forms of what the prelude defines (the globals of ``GlobalDocs``, controllers,
/// views, the test API), which have no Swift declaration to read types from. The names come
/// from the declarations (``GlobalDocs``, ``ViewNode/Kind``); a test checks both agree.
enum StubText {
    static let common: [String] = [
        "---A service error: `tostring(err)` reads `service.method: code: message`.",
        "---@class crescent.Error",
        "---@field code " + ServiceError.Code.all.map { "\"\($0.name)\"" }.joined(separator: "|"),
        "---@field message string",
        "---@field service string",
        "---@field method string",
        "",
        "---Options of `observe`: deliver the current value first, coalesce changes per turn, once, latest only.",
        "---@class crescent.ObserveOptions",
        "---@field initial? boolean",
        "---@field coalesce? boolean",
        "---@field once? boolean",
        "---@field latest? boolean",
        "",
        "---Options of `on`.",
        "---@class crescent.OnOptions",
        "---@field once? boolean",
        "---@field latest? boolean",
        "",
        "---What observe, on and a controller's subscriptions return.",
        "---@class crescent.Subscription",
        "---@field active boolean",
        "local Subscription = {}",
        "---Stops deliveries; idempotent.",
        "function Subscription:cancel() end",
        "",
        "---A service call in flight: cancel() makes its completion run once with err.code == \"cancelled\".",
        "---@class crescent.Request",
        "local Request = {}",
        "function Request:cancel() end",
        "",
        "---A coroutine task.",
        "---@class crescent.Task",
        "---@field done boolean",
        "---@field result any",
        "---@field error any",
        "local Task = {}",
        "function Task:cancel() end",
        "",
        "---A timer of timer.after, timer.every, timer.at or timer.cron.",
        "---@class crescent.Timer",
        "---@field active boolean",
        "---@field interval number",
        "---@field repeats boolean",
        "---@field firings integer",
        "---@field schedule string? `at 09:30 Europe/Paris`, `cron */5 * * * * UTC` for timer.at and timer.cron",
        "local Timer = {}",
        "function Timer:cancel() end",
        "",
        "---Any model object (a service, a collection): observe its properties, handle its events.",
        "---@class crescent.Object",
        "local Object = {}",
        "---@param key string",
        "---@param handler fun(new: any, old: any, change: table)|string",
        "---@param opts? crescent.ObserveOptions",
        "---@return crescent.Subscription",
        "function Object:observe(key, handler, opts) end",
        "---@param observer table",
        "function Object:addObserver(observer) end",
        "---@param observer table",
        "function Object:removeObserver(observer) end",
        "---Start the service for the calling owner (counted per owner).",
        "---@param options? table",
        "function Object:start(options) end",
        "---End the calling owner's share.",
        "function Object:stop() end",
        "",
    ]

    /// The typed declaration of `name` from ``GlobalDocs`` (a global, or a member of a global
    /// table such as `app.push`), after its doc comment.
    static func global(_ name: String) -> [String] {
        if name.hasPrefix("view."), name != "view.<component>" {
            return ["---@param spec table|string", "---@return crescent.View", "function \(name)(spec) end"]
        }
        return declarations[name] ?? ["---@type any", "\(name) = nil"]
    }

    private static let declarations: [String: [String]] = [
        "services": ["---@type crescent.Services", "services = services"],
        "observe": ["---@param obj crescent.Object", "---@param key string", "---@param handler fun(new: any, old: any, change: table)",
                    "---@param opts? crescent.ObserveOptions", "---@return crescent.Subscription", "function observe(obj, key, handler, opts) end"],
        "on": ["---@param name string", "---@param handler fun(payload: any, info: table)", "---@param opts? crescent.OnOptions",
               "---@return crescent.Subscription", "function on(name, handler, opts) end"],
        "post": ["---@param name string", "---@param payload? any", "function post(name, payload) end"],
        "subscriptions": ["---@return table[]", "function subscriptions() end"],
        "task": ["---@param fn async fun(...): any", "---@param ... any", "---@return crescent.Task", "function task(fn, ...) end"],
        "sleep": ["---@async", "---@param seconds number", "function sleep(seconds) end"],
        "timer": ["timer = {}"],
        "timer.after": ["---@param seconds number", "---@param fn fun(timer: crescent.Timer)", "---@return crescent.Timer",
                        "function timer.after(seconds, fn) end"],
        "timer.every": ["---@param seconds number", "---@param fn fun(timer: crescent.Timer)", "---@return crescent.Timer",
                        "function timer.every(seconds, fn) end"],
        "timer.at": ["---@param time string \"09:30\" or \"09:30:15\"", "---@param options { zone: string? }", "---@param fn fun(timer: crescent.Timer)",
                     "---@return crescent.Timer", "---@overload fun(time: string, fn: fun(timer: crescent.Timer)): crescent.Timer",
                     "function timer.at(time, options, fn) end"],
        "timer.cron": ["---@param expression string five fields: minute hour day-of-month month day-of-week", "---@param options { zone: string? }",
                       "---@param fn fun(timer: crescent.Timer)", "---@return crescent.Timer",
                       "---@overload fun(expression: string, fn: fun(timer: crescent.Timer)): crescent.Timer",
                       "function timer.cron(expression, options, fn) end"],
        "controller": ["---@param name string", "---@param base? crescent.Controller", "---@return crescent.Controller",
                       "function controller(name, base) end"],
        "view": ["view = {}"],
        "app": ["app = {}"],
        "app.push": ["---@param controller crescent.Controller|table", "---@param args? table", "---@return crescent.Controller",
                     "function app.push(controller, args) end"],
        "app.pop": ["function app.pop() end"],
        "app.replace": ["---@param controller crescent.Controller|table", "---@param args? table", "---@return crescent.Controller",
                        "function app.replace(controller, args) end"],
        "app.route": ["---@param pattern string", "---@param controller crescent.Controller", "function app.route(pattern, controller) end"],
        "app.open": ["---@param path string", "---@param args? table", "function app.open(path, args) end"],
        "app.send": ["---@param command string", "---@param ... string", "function app.send(command, ...) end"],
        "app.press": ["---@param key string", "---@param ... string", "function app.press(key, ...) end"],
        "app.commandLine": ["---@param text? string", "---@return boolean", "function app.commandLine(text) end"],
        "app.top": ["---@type crescent.Controller?", "app.top = nil"],
        "app.stack": ["---@type crescent.Controller[]", "app.stack = {}"],
        "app.args": ["---@type string[]", "app.args = {}"],
        "app.exit": ["---@param code? integer|boolean", "function app.exit(code) end"],
        "inspect": ["---@param value any", "---@param opts? { depth: integer?, length: integer?, string: integer?, indent: (integer|string)?, width: integer? }",
                    "---@return string", "function inspect(value, opts) end"],
        "inspect.defaults": ["---@type { depth: integer, length: integer, string: integer, indent: integer|string, width: integer }",
                             "inspect.defaults = {}"],
        "json": ["json = {}"],
        "json.encode": ["---@param value any", "---@param opts? { indent: (integer|string)?, sortKeys: boolean? }", "---@return string",
                        "function json.encode(value, opts) end"],
        "json.decode": ["---@param text string", "---@param opts? { maxDepth: integer? }", "---@return any", "function json.decode(text, opts) end"],
        "json.null": ["---@type lightuserdata", "json.null = nil"],
        "json.array": ["---@param t? table", "---@return table", "function json.array(t) end"],
        "json.object": ["---@param t? table", "---@return table", "function json.object(t) end"],
        "log": ["log = {}"],
        "log.debug": ["---@param ... any", "function log.debug(...) end"],
        "log.info": ["---@param ... any", "function log.info(...) end"],
        "log.warn": ["---@param ... any", "function log.warn(...) end"],
        "log.error": ["---@param ... any", "function log.error(...) end"],
        "help": ["---@param x? any", "function help(x) end"],
    ]

    static let controllers: [String] = [
        "---A controller: coordinates services and a view. Lifecycle, in order: init(args), loadView(),",
        "---viewDidLoad(), viewWillAppear(), viewDidAppear(), viewWillDisappear(), viewDidDisappear(), dealloc().",
        "---@class crescent.Controller",
        "---@field view table The view loadView returned; components by id (`self.view.title`).",
        "---@field children crescent.Controller[]",
        "---@field parent crescent.Controller?",
        "local Controller = {}",
        "---@param args table",
        "function Controller:init(args) end",
        "---@return table view",
        "function Controller:loadView() end",
        "function Controller:viewDidLoad() end",
        "function Controller:viewWillAppear() end",
        "function Controller:viewDidAppear() end",
        "function Controller:viewWillDisappear() end",
        "function Controller:viewDidDisappear() end",
        "function Controller:dealloc() end",
        "---@param obj crescent.Object",
        "---@param key string",
        "---@param handler string|fun(self: crescent.Controller, new: any, old: any, change: table)",
        "---@param opts? crescent.ObserveOptions",
        "---@return crescent.Subscription",
        "function Controller:observe(obj, key, handler, opts) end",
        "---@param name string",
        "---@param handler string|fun(payload: any, info: table)",
        "---@param opts? crescent.OnOptions",
        "---@return crescent.Subscription",
        "function Controller:on(name, handler, opts) end",
        "---@param seconds number",
        "---@param fn fun(timer: crescent.Timer)",
        "---@return crescent.Timer",
        "function Controller:after(seconds, fn) end",
        "---@param seconds number",
        "---@param fn fun(timer: crescent.Timer)",
        "---@return crescent.Timer",
        "function Controller:every(seconds, fn) end",
        "---@param fn async fun(...): any",
        "---@return crescent.Task",
        "function Controller:task(fn, ...) end",
        "---@param service crescent.Object",
        "---@param options? table",
        "function Controller:start(service, options) end",
        "---@param name string",
        "---@param method string",
        "---@param help? string",
        "---@param options? { args: string[]?, complete: (fun(argIndex: integer, prefix: string): string[])? }",
        "function Controller:command(name, method, help, options) end",
        "---@param key string",
        "---@param method string",
        "---@param help? string",
        "function Controller:key(key, method, help) end",
        "---@param child crescent.Controller|table",
        "---@param slot string",
        "---@return crescent.Controller",
        "function Controller:addChild(child, slot) end",
        "---@param child crescent.Controller",
        "function Controller:removeChild(child) end",
        "",
    ]

    static let viewClass: [String] = [
        "---A view component: update(data) or set its fields; rendered once at the end of the turn.",
        "---@class crescent.View",
        "---@field id string?",
        "---@field kind string",
        "local View = {}",
        "---@param data any",
        "function View:update(data) end",
        "---@param changes table",
        "---@param items? table",
        "function View:apply(changes, items) end",
        "---@param id string",
        "---@return crescent.View?",
        "function View:find(id) end",
        "",
    ]

    /// The globals `crescent test` adds.
    static let testGlobals = ["describe", "context", "insulate", "expose", "it", "test", "spec", "pending", "finally",
                              "before_each", "after_each", "setup", "teardown",
                              "lazy_setup", "lazy_teardown", "strict_setup", "strict_teardown",
                              "spy", "stub", "mock", "match", "clock", "fake", "script", "send", "press", "view_text", "view_json",
                              "screen_text"]

    static let testing: String = """
        ---@meta crescent-testing
        -- Generated by `crescent stubs`: the API of `crescent test` (busted's names); do not edit.

        ---@param name string
        ---@param fn fun()
        function describe(name, fn) end
        context, insulate, expose = describe, describe, describe
        ---Declares a test; it runs in a fresh host on a virtual clock, as a task (it may await).
        ---@param name string
        ---@param fn? async fun()
        function it(name, fn) end
        test, spec = it, it
        ---Declares a pending test; inside a test, ends it as pending.
        ---@param name? string
        function pending(name) end
        ---Inside a test: fn runs once the test's body ends, whether it passed or not.
        ---@param fn fun()
        function finally(fn) end
        ---@param fn fun()
        function before_each(fn) end
        ---@param fn fun()
        function after_each(fn) end
        ---@param fn fun()
        function setup(fn) end
        ---@param fn fun()
        function teardown(fn) end
        lazy_setup, lazy_teardown, strict_setup, strict_teardown = setup, teardown, setup, teardown

        ---@class crescent.test.Assert
        ---@overload fun(v: any, message?: string): any
        ---@field are crescent.test.Assert
        ---@field is crescent.test.Assert
        ---@field is_not crescent.test.Assert
        local Assert = {}
        ---@param expected any
        ---@param actual any
        ---@param message? string
        function Assert.equals(expected, actual, message) end
        ---@param expected any
        ---@param actual any
        ---@param message? string
        function Assert.same(expected, actual, message) end
        ---@param v any
        ---@param message? string
        function Assert.truthy(v, message) end
        ---@param v any
        ---@param message? string
        function Assert.falsy(v, message) end
        ---@param v any
        ---@param message? string
        function Assert.is_nil(v, message) end
        ---@param v any
        ---@param message? string
        function Assert.is_not_nil(v, message) end
        ---@param v any
        function Assert.is_true(v) end
        ---@param v any
        function Assert.is_false(v) end
        ---@param fn fun()
        ---@param expected? any
        function Assert.error(fn, expected) end
        Assert.has_error = Assert.error
        ---@param pattern string
        ---@param actual string
        function Assert.matches(pattern, actual) end
        ---Compares view_text() with the golden file (`crescent test --update` rewrites it).
        ---@param golden string
        function Assert.view(golden) end
        ---@param s crescent.test.Spy
        ---@return { was: { called: fun(n?: integer), called_with: fun(...) }, was_not: { called: fun(), called_with: fun(...) } }
        function Assert.spy(s) end
        ---@type crescent.test.Assert
        assert = Assert

        ---@class crescent.test.Spy
        ---@field calls table[]
        ---@overload fun(...): any
        local Spy = {}
        function Spy:revert() end
        function Spy:clear() end
        spy = {}
        ---@param fn? function
        ---@return crescent.test.Spy
        function spy.new(fn) end
        ---@param t table
        ---@param name string
        ---@return crescent.test.Spy
        function spy.on(t, name) end
        ---luassert's stub: t[name] replaced by a spy that answers the given values.
        ---@overload fun(t?: table, name?: string, ...: any): crescent.test.Spy
        stub = {}
        ---luassert's mock: every function of t (deeply) replaced by a spy, or a stub when `stubbed`.
        ---@overload fun(t: table, stubbed?: boolean): table
        mock = {}
        ---luassert's argument matchers: match._, match.is_string(), match.same(t), ...
        ---@type table<string, any>
        match = {}

        clock = {}
        ---Runs everything due in the next `seconds` of virtual time, in order.
        ---@param seconds number
        function clock.advance(seconds) end
        ---Runs jobs until nothing is pending.
        ---@param limit? integer
        function clock.run(limit) end
        ---Virtual seconds since the test began.
        ---@return number
        function clock.now() end

        fake = {}
        ---@class crescent.test.FakeLocation
        local FakeLocation = {}
        ---@param code string
        ---@param message? string
        function FakeLocation:fail(code, message) end
        ---@param spec { fixes: table[]?, track: string?, interval: number? }
        ---@return crescent.test.FakeLocation
        function fake.location(spec) end
        ---@param routes table<string, table|string|fun(request: { method: string, url: string, headers: table, body: string? }): table>
        function fake.http(routes) end
        ---@class crescent.test.FakeService
        ---@field calls { method: string, args: table }[]
        local FakeService = {}
        ---@param key string
        ---@param value any
        function FakeService:set(key, value) end
        ---@param event string
        ---@param payload? any
        function FakeService:emit(event, payload) end
        ---@class crescent.test.FakeProcess
        ---@field calls { command: string, argv: string[], cwd: string?, env: table?, stdin: string?, shell: boolean? }[]
        ---Answers the programs process:run and process:spawn would start: by command line ("git pull"), then by program ("git"), then "*".
        ---@param answers table<string, string|{ status: integer?, signal: string?, stdout: string?, stderr: string?, timedOut: boolean?, error: string|table? }|fun(request: { command: string, argv: string[], cwd: string?, env: table?, stdin: string?, shell: boolean? }): table>
        ---@return crescent.test.FakeProcess
        function fake.process(answers) end
        ---@param name string
        ---@param spec { properties: table?, methods: table<string, any>?, events: string[]?, summary: string? }
        ---@return crescent.test.FakeService
        function fake.service(name, spec) end

        ---Runs a script in the spec file's host, with the test's fresh services.
        ---@param path string
        ---@param ... string
        function script(path, ...) end
        ---Sends a command to the top controller.
        ---@param command string
        ---@param ... string
        function send(command, ...) end
        ---Presses keys on the top controller as a terminal would (`press("down", "enter")`).
        ---@param ... string
        function press(...) end
        ---The top controller's view as `--ui plain` renders it.
        ---@return string?
        function view_text() end
        ---The top controller's view as `--ui json` renders it, decoded.
        ---@return table?
        function view_json() end
        ---The live screen at `width` x `height` (default: the run's columns x 24): the view and the status line.
        ---@param width? integer
        ---@param height? integer
        ---@return string
        function screen_text(width, height) end

        """
}
