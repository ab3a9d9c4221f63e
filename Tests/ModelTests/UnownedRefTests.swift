import Model
import Testing

/// `UnownedRef`, the back-pointer from a part to the whole that owns it: it reads the whole,
/// and holds nothing (the whole goes when its last owner lets go). Run under `make sanitize`,
/// the reads prove the invariant: a read of a freed whole would be a heap-use-after-free there,
/// and in debug builds stops at the reference's own check.
@Suite struct UnownedRefTests {
    final class Whole {
        let name: String
        var parts: [Part] = []
        init(name: String) { self.name = name }
    }

    final class Part {
        let wholeRef: UnownedRef<Whole>
        var whole: Whole { wholeRef.object }
        init(whole: Whole) { wholeRef = UnownedRef(whole) }
    }

    @Test func aPartReadsTheWholeThatOwnsIt() {
        let whole = Whole(name: "host")
        whole.parts.append(Part(whole: whole))
        #expect(whole.parts.first?.whole === whole)
        #expect(whole.parts.first?.wholeRef.withObject { $0.name } == "host")
    }

    @Test func theReferenceKeepsNothingAlive() {
        var whole: Whole? = Whole(name: "host")
        weak let observed = whole
        var parts: [Part] = []
        if let whole { parts.append(Part(whole: whole)) }
        #expect(parts.first?.whole.name == "host")
        whole = nil
        #expect(observed == nil)
        // The part outlived its whole: from here on the invariant forbids reading it.
        parts.removeAll()
    }

    @Test func thePartsOfAWholeGoWithIt() {
        weak var observedPart: Part?
        do {
            let whole = Whole(name: "host")
            let part = Part(whole: whole)
            whole.parts.append(part)
            observedPart = part
            #expect(observedPart?.whole === whole)
        }
        #expect(observedPart == nil)
    }
}
