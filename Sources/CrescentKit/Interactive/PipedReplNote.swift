import LuaBridge

/// `echo '1+1' | crescent repl`: with stdin not a terminal there is nobody to prompt, so the
/// input runs as a script (DESIGN.md), where a value typed as at the prompt is a syntax error.
/// When the input does not compile, this says why it ran as a script and what to write.
public enum PipedReplNote {
    /// The note for `bytes` (stdin, already run as a script) when they do not compile as a
    /// chunk; nil when they do (then the script's own errors say enough).
    public static func note(for bytes: [UInt8]) -> String? {
        guard let check = failedCompile(bytes) else { return nil }
        let base = "stdin is not a terminal, so crescent repl ran it as a script (as crescent < FILE does)"
        guard let value = check.valueLine else { return base + "; run crescent repl on a terminal for the prompt" }
        return base + ", where a value alone is no statement: print it (print(\(value))), or run crescent repl on a terminal"
    }

    /// `crescent -e '1+1'` or `echo '1+1' | crescent`: the same value typed as at the prompt, in
    /// a chunk or piped script. The note says to print it; nil when `bytes` compile or no line
    /// is a value alone.
    public static func valueAloneNote(for bytes: [UInt8]) -> String? {
        guard let value = failedCompile(bytes)?.valueLine else { return nil }
        return "a value alone is no statement in a script: print it (print(\(value))), or run crescent repl for a prompt that shows values"
    }

    /// Nil when `bytes` compile (or no VM could be made); else the first line that is a value
    /// alone (`1 + 1`, `services.location.updating`), which the REPL prints and a script does not
    /// take, trimmed, when there is one.
    private static func failedCompile(_ bytes: [UInt8]) -> SyntaxFailure? {
        guard let vm = try? LuaVM() else { return nil }
        do throws(LuaError) {
            try vm.load(bytes, name: "=stdin")
            return nil
        } catch {
            guard error.kind == .syntax else { return nil }
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        func compiles(_ text: String) -> Bool {
            defer { vm.stack.setTop(0) }
            return (try? vm.load(Array(text.utf8), name: "=stdin")) != nil
        }
        let value = lines.first { !compiles(String($0)) && compiles("return " + $0) }
        return SyntaxFailure(valueLine: value.map { $0.trimmingPrefix { $0 == " " || $0 == "\t" } })
    }

    /// Input that did not compile: its first line that is a value alone, if any.
    private struct SyntaxFailure {
        let valueLine: Substring?
    }
}
