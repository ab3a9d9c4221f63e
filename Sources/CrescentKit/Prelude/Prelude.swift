import LuaBridge
import Synchronization

/// The parts of the Lua API written in Lua, embedded in the binary at build time: one table of
/// the modules, what each chunk takes and what it gives, in the order a host loads them.
///
/// | module | takes | gives |
/// |---|---|---|
/// | `inspect` | nothing | the `inspect` global |
/// | `json` | nothing | the `json` global |
/// | `models` | the `json` module | methods of data models by type name (`response:json()`) |
/// | `controllers` | the host's primitives (scopes, tasks, timers, reports) | `controller`, `app`'s navigation |
/// | `assertions` | a test host's primitives and options | `assert`, `spy`, `view_text`, `view_json` (`crescent test` only) |
/// | `testing` | the same, and what `assertions` gives | the test API's other globals, the runner (`crescent test` only) |
enum Prelude {
    /// One embedded module.
    struct Module: Sendable {
        /// What the chunk receives as its arguments.
        enum Input: Sendable {
            /// Nothing: the chunk returns the value of the global named after the module.
            case nothing
            /// The `json` module.
            case json
            /// A table of the host's primitives, built by the host.
            case hostPrimitives
        }

        let name: String
        let source: [UInt8]
        let input: Input

        /// The chunk name errors and tracebacks show: `[crescent json]`.
        var chunkName: String { "=[crescent \(name)]" }
    }

    static let inspect = Module(name: "inspect", source: PackageResources.inspect_lua, input: .nothing)
    static let json = Module(name: "json", source: PackageResources.json_lua, input: .nothing)
    static let models = Module(name: "models", source: PackageResources.models_lua, input: .json)
    static let controllers = Module(name: "controllers", source: PackageResources.controllers_lua, input: .hostPrimitives)

    /// The assertions, spies and view checks of `crescent test`, loaded only by a test's host;
    /// its chunk takes the test host's primitives and the run's options.
    static let assertions = Module(name: "assertions", source: PackageResources.assertions_lua, input: .hostPrimitives)
    /// The rest of `crescent test`'s API (describe/it, clock, fake, script), loaded after
    /// `assertions`, whose result it takes too; its chunk returns the runner.
    static let testing = Module(name: "testing", source: PackageResources.testing_lua, input: .hostPrimitives)

    /// Every embedded module a host loads, in load order.
    static let modules: [Module] = [inspect, json, models, controllers]

    /// The modules that define a global of their name and take nothing.
    static var globalModules: [Module] { modules.filter { if case .nothing = $0.input { true } else { false } } }
}

extension Prelude.Module {
    /// Pushes the module's chunk as a function: compiled from its source the first time in the
    /// process, then loaded from the compiled form kept then, which takes a tenth of the time
    /// (`crescent test` makes a host, and loads every module, for each test).
    func load(into vm: LuaVM) throws(LuaError) {
        if let compiled = Prelude.compiled.withLock({ $0[name] }) {
            try vm.load(compiled, name: chunkName, mode: "b")
            return
        }
        try vm.load(source, name: chunkName)
        if let bytes = vm.dumpFunction() { Prelude.compiled.withLock { $0[name] = bytes } }
    }
}

extension Prelude {
    /// Each module's compiled chunk, by name, once one host has compiled it.
    fileprivate static let compiled = Mutex<[String: [UInt8]]>([:])
}

