extension Host {
    /// Writes `message` to the log at `level` (when the run's `--log-level` lets it through),
    /// named after the plugin: `warn: plugin 'system': ...`.
    func log(_ level: HostOptions.LogLevel, plugin name: String, _ message: String) {
        guard level >= options.logLevel else { return }
        writeError("\(console.styled("\(level.name):", Console.Style(level))) plugin '\(name)': \(message)")
    }
}
