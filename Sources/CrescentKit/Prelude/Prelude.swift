/// The parts of the Lua API written in Lua, embedded in the binary at build time.
enum Prelude {
    /// Each module's chunk returns the value of the global it defines, in load order.
    static let modules: [(name: String, source: [UInt8])] = [
        ("inspect", PackageResources.inspect_lua),
        ("json", PackageResources.json_lua),
    ]

    /// Controllers, navigation, composition and commands; its chunk takes the host's primitives.
    static let controllersSource = PackageResources.controllers_lua

    /// Methods of data models by type name (`response:json()`); its chunk takes the `json` module.
    static let modelMethodsSource = PackageResources.models_lua

    /// The API of `crescent test` (describe/it, assert, spy, clock, fake, script); its chunk
    /// takes the test host's primitives and the run's options, and returns the runner.
    static let testingSource = PackageResources.testing_lua
}
