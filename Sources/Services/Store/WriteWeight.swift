import Model

/// How much a write weighs when choosing whether it may run on the host's loop: its rows, or
/// "too much" when its values are large. A write on the loop encodes, checks and copies its
/// values there, which costs in proportion to their bytes (a 100 MiB record stopped every timer
/// for 30 s, harden4 H12); so rows alone do not decide.
///
/// The weighing itself is bounded: it looks at no more than ``nodeLimit`` values and stops
/// as soon as the strings it saw pass ``byteLimit`` (a string's UTF-8 length is known without
/// reading it).
enum WriteWeight {
    /// At most this many bytes of strings for a write on the loop (encoding them costs well
    /// under a millisecond).
    static let byteLimit = 64 * 1024
    /// At most this many values looked at: more and the write is heavy anyway.
    static let nodeLimit = 4_096

    /// `rows` when `value` is light, else `Int.max` (never on the loop).
    static func of(_ value: Value, rows: Int) -> Int {
        var bytes = 0, nodes = 0
        return isLight(value, bytes: &bytes, nodes: &nodes) ? rows : Int.max
    }

    private static func isLight(_ value: Value, bytes: inout Int, nodes: inout Int) -> Bool {
        nodes += 1
        guard nodes <= nodeLimit else { return false }
        switch value {
        case .string(let text): bytes += text.utf8.count
        case .bytes(let data): bytes += data.count
        case .array(let items):
            for item in items where !isLight(item, bytes: &bytes, nodes: &nodes) { return false }
        case .object(let fields):
            for (key, item) in fields {
                bytes += key.utf8.count
                guard isLight(item, bytes: &bytes, nodes: &nodes) else { return false }
            }
        case .model(let model):
            for (_, item) in model.fields where !isLight(item, bytes: &bytes, nodes: &nodes) { return false }
        case .packed(let models):
            guard models.bytes.count <= byteLimit else { return false }
            return isLight(.array(models.values), bytes: &bytes, nodes: &nodes)
        case .null, .bool, .integer, .number, .handle: break
        }
        return bytes <= byteLimit
    }
}
