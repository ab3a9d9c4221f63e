import Model

extension Host {
    /// Writes `message` to the log at `level` (when the run's `--log-level` lets it through),
    /// named after the plugin: `warn: plugin 'system': ...`. The message is the plugin's text
    /// (its stderr, its `log` notifications, what its programs wrote): control characters are
    /// written as escapes (``displayable(_:)``), as in its manifest, so it cannot retitle the
    /// terminal, erase or overwrite a line (a pending grant question) or set the clipboard.
    func log(_ level: HostOptions.LogLevel, plugin name: String, _ message: String) {
        guard level >= options.logLevel else { return }
        writeError("\(console.styled("\(level.name):", Console.Style(level))) plugin '\(name)': \(displayable(message))")
    }
}
