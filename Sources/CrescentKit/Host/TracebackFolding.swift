/// What an error report shows of a Lua traceback: the script's own frames first, in order, and
/// the host's internal frames (the prelude's `[crescent controllers]:99`, C functions such as
/// `xpcall`) folded into one line after them, naming where they are. A traceback with no frame
/// of the script stays whole: the host's frames are then all there is to go on.
enum TracebackFolding {
    /// `message` with its `stack traceback:` section folded; any other text is returned as it is.
    /// With `always` (a chunk typed at the REPL or sent by `crescent eval`, whose text the
    /// person has in front of them), a traceback of host frames only is folded too.
    static func folded(_ message: String, always: Bool = false) -> String {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: false)
        guard let header = lines.firstIndex(of: "stack traceback:") else { return message }
        let frames = lines[(header + 1)...]
        var script: [Substring] = []
        var hostCount = 0
        var hostSources: [String] = []
        for frame in frames {
            guard let source = hostSource(of: frame) else {
                script.append(frame)
                continue
            }
            hostCount += 1
            if !source.isEmpty, !hostSources.contains(source) { hostSources.append(source) }
        }
        guard !script.isEmpty || always, hostCount > 0 else { return message }
        let plural = hostCount == 1 ? "frame" : "frames"
        // Frames that name no source (a tail call replaced them) have nothing to list.
        let sources = hostSources.isEmpty ? "" : ": " + hostSources.joined(separator: ", ")
        let fold = "\t(\(hostCount) host \(plural)\(sources))"
        return (lines[...header] + script + [Substring(fold)]).joined(separator: "\n")
    }

    /// Whether `message`'s traceback names a frame of the script (a line of its own files).
    static func hasScriptFrame(_ message: String) -> Bool {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: false)
        guard let header = lines.firstIndex(of: "stack traceback:") else { return false }
        return lines[(header + 1)...].contains { !$0.allSatisfy(\.isWhitespace) && hostSource(of: $0) == nil }
    }

    /// For a frame of the host, the source it names (`[crescent controllers]`, `[C]`, or empty
    /// for Lua's own `(...tail calls...)` and skipped-levels lines); nil for a frame of the script.
    private static func hostSource(of frame: Substring) -> String? {
        let text = frame.drop { $0 == "\t" || $0 == " " }
        if text.hasPrefix("[C]") { return "[C]" }
        if text.hasPrefix("[crescent "), let end = text.firstIndex(of: "]") { return String(text[...end]) }
        if text.hasPrefix("(...tail calls...)") || text.hasPrefix("...") { return "" }
        return nil
    }
}
