import Model

/// The `[plugins]` section of `crescent.toml`: which plugins stay off and the limits every plugin
/// runs under.
///
/// ```toml
/// [plugins]
/// disabled = ["system"]
/// memory_limit = 256      # MiB, per Lua plugin VM
/// call_timeout = 10       # seconds a plugin method may take
/// allow_unsandboxed = []  # process plugins that may run where the kernel cannot confine them
/// ```
struct PluginsSection: Sendable {
    var disabled: [String] = []
    var memoryLimitMiB = 256
    var callTimeout = 10.0
    /// Process plugins that may run unconfined on a kernel without Landlock.
    var allowUnsandboxed: [String] = []
    /// Settings of the wrong type (`[plugins] call_timeout must be ...`), each naming the type
    /// it must have: the host does not start with one.
    var problems: [String] = []

    init(_ section: Value?) {
        let section = section ?? .object([:])
        let disabled = section["disabled"]
        if !disabled.isNull {
            if let names = disabled.arrayValue?.compactMap(\.stringValue), names.count == disabled.arrayValue?.count {
                self.disabled = names
            } else {
                problems.append("[plugins] disabled must be an array of plugin names, got \(disabled.settingText)")
            }
        }
        let unsandboxed = section["allow_unsandboxed"]
        if !unsandboxed.isNull {
            if let names = unsandboxed.arrayValue?.compactMap(\.stringValue), names.count == unsandboxed.arrayValue?.count {
                allowUnsandboxed = names
            } else {
                problems.append("[plugins] allow_unsandboxed must be an array of plugin names, got \(unsandboxed.settingText)")
            }
        }
        let memory = section["memory_limit"]
        if !memory.isNull {
            if let mib = memory.integerValue, mib >= 0, mib <= 1 << 20 {
                memoryLimitMiB = Int(mib)
            } else {
                problems.append("[plugins] memory_limit must be an integer number of MiB in [0, \(1 << 20)] (0 for none), got \(memory.settingText)")
            }
        }
        let timeout = section["call_timeout"]
        if !timeout.isNull {
            if let seconds = timeout.doubleValue, seconds > 0, seconds.isFinite {
                callTimeout = seconds
            } else {
                problems.append("[plugins] call_timeout must be a number of seconds above 0, got \(timeout.settingText)")
            }
        }
    }
}
