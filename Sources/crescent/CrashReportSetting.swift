#if canImport(Glibc)
import Glibc
#endif

/// How the Swift runtime reports a crash of the host when a person is at its terminal.
///
/// The runtime's backtracer reads `SWIFT_BACKTRACE` once, as the process starts, and on a
/// terminal it defaults to interactive: after a crash signal (the terminal already given back by
/// the C guard) it shows a prompt and waits for a key for up to 30 s per question, holding the
/// person's shell, and a key typed meanwhile goes to it. The report itself is worth keeping, so
/// the setting chosen is `interactive=no`: the backtrace is printed and the process dies of its
/// signal at once. As the runtime has read the variable before any of our code runs, the process
/// sets it and executes itself again, once, only when stdin or stdout is a terminal and the
/// variable is unset (a person's own `SWIFT_BACKTRACE` is kept as given).
enum CrashReportSetting {
    static let variable = "SWIFT_BACKTRACE"
    static let value = "interactive=no"

    /// Sets ``value`` and executes the program again, when that is needed; returns when it is not
    /// (or when the exec fails: the run goes on with the runtime's default).
    static func apply() {
        guard getenv(variable) == nil, isatty(STDIN_FILENO) == 1 || isatty(STDOUT_FILENO) == 1 else { return }
        guard setenv(variable, value, 1) == 0 else { return }
        _ = execv("/proc/self/exe", CommandLine.unsafeArgv)
    }
}
