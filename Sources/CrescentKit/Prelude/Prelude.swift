import LuaBridge
import Synchronization

/// The parts of the Lua API written in Lua, embedded in the binary at build time: one table of
/// the modules, what each chunk takes and what it gives. A host loads `change` and `marks` with
/// its binding's tables, then `time` and the stand-ins of `inspect` and `json`, then `models`,
/// `services` and the stand-ins of `controllers` (`controllers_firstuse`, which loads it and its
/// parts when a run first uses them); the others when their caller first needs them (`plugin` in a
/// Lua plugin's host, `output` in the REPL's, the test modules in a test's).
///
/// | module | takes | gives |
/// |---|---|---|
/// | `firstuse` | a function that pushes a module's chunk and its inputs | the module's stand-in global, loading it on first use (`inspect`, `json`) |
/// | `inspect` | the host's `resembles` (as every module `firstuse` loads, last) | the `inspect` global |
/// | `marks` | nothing | `json.null`, the shape metatables of `json.array` and `json.object`, and `resolve` (`__tojson`) |
/// | `json` | what `marks` gives, the Swift codec, `resembles` | the `json` global |
/// | `models` | the `json` global (its stand-in) | methods of data models by type name (`response:json()`) |
/// | `controllers_firstuse` | the texts of `controllers` and its parts, the host's primitives, the hooks' table, `app` | the stand-ins of `controller`, `help` and `app`'s fields, which load `controllers` on first use |
/// | `controllers` | the host's primitives (scopes, tasks, timers, reports), with its parts' chunks | `controller`, the lifecycle; its parts' `app` functions and `Controller` methods |
/// | `controllers_mistakes`, `_navigation`, `_commands`, `_keys`, `_helpers` | the same primitives and the internals the parts share | the parts of `controllers`, in that order (``controllerParts``) |
/// | `assertions` | a test host's primitives and options | `assert` (luassert's engine and chains), `say` (`crescent test` only) |
/// | `checks` | what `assertions` gives | the built-in assertions and modifiers, registered with it (`crescent test` only) |
/// | `doubles` | what `assertions` gives | `spy`, `stub`, `mock`, `match` (`crescent test` only) |
/// | `coverage` | the files a `--coverage` run ran, with their hits | the reports: luacov's text, the summary table, LCOV |
/// | `fakes` | a test host's primitives, what `assertions` gives | `fake`; the host's calls into the fakes (`crescent test` only) |
/// | `environments` | nothing | busted's per-block environments: the spec files' `_ENV` and its contexts (`crescent test` only) |
/// | `testing` | the same as `fakes`, and what `doubles`, `fakes` and `environments` give | the blocks and tests (describe/it, hooks), the runner and the state its parts share (`crescent test` only) |
/// | `testing_choice`, `_walk`, `_run` | what `testing` takes, and what it gives | the parts of the runner, in that order (``testingParts``): which tests a run takes, the walk (`runner.next`), running a test and its hooks (`runner.run`) |
/// | `testing_app` | a test host's primitives and options, what `assertions` gives | what a spec drives and reads of the app: `clock`, `script`, `send`, `press`, the views, `assert.view` (`crescent test` only) |
/// | `change` | nothing | the metamethods of property change tables (`pairs`, `tostring`) |
/// | `services` | the host's `start` and `error` | the `__index` behind `services`, starting a service on first read |
/// | `time` | the clock's `now` | `os.time()` and `os.date()` on the run's clock |
/// | `latest` | the host's `task` | the wrapper of a `{ latest = true }` handler |
/// | `output` | the console's `emit` | `io.write` through the console (the REPL) |
/// | `plugin` | a Lua plugin's primitives and error codes | `service`, `service_error`; the plugin's `invoke` and `classify` |
///
/// The last six are the small pieces of the bridge written in Lua: compiled with the rest, since
/// compiling them from text took a fifteenth of `crescent -e ''`.
enum Prelude {
    /// One embedded module.
    struct Module: Sendable {
        /// What the chunk receives as its arguments.
        enum Input: Sendable {
            /// Nothing: the chunk returns the value of the global named after the module.
            case nothing
            /// The `json` global, still its stand-in (``Prelude/globalModules``).
            case json
            /// `json.null`, the shape metatables and `resolve`, from ``Prelude/marks`` (kept by `BindingTables`).
            case jsonMarks
            /// A table of the host's primitives, built by the host.
            case hostPrimitives
            /// A function that pushes another module's chunk (``Prelude/firstUse``).
            case chunkLoader
            /// The values its one caller passes, named on the chunk's first line (`local now = ...`).
            case callerValues
        }

        let name: String
        let source: [UInt8]
        /// `source` compiled under ``chunkName`` by the build (the PreludeCompiler plugin runs
        /// tools/compile-prelude.lua): what a host loads, since compiling the modules took a sixth
        /// of `crescent -e ''`.
        let compiled: [UInt8]
        let input: Input

        /// The chunk name errors and tracebacks show: `[crescent json]`.
        var chunkName: String { "=[crescent \(name)]" }
    }

    static let inspect = Module(name: "inspect", source: PackageResources.inspect_lua, compiled: Bytecode.inspect,
                                input: .nothing)
    static let json = Module(name: "json", source: PackageResources.json_lua, compiled: Bytecode.json, input: .jsonMarks)
    static let marks = Module(name: "marks", source: PackageResources.marks_lua, compiled: Bytecode.marks, input: .nothing)
    static let models = Module(name: "models", source: PackageResources.models_lua, compiled: Bytecode.models, input: .json)
    static let controllers = Module(name: "controllers", source: PackageResources.controllers_lua,
                                    compiled: Bytecode.controllers, input: .hostPrimitives)
    /// The stand-ins of `controller`, `help` and `app` until a run first uses them, which then
    /// load `controllers` and its parts (``Host/installControllers()``).
    static let controllersFirstUse = Module(name: "controllers_firstuse", source: PackageResources.controllers_firstuse_lua,
                                            compiled: Bytecode.controllers_firstuse, input: .callerValues)
    /// The parts of `controllers`, by the name its chunk loads them under: each a concern of its
    /// own (the wording of mistakes, navigation, commands, keys, what a controller owns and
    /// composition), sharing the controllers' internals through a table the first chunk passes.
    static let controllerParts: [(part: String, module: Module)] = [
        ("mistakes", part(of: "controllers", "mistakes", PackageResources.controllers_mistakes_lua, Bytecode.controllers_mistakes)),
        ("navigation", part(of: "controllers", "navigation", PackageResources.controllers_navigation_lua, Bytecode.controllers_navigation)),
        ("commands", part(of: "controllers", "commands", PackageResources.controllers_commands_lua, Bytecode.controllers_commands)),
        ("keys", part(of: "controllers", "keys", PackageResources.controllers_keys_lua, Bytecode.controllers_keys)),
        ("helpers", part(of: "controllers", "helpers", PackageResources.controllers_helpers_lua, Bytecode.controllers_helpers)),
    ]

    /// A part of a module split by concern, named after the module (`controllers_keys`,
    /// `testing_walk`): its caller passes it the module's internals.
    private static func part(of module: String, _ part: String, _ source: [UInt8], _ compiled: [UInt8]) -> Module {
        Module(name: module + "_" + part, source: source, compiled: compiled, input: .callerValues)
    }

    /// The assertions, spies and view checks of `crescent test`, loaded only by a spec file's host;
    /// its chunk takes the test host's primitives and the run's options.
    static let assertions = Module(name: "assertions", source: PackageResources.assertions_lua,
                                   compiled: Bytecode.assertions, input: .hostPrimitives)
    /// The built-in assertions and modifiers (luassert's names, crescent's messages), registered
    /// with the engine `assertions` returns.
    static let checks = Module(name: "checks", source: PackageResources.checks_lua,
                               compiled: Bytecode.checks, input: .callerValues)
    /// luassert's test doubles (`spy`, `stub`, `mock`, `match`), loaded after `assertions`, whose
    /// engine it takes.
    static let doubles = Module(name: "doubles", source: PackageResources.doubles_lua,
                                compiled: Bytecode.doubles, input: .callerValues)
    /// The fakes of `crescent test` (`fake.http`, `fake.location`, `fake.service`) and the
    /// host's calls into them, loaded before `testing`.
    static let fakes = Module(name: "fakes", source: PackageResources.fakes_lua,
                              compiled: Bytecode.fakes, input: .hostPrimitives)
    /// The reports of `crescent test --coverage` (luacov's line rule), run in a VM of their own.
    static let coverage = Module(name: "coverage", source: PackageResources.coverage_lua,
                                 compiled: Bytecode.coverage, input: .callerValues)
    /// busted's per-block environments: the table a spec file's chunk has as its globals, and
    /// the contexts (file, blocks, tests) its reads and writes go to; loaded before `testing`.
    static let environments = Module(name: "environments", source: PackageResources.environments_lua,
                                     compiled: Bytecode.environments, input: .callerValues)
    /// The blocks and tests of `crescent test` (describe/it, the hooks, pending, finally), loaded
    /// after `assertions`, whose result it takes too; its chunk returns the runner and the state
    /// the runner's parts share.
    static let testing = Module(name: "testing", source: PackageResources.testing_lua,
                                compiled: Bytecode.testing, input: .hostPrimitives)
    /// The parts of the runner `testing` returns, each a concern of its own (which tests a run
    /// takes, the walk of a spec file, running a test and its hooks), loaded after it in this
    /// order with its inputs, the runner and the shared state.
    static let testingParts: [Module] = [
        part(of: "testing", "choice", PackageResources.testing_choice_lua, Bytecode.testing_choice),
        part(of: "testing", "walk", PackageResources.testing_walk_lua, Bytecode.testing_walk),
        part(of: "testing", "run", PackageResources.testing_run_lua, Bytecode.testing_run),
    ]
    /// What a spec drives and reads of the app under test (the clock, scripts, commands and keys,
    /// the views and golden files), loaded after `testing`.
    static let testingApp = Module(name: "testing_app", source: PackageResources.testing_app_lua,
                                   compiled: Bytecode.testing_app, input: .hostPrimitives)

    /// The stand-in global of a module that loads on first use (``globalModules``); its
    /// chunk takes a function that pushes the module's chunk and that chunk's inputs.
    static let firstUse = Module(name: "firstuse", source: PackageResources.firstuse_lua,
                                 compiled: Bytecode.firstuse, input: .chunkLoader)

    /// The bridge's pieces written in Lua, each loaded by its one caller (see the table above).
    static let change = bridgeModule("change", PackageResources.change_lua, Bytecode.change, input: .nothing)
    static let services = bridgeModule("services", PackageResources.services_lua, Bytecode.services)
    static let time = bridgeModule("time", PackageResources.time_lua, Bytecode.time)
    static let latest = bridgeModule("latest", PackageResources.latest_lua, Bytecode.latest)
    static let output = bridgeModule("output", PackageResources.output_lua, Bytecode.output)
    static let plugin = bridgeModule("plugin", PackageResources.plugin_lua, Bytecode.plugin)

    private static func bridgeModule(_ name: String, _ source: [UInt8], _ compiled: [UInt8], input: Module.Input = .callerValues) -> Module {
        Module(name: name, source: source, compiled: compiled, input: input)
    }

    /// Every embedded module, the test host's and the bridge's too.
    static let allModules: [Module] = [inspect, marks, json, models, controllersFirstUse, controllers] + controllerParts.map(\.module)
        + [assertions, checks, doubles, fakes, coverage, environments, testing] + testingParts
        + [testingApp, firstUse, change, services, time, latest, output, plugin]

    /// The modules that define a global of their name. Each global stands in as an empty table
    /// until a script first touches it (calls it, reads, writes or iterates it), and only then is
    /// the module loaded (``firstUse``): the two are two thirds of the prelude, and most runs
    /// never print a table with inspect or encode or decode JSON. What values from services must
    /// carry before `json` loads (its null, its shapes) comes from ``marks``.
    static let globalModules: [Module] = [inspect, json]
}

extension Prelude.Module {
    /// Pushes the module's chunk as a function, loaded from its embedded bytecode, which takes a
    /// tenth of the time compiling the source takes.
    ///
    /// The bytecode is part of the binary, as trusted as its code (the only other binary chunks
    /// the VM ever loads are the ones below, which this process dumped itself). A liblua whose
    /// format differs (another version, other number sizes) refuses it in its header check; then
    /// the source is compiled the first time in the process and its dump kept for later hosts
    /// (`crescent test` makes a host, and loads every module, for each test).
    ///
    /// - Returns: true when the embedded bytecode loaded: this liblua takes the others' too.
    @discardableResult
    func load(into vm: LuaVM) throws(LuaError) -> Bool {
        do {
            try vm.load(compiled, name: chunkName, mode: "b")
            return true
        } catch {
            // Refused by this liblua's header check: compiled from the source below.
        }
        if let compiled = Prelude.compiled.withLock({ $0[name] }) {
            try vm.load(compiled, name: chunkName, mode: "b")
            return false
        }
        try vm.load(source, name: chunkName)
        if let bytes = vm.dumpFunction() { Prelude.compiled.withLock { $0[name] = bytes } }
        return false
    }
}

extension Prelude {
    /// Each module's compiled chunk, by name, once one host has compiled it.
    fileprivate static let compiled = Mutex<[String: [UInt8]]>([:])
}

