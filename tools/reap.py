#!/usr/bin/env python3
"""Runs a command and, once it ends, stops whatever it left running; exits with its status.

make test runs each test phase through this. A test process that crashes leaves behind the
crescent hosts, plugin processes and PostgreSQL servers it started: their parent is gone, so they
are adopted by init and nobody stops them (one such host, inside a remote `while true do end`,
spun a core for twenty minutes and skewed every measurement made meanwhile). As a child subreaper
(prctl PR_SET_CHILD_SUBREAPER), this process adopts them instead, and when the command ends it
stops every process it holds: SIGTERM, then SIGKILL for those still running 5 seconds later.

    python3 tools/reap.py swift test --skip-build --filter ModelTests
"""
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def reap_exited():
    """Collects the exit status of every adopted process that has ended (no zombies are left)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def children():
    """The processes whose parent is this one, each with its command line."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat_file:
                stat = stat_file.read()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline_file:
                command = cmdline_file.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        # The fields after the command name, which may itself hold spaces and parentheses.
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == me:
            found.append((int(entry), command))
    return found


def stop(left):
    """Sends SIGTERM, then SIGKILL after 5 s, to the processes in `left` and their adopted kin."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid, _ in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            reap_exited()
            left = children()
            if not left:
                return
            time.sleep(0.05)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: tools/reap.py COMMAND [ARGUMENT ...]")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(f"reap: cannot become a child subreaper (errno {ctypes.get_errno()}); "
              "processes the command leaves running are not stopped", file=sys.stderr)
    try:
        status = subprocess.call(sys.argv[1:])
    except OSError as error:
        sys.exit(f"reap: cannot run {sys.argv[1]}: {error}")
    reap_exited()
    left = children()
    if left:
        print(f"reap: stopping {len(left)} process(es) that {os.path.basename(sys.argv[1])} left running:",
              file=sys.stderr)
        for pid, command in left:
            print(f"reap:   {pid} {command[:160]}", file=sys.stderr)
        stop(left)
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
