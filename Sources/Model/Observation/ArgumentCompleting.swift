/// A model object that can complete the text of a string argument of its methods, as a person
/// types it: the REPL's Tab inside `services.geocoder:search("Mün` offers `München`. It suggests;
/// it checks nothing (the method still checks what it is given).
public protocol ArgumentCompleting: ModelObject {
    /// Whole values for string argument `argument` (1 for the first) of `method` that continue
    /// `prefix`, best first, at most `limit`; empty when that argument has no completions.
    ///
    /// Called on the host's loop while a person waits for Tab: it must answer quickly.
    func completions(method: String, argument: Int, prefix: String, limit: Int) -> [String]
}
