import Model
import Testing

/// The concrete `joined(separator:)` for arrays of strings gives what the standard library's
/// generic one gives (reached here through a slice, which the concrete one does not cover).
@Suite struct ArrayJoinedTests {
    static let lists: [[String]] = [[], [""], ["a"], ["a", "b", "c"], ["", "", ""], ["München", "Île-de-France", "😀"], ["line\n", "\r\n"]]

    @Test(arguments: lists, ["", ", ", "\n", "—"])
    func joinsAsTheStandardLibraryDoes(_ list: [String], _ separator: String) {
        #expect(list.joined(separator: separator) == list[...].joined(separator: separator))
    }
}
