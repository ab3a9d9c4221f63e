/// One keystroke, or a pasted text, from the terminal, as ``KeyDecoder`` reads them.
///
/// Typed text arrives as ``text(_:)`` (one event may hold several characters when they came in one
/// read); a bracketed paste as one ``paste(_:)``. Ctrl plus a letter is ``control(_:)`` with the
/// lowercase letter; Alt (Meta, or Esc then the key) plus a character is ``alt(_:)``. Keys with
/// names come as ``key(_:modifiers:)``.
///
/// Enter is `.key(.enter)` whether the terminal sends CR or LF (so Ctrl-J and Ctrl-M are Enter),
/// Backspace is `.key(.backspace)` for both DEL and BS (so Ctrl-H is Backspace), Tab is
/// `.key(.tab)` (Ctrl-I).
///
/// ```swift
/// var decoder = KeyDecoder()
/// decoder.decode(Array("\u{1}x\u{1B}[1;5D".utf8))
/// // [.control("a"), .text("x"), .key(.left, modifiers: .control)]
/// ```
public enum Key: Hashable, Sendable {
    /// Printable text typed at the keyboard.
    case text(String)
    /// Text pasted in one piece (bracketed paste), carriage returns turned into newlines.
    case paste(String)
    /// Ctrl plus a lowercase letter, or one of `@ [ \ ] ^ _` (Ctrl-Space is `@`).
    case control(Character)
    /// Alt plus a character: `.alt("b")` for Alt-B.
    case alt(Character)
    /// A named key, with the modifiers the terminal reported.
    case key(Name, modifiers: Modifiers = [])
    /// A mouse report (SGR mouse reporting, turned on with `ESC [?1000h ESC [?1006h`).
    case mouse(MouseEvent)

    /// Keys with names.
    public enum Name: Hashable, Sendable {
        case enter, tab, backTab, backspace, delete, insert, escape
        case up, down, left, right, home, end, pageUp, pageDown
        /// F1 to F12: `.function(1)` … `.function(12)`.
        case function(Int)
    }

    /// Shift, Alt and Ctrl held with a named key (xterm reports them in CSI parameters).
    public struct Modifiers: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let shift = Modifiers(rawValue: 1)
        public static let alt = Modifiers(rawValue: 2)
        public static let control = Modifiers(rawValue: 4)
    }
}

/// A click or a turn of the wheel, at a cell counted from 1 (column 1, row 1 is the top left).
public struct MouseEvent: Hashable, Sendable {
    /// What the mouse did.
    public enum Action: Hashable, Sendable {
        /// A button went down: 0 is the left one, 1 the middle, 2 the right.
        case press(button: Int)
        /// A button came up.
        case release(button: Int)
        case wheelUp, wheelDown
    }

    public let action: Action
    public let column: Int
    public let row: Int

    public init(action: Action, column: Int, row: Int) {
        self.action = action
        self.column = column
        self.row = row
    }
}
