/// The declared name a misspelled one most likely meant, and the `(kind: a, b; did you mean 'x'?)`
/// tail of every error about a name that is not declared (a property, method, event, view
/// component or lifecycle step), so they all read alike and suggest alike.
///
/// A name is close to a declared one when they differ by a few edits (insertions, deletions,
/// substitutions and swaps of neighbours, ignoring case), at most about a quarter of the longer
/// name; failing that, when one starts with the other (`didUpdate` for `didUpdateLocations`);
/// failing that, when it is the only name it abbreviates (`cnt` for `count`).
public enum NameSuggestion {
    /// The name among `candidates` closest to `name`, or nil when none is close enough to suggest.
    /// With `prefixes` false, only a few edits count: a controller's `initRows` is its own method,
    /// not a misspelled `init`.
    public static func closest(to name: String, among candidates: some Sequence<String>, prefixes: Bool = true) -> String? {
        let typed = Array(name.lowercased().unicodeScalars)
        guard !typed.isEmpty else { return nil }
        let candidates = Array(candidates)  // read twice when no near name is found
        var best: (name: String, distance: Int, startsAlike: Bool)?
        var prefixed: String?
        for candidate in candidates where candidate != name {
            let known = Array(candidate.lowercased().unicodeScalars)
            let limit = max(1, (max(typed.count, known.count) + 2) / 4)
            let distance = editDistance(typed, known, limit: limit)
            let (short, long) = typed.count <= known.count ? (typed, known) : (known, typed)
            // On a tie, the name that starts with what was typed wins: `writ` meant `write`,
            // not `wait`, which is as few edits away but does something else.
            let startsAlike = long.starts(with: short)
            if distance <= limit, distance < best?.distance ?? Int.max || distance == best?.distance && startsAlike && best?.startsAlike == false {
                best = (candidate, distance, startsAlike)
            }
            if prefixes, short.count >= 3, startsAlike, candidate.count < prefixed?.count ?? Int.max {
                prefixed = candidate
            }
        }
        // A swap or a changed letter that makes another word (`alt` → `lat`) loses to the name
        // the typed one begins (`altitude`): an abbreviation, not a slip.
        if let best, !best.startsAlike, best.name.unicodeScalars.count == typed.count, let prefixed,
           prefixed.unicodeScalars.count > typed.count, prefixed.lowercased().hasPrefix(name.lowercased()) {
            return prefixed
        }
        if let found = best?.name ?? prefixed { return found }
        return prefixes ? abbreviated(typed, among: candidates) : nil
    }

    /// The one candidate that `typed` abbreviates by leaving letters out (`cnt` for `count`,
    /// `updt` for `update`): the same first letter, the rest in order, at least three letters
    /// and half the candidate's; nil when none or several do.
    private static func abbreviated(_ typed: [Unicode.Scalar], among candidates: [String]) -> String? {
        guard typed.count >= 3 else { return nil }
        var found: String?
        for candidate in candidates {
            let known = Array(candidate.lowercased().unicodeScalars)
            guard known.first == typed.first, known.count > typed.count, typed.count * 2 >= known.count else { continue }
            var remaining = known[...]
            let inOrder = typed.allSatisfy { scalar in
                guard let at = remaining.firstIndex(of: scalar) else { return false }
                remaining = remaining[(at + 1)...]
                return true
            }
            guard inOrder else { continue }
            if found != nil { return nil }
            found = candidate
        }
        return found
    }

    /// `properties: a, b, c; did you mean 'b'?` (or `properties: none`): the names `kind` lists,
    /// then the suggestion when there is one.
    public static func listing(_ kind: String, _ names: [String], suggesting closest: String?) -> String {
        let list = names.isEmpty ? "none" : names.joined(separator: ", ")
        guard let closest else { return "\(kind): \(list)" }
        return "\(kind): \(list); did you mean '\(closest)'?"
    }

    /// The optimal string alignment distance of `a` and `b`, or any value above `limit` once it
    /// is known to exceed it.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int {
        if abs(a.count - b.count) > limit { return limit + 1 }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowBest = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, before[j - 2] + 1)
                }
                current[j] = value
                rowBest = min(rowBest, value)
            }
            if rowBest > limit { return limit + 1 }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
