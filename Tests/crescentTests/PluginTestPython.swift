/// Python for the process plugins of the tests: a process plugin runs in a PID namespace of its
/// own, where `os.getpid()` and `Popen.pid` are that namespace's numbers, not the host's. The
/// tests look processes up by the host's numbers, which /proc (the host's) gives.
enum PluginTestPython {
    /// Defines `host_pid()`, this process's pid as the host sees it, and
    /// `spawn_seen(argv, **options)`, a `Popen` of `argv` and its pid as the host sees it.
    static let hostPids = #"""
        import os as _os, subprocess as _subprocess, sys as _sys
        def host_pid():
            return int(_os.readlink("/proc/self"))
        def spawn_seen(argv, **options):
            report = "import os, sys; os.write(1, os.readlink('/proc/self').encode() + b'\\n'); os.execvp(sys.argv[1], sys.argv[1:])"
            child = _subprocess.Popen([_sys.executable, "-c", report] + argv, stdout=_subprocess.PIPE, **options)
            return child, int(child.stdout.readline())
        """#
}
