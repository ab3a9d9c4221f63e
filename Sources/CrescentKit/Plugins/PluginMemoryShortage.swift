#if canImport(Glibc)
import Glibc
#endif

/// Whether a process plugin's program that ended before answering `initialize` ran out of its
/// memory limit (`memory_mib`, its RLIMIT_DATA), and how to say so: with `memory_mib = 1` it only
/// "exited before answering 'initialize'", which sent its author looking everywhere else.
///
/// The signs: a line of its stderr saying it could not allocate (Python's `MemoryError`, the
/// C library's "Cannot allocate memory", the loader's "cannot map zero-fill pages", ...), at any
/// limit; or, under a limit below the default, an end by SIGKILL, SIGSEGV, SIGBUS or abort (what
/// an exec or an interpreter's start does when it cannot map its memory) or the loader's 127.
enum PluginMemoryShortage {
    /// True when the stderr line `text` says an allocation failed.
    static func saysOutOfMemory(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return ["memoryerror", "cannot allocate memory", "out of memory", "cannot map zero-fill pages", "enomem",
                "bad_alloc", "failed to allocate", "memory allocation failed", "not enough memory"]
            .contains { lowered.contains($0) }
    }

    /// True when a program under a limit of `limitMiB` that ended with the wait status `status`
    /// (nil: unknown), and said it could not allocate when `said`, most likely ran out of that
    /// limit. A confined program's status is its namespace init's: its own exit code, or 128 + N
    /// for a signal N.
    static func explains(status: Int32?, said: Bool, limitMiB: Int) -> Bool {
        if said { return true }
        guard let status, limitMiB < PluginPermissions.defaultMemoryMiB else { return false }
        let signal: Int32
        if status & 0x7f == 0 {
            let code = (status >> 8) & 0xff
            if code == 127 { return true }
            guard code > 128 else { return false }
            signal = code - 128
        } else {
            signal = status & 0x7f
        }
        return [SIGKILL, SIGSEGV, SIGBUS, SIGABRT].contains(signal)
    }

    /// What it did, to go after "it" (and before "before answering 'initialize'"): the setting,
    /// its value, where it is set and the fix.
    static func reason(_ manifest: PluginManifest) -> String {
        let limit = manifest.permissions.memoryMiB ?? PluginPermissions.defaultMemoryMiB
        let set = manifest.permissions.memoryMiB == nil ? "the default memory_mib" : "memory_mib = \(limit) in [permissions] of \(manifest.path)"
        return "ran out of its memory limit of \(limit) MiB (\(set); raise it, e.g. to \(PluginPermissions.defaultMemoryMiB), the default)"
    }
}
