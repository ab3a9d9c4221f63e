import Model
import Synchronization

/// The declarations an earlier run recorded for a plugin (``PluginDeclarationCache``), read when
/// something first needs them, not when the host starts.
///
/// Reading a record means listing the plugin's files for its stamp and decoding its JSON: a
/// start-up that never touches the plugin's services, documents them or completes them, as
/// `crescent -e ''` does, never pays for it. Read once; every later question gets that answer.
final class RecordedDeclarations: Sendable {
    private let cache: PluginDeclarationCache

    /// A state of our own rather than a double optional: whether the record was read, and what
    /// it held (nil when there was none, or it no longer holds).
    private enum State {
        case unread
        case read([ServiceDeclaration]?)
    }

    private let state = Mutex<State>(.unread)

    init(_ cache: PluginDeclarationCache) {
        self.cache = cache
    }

    /// The recorded declarations, nil when none hold for the plugin as it is.
    var declarations: [ServiceDeclaration]? {
        state.withLock { state in
            if case .read(let declarations) = state { return declarations }
            let declarations = cache.load()
            state = .read(declarations)
            return declarations
        }
    }
}
