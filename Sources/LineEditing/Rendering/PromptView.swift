/// What the prompt area shows: a prompt, the text being edited and where the cursor is in it.
///
/// ``LineEditor/view`` makes one (while searching history, its prompt is the search prompt and its
/// text the match); ``PromptRenderer`` draws it. Lines of the text after the first (after a newline)
/// start with ``continuationPrompt``. Prompts may hold SGR colour sequences (`ESC [ … m`) and other
/// escape sequences: they take no columns.
///
/// ```swift
/// let view = PromptView(prompt: "> ", text: "print(1)", cursor: 6)
/// ```
public struct PromptView: Hashable, Sendable {
    /// Shown before the first line of the text.
    public var prompt: String
    /// Shown before each further line of a multi-line text.
    public var continuationPrompt: String
    /// The text, one grapheme cluster per element.
    public var characters: [Character]
    /// An index into ``characters``: the cursor is drawn before that character.
    public var cursor: Int

    /// A view of `characters` with the cursor at `cursor` (clamped). Carriage returns are shown
    /// as line breaks, like newlines.
    public init(prompt: String, continuationPrompt: String = "", characters: [Character], cursor: Int) {
        self.prompt = prompt
        self.continuationPrompt = continuationPrompt
        self.characters = characters.map { $0 == "\r" || $0 == "\r\n" ? "\n" : $0 }
        self.cursor = min(max(cursor, 0), characters.count)
    }

    /// A view of `text` with the cursor at `cursor`, or at the end.
    public init(prompt: String, continuationPrompt: String = "", text: String, cursor: Int? = nil) {
        let characters = Array(text)
        self.init(prompt: prompt, continuationPrompt: continuationPrompt, characters: characters,
                  cursor: cursor ?? characters.count)
    }

    /// The text as a string.
    public var text: String { String(characters) }
}
