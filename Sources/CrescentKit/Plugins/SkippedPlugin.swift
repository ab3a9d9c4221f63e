/// A plugin folder a run found but did not load (its manifest does not hold), kept so that a
/// script touching `services.NAME` learns why the service is missing instead of only that it is.
public struct SkippedPlugin: Sendable {
    /// The plugin's name as far as it is known: its folder's last component.
    public let name: String
    /// The folder as found, for `crescent plugin check FOLDER`.
    public let folder: String
    /// Why it was skipped (the manifest's problem, naming the file and field).
    public let reason: String

    /// `plugin 'x' was not loaded: REASON; see `crescent plugin check FOLDER``, for the error of a
    /// service that is missing because of it.
    public var explanation: String {
        let shown = PluginCatalog.terminalSafe(reason, keepingLines: true)
        let firstLine = shown.split(separator: "\n").first.map(String.init) ?? shown
        return "plugin '\(name)' was not loaded: \(firstLine); see `crescent plugin check \(PluginCatalog.terminalSafe(folder))`"
    }
}
