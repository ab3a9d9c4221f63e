/// Outside text quoted in a message: a value a script, a file or a server sent can be megabytes
/// long, and an error message echoes only its start.
///
/// ```swift
/// throw ServiceError(.invalidArgument, "unknown key '\(clipped(key))'")
/// ```
///
/// - Parameter limit: the characters kept; longer text keeps that many and says how much was cut.
public func clipped(_ text: some StringProtocol, limit: Int = 80) -> String {
    guard text.count > limit else { return String(text) }
    return "\(text.prefix(limit))… (\(text.utf8.count) bytes)"
}
