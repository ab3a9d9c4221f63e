import LineEditing
import Testing

@Suite struct CompletionColumnsTests {
    @Test func candidatesGoDownTheColumns() {
        let text = CompletionColumns.format(["insert", "remove", "sort", "concat", "unpack"], width: 30)
        #expect(text == "insert  sort    unpack\nremove  concat")
    }

    @Test func aNarrowTerminalGetsOneColumn() {
        #expect(CompletionColumns.format(["location", "geocoder"], width: 10) == "location\ngeocoder")
        #expect(CompletionColumns.format(["location"], width: 3) == "location")
        #expect(CompletionColumns.format([], width: 80) == "")
    }

    @Test func wideCandidatesAlignByColumns() {
        let text = CompletionColumns.format(["語語", "ab", "c"], width: 12)
        #expect(text == "語語  c\nab")
    }
}
