/// The parts of the Lua API written in Lua, embedded in the binary at build time: one table of
/// the modules, what each chunk takes and what it gives, in the order a host loads them.
///
/// | module | takes | gives |
/// |---|---|---|
/// | `inspect` | nothing | the `inspect` global |
/// | `json` | nothing | the `json` global |
/// | `models` | the `json` module | methods of data models by type name (`response:json()`) |
/// | `controllers` | the host's primitives (scopes, tasks, timers, reports) | `controller`, `app`'s navigation |
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

    /// Every embedded module, in load order.
    static let modules: [Module] = [inspect, json, models, controllers]

    /// The modules that define a global of their name and take nothing.
    static var globalModules: [Module] { modules.filter { if case .nothing = $0.input { true } else { false } } }
}
