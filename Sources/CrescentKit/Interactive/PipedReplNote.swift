import LuaBridge

/// `echo '1+1' | crescent repl`: with stdin not a terminal there is nobody to prompt, so the
/// input runs as a script (DESIGN.md), where a value typed as at the prompt is a syntax error.
/// When the input does not compile, this says why it ran as a script and what to write.
public enum PipedReplNote {
    /// The note for `bytes` (stdin, already run as a script) when they do not compile as a
    /// chunk; nil when they do (then the script's own errors say enough).
    public static func note(for bytes: [UInt8]) -> String? {
        guard let vm = try? LuaVM() else { return nil }
        do throws(LuaError) {
            try vm.load(bytes, name: "=stdin")
            return nil
        } catch {
            guard error.kind == .syntax else { return nil }
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        // A line that is a value alone (`1 + 1`, `services.location.updating`): the REPL prints
        // it, a script does not take it.
        func compiles(_ text: String) -> Bool {
            defer { vm.stack.setTop(0) }
            return (try? vm.load(Array(text.utf8), name: "=stdin")) != nil
        }
        let value = lines.first { !compiles(String($0)) && compiles("return " + $0) }
        let base = "stdin is not a terminal, so crescent repl ran it as a script (as crescent < FILE does)"
        guard let value else { return base + "; run crescent repl on a terminal for the prompt" }
        let shown = value.trimmingPrefix { $0 == " " || $0 == "\t" }
        return base + ", where a value alone is no statement: print it (print(\(shown))), or run crescent repl on a terminal"
    }
}
