/// Declarations made while the host runs: a plugin written in Lua or in another process states
/// its services only once it has started, so their interface is built from data rather than from
/// a Swift type.
extension MethodSpec {
    /// A method with a completion that answers through a ``Reply`` (how a run-time plugin's
    /// methods run: in another VM or another process).
    public init(name: String, arguments: [ArgumentSpec], result: String, summary: String,
                replying body: @escaping @Sendable (Object, Arguments, Reply) -> Void) {
        self.init(name: name, arguments: arguments, result: result, summary: summary, hasCompletion: true,
                  body: .replying(body))
    }
}
