import Model

extension SpecRunner {
    /// The note for tags no test's name has, when others chose the tests that ran: `--tags
    /// fast,fsat` ran the #fast tests and dropped `fsat` without a word. Nil when each tag is found.
    static func untaggedNote(_ selection: SpecSelection, tagged: Set<[UInt8]>) -> String? {
        var lines = ""
        for (tags, origin, effect) in [(selection.tags, selection.tagsOrigin, "chose no test"),
                                       (selection.excludedTags, selection.excludedTagsOrigin, "left out no test")] {
            let unused = tags.filter { !tagged.contains($0) }.map { ByteText.shown($0) }
            guard !unused.isEmpty else { continue }
            lines += "note: \(origin) \(unused.joined(separator: ",")): no test's name has \(unused.map { "#" + $0 }.joined(separator: " or ")), "
                + "so \(unused.count == 1 ? "it" : "they") \(effect) (a tag is a #word in a describe or test name, as in it(\"saves #slow\", ...))\n"
        }
        return lines.isEmpty ? nil : lines
    }

    /// Why a run that ran no test exits 1: a `--tags` that no test has, or a suite of only pending tests.
    static func noTestRan(_ selection: SpecSelection, pending: Int) -> String {
        if !selection.tags.isEmpty || !selection.excludedTags.isEmpty {
            let tags = selection.tags.isEmpty ? "" : " \(selection.tagsOrigin) " + selection.tags.map { ByteText.shown($0) }.joined(separator: ",")
            let excluded = selection.excludedTags.isEmpty ? ""
                : " \(selection.excludedTagsOrigin) " + selection.excludedTags.map { ByteText.shown($0) }.joined(separator: ",")
            // `--tags '#fast'`: the tag as the name writes it; the option takes the word.
            if let hashed = (selection.tags + selection.excludedTags).first(where: { $0.first == UInt8(ascii: "#") }) {
                let word = ByteText.shown(Array(hashed.dropFirst()))
                return "no test ran: no test is chosen by\(tags)\(excluded): give a tag without its #, as in --tags \(word) "
                    + "(the name writes it #\(word))\n"
            }
            return "no test ran: no test is chosen by\(tags)\(excluded) (a tag is a #word in a describe or test name, "
                + "as in it(\"saves #slow\", ...))\n"
        }
        return pending > 0 ? "no test ran: every test is pending\n"
            : "no test ran: the spec files declare no test (add an it(\"...\", function() ... end))\n"
    }
}
