/// What Tab asks the host to complete: the line and the cursor at the time of the key.
///
/// The host finds the word being completed in ``prefix`` (for Lua, the trailing
/// `name.field:method` chain), looks candidates up without running user code, and answers with
/// ``LineEditor/complete(_:with:replacing:)``, naming how many characters before the cursor the
/// candidates replace. The request is also the staleness check: an answer for a line that has
/// changed since is ignored.
///
/// ```swift
/// // the line is "print(services.loc", the cursor at its end
/// case .complete(let request):
///     // the host's completer reads request.prefix: the fragment is "loc", a field of `services`
///     let outcome = editor.complete(request, with: ["location"], replacing: 3)
///     // outcome == .inserted, the line is "print(services.location"
/// ```
public struct CompletionRequest: Hashable, Sendable {
    /// The whole text being edited.
    public let line: String
    /// The text before the cursor.
    public let prefix: String
    /// The cursor, in grapheme clusters from the start of ``line``.
    public let cursor: Int

    public init(line: String, prefix: String, cursor: Int) {
        self.line = line
        self.prefix = prefix
        self.cursor = cursor
    }
}

/// What answering a ``CompletionRequest`` did.
public enum CompletionOutcome: Hashable, Sendable {
    /// The buffer changed (the only candidate, or the candidates' longest common prefix, replaced
    /// the fragment): redraw.
    case inserted
    /// Several candidates and nothing more to insert: show them (``CompletionColumns`` lays them
    /// out), in the order given.
    case candidates([String])
    /// No candidate, or the fragment is already the only one.
    case unchanged
    /// The line changed since the request; nothing was done.
    case stale
}
