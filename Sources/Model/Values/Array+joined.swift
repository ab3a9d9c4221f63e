extension Array where Element == String {
    /// The strings with `separator` between them, as the standard library's
    /// `joined(separator:)` makes them, which this shadows for arrays of strings.
    ///
    /// The standard library's is generic over the collection, and its first call in a run makes
    /// the Swift runtime build the metadata of an associated type from its mangled name, checking
    /// its requirements by scanning every protocol conformance in the binary: about 0.4 M
    /// instructions, as much as an eighth of `crescent -e ''`, paid by the first view rendered
    /// or the first message joined. This one is concrete, and costs the appends alone.
    ///
    /// ```swift
    /// ["a", "b", "c"].joined(separator: ", ")   // "a, b, c"
    /// ```
    @inlinable
    public func joined(separator: String) -> String {
        guard let first else { return "" }
        var text = first
        var utf8Count = first.utf8.count
        for element in dropFirst() { utf8Count += separator.utf8.count + element.utf8.count }
        text.reserveCapacity(utf8Count)
        for element in dropFirst() {
            text += separator
            text += element
        }
        return text
    }
}
