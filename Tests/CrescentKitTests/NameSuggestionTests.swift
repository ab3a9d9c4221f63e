import Model
import CrescentKit
import Testing

/// The one "did you mean" rule every unknown-name error uses.
@Suite struct NameSuggestionTests {
    @Test(arguments: [
        ("locaton", ["location", "provider", "updating"], "location"),
        ("lcoation", ["location", "provider"], "location"),
        ("colection", ["collection", "collections", "observe"], "collection"),
        ("txt", ["text", "list", "table", "row"], "text"),
        ("Location", ["location"], "location"),
        ("didUpdate", ["didUpdateLocations", "didFail"], "didUpdateLocations"),
        ("frobnicate", ["location", "provider"], nil),
        ("x", ["location"], nil),
        // An abbreviation, when it is the only name it abbreviates and half of it at least.
        ("cnt", ["name", "count", "items"], "count"),
        ("updt", ["update", "remove"], "update"),
        ("cnt", ["count", "cornet"], nil),
        ("lct", ["location"], nil),
        // A swap that makes another word loses to the name the typed one begins (attack new29m
        // #25); a slip of the same length without such a name still wins.
        ("alt", ["lat", "lon", "time", "altitude", "accuracy"], "altitude"),
        ("nmae", ["name", "names"], "name"),
        ("writ", ["write", "wait"], "write"),
    ] as [(String, [String], String?)])
    func theClosestDeclaredNameIsSuggested(typed: String, names: [String], expected: String?) {
        #expect(NameSuggestion.closest(to: typed, among: names) == expected)
    }

    @Test func lifecycleStepsAreMatchedByEditsOnly() {
        let steps = ["init", "loadView", "viewDidLoad", "viewWillAppear"]
        #expect(NameSuggestion.closest(to: "viewDidLoaded", among: steps, prefixes: false) == "viewDidLoad")
        #expect(NameSuggestion.closest(to: "initRows", among: steps, prefixes: false) == nil)
        #expect(NameSuggestion.closest(to: "initRows", among: steps) == "init")
    }

    @Test func theListingEndsWithTheSuggestion() {
        #expect(NameSuggestion.listing("events", ["didFail", "didUpdateLocations"], suggesting: "didFail")
            == "events: didFail, didUpdateLocations; did you mean 'didFail'?")
        #expect(NameSuggestion.listing("properties", [], suggesting: nil) == "properties: none")
    }
}
