import LineEditing
import Testing

/// Kill commands, the kill ring, yank and yank-pop.
@Suite struct KillRingTests {
    @Test func ringMergesAndRotates() {
        var ring = KillRing()
        #expect(ring.current == nil)
        #expect((ring.rotate() as String?) == nil)
        ring.kill("world", merging: .none)
        ring.kill("hello ", merging: .prepend)
        ring.kill("!", merging: .append)
        #expect(ring.entries == ["hello world!"])
        ring.kill("second", merging: .none)
        ring.kill("", merging: .none)
        #expect(ring.entries == ["hello world!", "second"])
        #expect(ring.current == "second")
        #expect((ring.rotate() as String?) == "hello world!")
        #expect((ring.rotate() as String?) == "second", "wraps around")
    }

    @Test func ringDropsTheOldestBeyondItsCapacity() {
        var ring = KillRing(capacity: 2)
        for text in ["a", "b", "c"] { ring.kill(text, merging: .none) }
        #expect(ring.entries == ["b", "c"])
    }

    @Test func killToLineEndAndStart() {
        var line = LineBuffer("print('hi')", cursor: 5)
        #expect(line.killToLineEnd() as Bool)
        #expect(marked(line) == "print|")
        #expect(!(line.killToLineEnd() as Bool))
        line.moveCursor(to: 2)
        #expect(line.killToLineStart() as Bool)
        #expect(marked(line) == "|int")
        #expect(line.killRing.entries == ["('hi')", "pr"])
    }

    @Test func killToLineEndJoinsLinesAtALineEnd() {
        var line = LineBuffer("a\nb", cursor: 1)
        line.killToLineEnd()
        #expect(marked(line) == "a|b")
        var start = LineBuffer("a\nb", cursor: 2)
        start.killToLineStart()
        #expect(marked(start) == "a|b")
    }

    @Test func killWordBackwardStopsAtWhitespace() {
        var line = LineBuffer("x = foo.bar(1)  ")
        line.killWordBackward()
        #expect(marked(line) == "x = |")
        #expect(line.killRing.current == "foo.bar(1)  ")
    }

    @Test func alphanumericWordKills() {
        var line = LineBuffer("x = foo.bar", cursor: 11)
        line.killAlphanumericWordBackward()
        #expect(marked(line) == "x = foo.|")
        line.moveCursor(to: 0)
        line.killWordForward()
        #expect(marked(line) == "| = foo.")
        #expect(line.killRing.entries == ["bar", "x"])
    }

    @Test func consecutiveKillsBecomeOneEntry() {
        var line = LineBuffer("one two three")
        line.killWordBackward()
        line.killWordBackward()
        #expect(line.killRing.entries == ["two three"])
        line.moveLeft()
        line.killWordBackward()
        #expect(line.killRing.entries == ["two three", "one"], "a motion in between starts a new entry")
        #expect(marked(line) == "| ")
        line.insert("abc def")
        line.moveToStart()
        line.killWordForward()
        line.killToLineEnd()
        #expect(line.killRing.entries == ["two three", "one", "abc def "])
    }

    @Test func yankInsertsTheNewestKill() {
        var line = LineBuffer("hello world")
        #expect(!LineBuffer("x").yankCopy())
        line.killWordBackward()
        line.moveToStart()
        #expect(line.yank() as Bool)
        #expect(marked(line) == "world|hello ")
        line.moveToEnd()
        line.yank()
        #expect(marked(line) == "worldhello world|")
    }

    @Test func yankPopRotatesThroughOlderKills() {
        var line = LineBuffer("alpha beta gamma")
        line.killWordBackward()  // gamma
        line.moveLeft()
        line.killWordBackward()  // beta (a motion in between: a new entry)
        line.moveToEnd()
        line.yank()
        #expect(marked(line) == "alpha  beta|")
        #expect(line.yankPop() as Bool)
        #expect(marked(line) == "alpha  gamma|")
        #expect(line.yankPop() as Bool)
        #expect(marked(line) == "alpha  beta|", "the ring wraps")
        line.moveLeft()
        #expect(!(line.yankPop() as Bool), "only right after a yank")
        #expect(marked(line) == "alpha  bet|a")
    }

    @Test func yankPopOfWideText() {
        var line = LineBuffer("語語 😀")
        line.killWordBackward()
        line.killWordBackward()
        line.insert("x")
        line.killWordBackward()
        line.yank()
        line.yankPop()
        #expect(marked(line) == "語語 😀|")
    }
}

private extension LineBuffer {
    /// Whether yank does anything on a copy with an empty kill ring.
    func yankCopy() -> Bool {
        var copy = self
        return copy.yank()
    }
}
