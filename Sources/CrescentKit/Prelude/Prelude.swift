import LuaBridge
import Synchronization

/// The parts of the Lua API written in Lua, embedded in the binary at build time: one table of
/// the modules, what each chunk takes and what it gives, in the order a host loads them.
///
/// | module | takes | gives |
/// |---|---|---|
/// | `firstuse` | a function that pushes a module's chunk | the module's stand-in global, loading it on first use (`inspect`) |
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
            /// A function that pushes another module's chunk (``Prelude/firstUse``).
            case chunkLoader
        }

        let name: String
        let source: [UInt8]
        /// `source` compiled under ``chunkName`` by tools/compile-prelude.lua (`make prelude`):
        /// what a host loads, since compiling the modules took a sixth of `crescent -e ''`.
        /// `PreludeTests` fails when it is not the dump of `source` by the Lua the binary links.
        let compiled: [UInt8]
        let input: Input
        /// The global stands in as an empty table until a script first touches it (calls it,
        /// reads, writes or iterates it), and only then is the module loaded (``Prelude/firstUse``):
        /// `inspect` is a third of the prelude, and most runs never print a table with it.
        var loadsOnFirstUse = false

        /// The chunk name errors and tracebacks show: `[crescent json]`.
        var chunkName: String { "=[crescent \(name)]" }
    }

    static let inspect = Module(name: "inspect", source: PackageResources.inspect_lua, compiled: PackageResources.inspect_luac,
                                input: .nothing, loadsOnFirstUse: true)
    static let json = Module(name: "json", source: PackageResources.json_lua, compiled: PackageResources.json_luac, input: .nothing)
    static let models = Module(name: "models", source: PackageResources.models_lua, compiled: PackageResources.models_luac, input: .json)
    static let controllers = Module(name: "controllers", source: PackageResources.controllers_lua,
                                    compiled: PackageResources.controllers_luac, input: .hostPrimitives)

    /// The assertions, spies and view checks of `crescent test`, loaded only by a test's host;
    /// its chunk takes the test host's primitives and the run's options.
    static let assertions = Module(name: "assertions", source: PackageResources.assertions_lua,
                                   compiled: PackageResources.assertions_luac, input: .hostPrimitives)
    /// The rest of `crescent test`'s API (describe/it, clock, fake, script), loaded after
    /// `assertions`, whose result it takes too; its chunk returns the runner.
    static let testing = Module(name: "testing", source: PackageResources.testing_lua,
                                compiled: PackageResources.testing_luac, input: .hostPrimitives)

    /// Every embedded module a host loads, in load order.
    static let modules: [Module] = [inspect, json, models, controllers]

    /// The stand-in global of a module that loads on first use (``Module/loadsOnFirstUse``); its
    /// chunk takes a function that pushes the module's chunk.
    static let firstUse = Module(name: "firstuse", source: PackageResources.firstuse_lua,
                                 compiled: PackageResources.firstuse_luac, input: .chunkLoader)

    /// Every embedded module, the test host's too.
    static let allModules: [Module] = modules + [assertions, testing, firstUse]

    /// The modules that define a global of their name and take nothing.
    static var globalModules: [Module] { modules.filter { if case .nothing = $0.input { true } else { false } } }
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
    func load(into vm: LuaVM) throws(LuaError) {
        do {
            try vm.load(compiled, name: chunkName, mode: "b")
            return
        } catch {
            // Refused by this liblua's header check: compiled from the source below.
        }
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

