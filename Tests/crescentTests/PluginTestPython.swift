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

    /// A whole process plugin: a JSON-RPC loop that answers `initialize` with `declaration` (a
    /// Python expression: `{"services": [...]}`) and each call by `handle(id, name, args)`, whose
    /// body `calls` is (Python, indented four spaces, with `send(message)` at hand).
    static func loop(declaration: String, calls: String) -> String {
        #"""
        import json, sys
        def send(message):
            sys.stdout.write(json.dumps(message) + "\n"); sys.stdout.flush()
        def handle(id, name, args):
        \#(calls)
        for line in sys.stdin:
            message = json.loads(line)
            method, id, params = message.get("method"), message.get("id"), message.get("params") or {}
            if method == "shutdown":
                break
            if id is None:
                continue
            if method == "initialize":
                send({"jsonrpc": "2.0", "id": id, "result": \#(declaration)})
                continue
            handle(id, params.get("method"), params.get("args") or [])
        """#
    }
}
