#!/usr/bin/env python3
"""The system plugin: load, memory and uptime from /proc every `interval` seconds, and the
process list on request. JSON-RPC 2.0 on stdin/stdout, one object per line; Python 3 standard
library only. It exits when its stdin closes (the host went, even if it was killed)."""
import json
import os
import select
import sys
import time

SERVICE = "system"
settings = {"interval": 2}
last = {}


def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def read(path):
    with open(path) as handle:
        return handle.read()


def load():
    one, five, fifteen = read("/proc/loadavg").split()[:3]
    return {"one": float(one), "five": float(five), "fifteen": float(fifteen)}


def memory():
    fields = {}
    for line in read("/proc/meminfo").splitlines():
        name, _, rest = line.partition(":")
        fields[name] = int(rest.split()[0]) * 1024
    total, available = fields.get("MemTotal", 0), fields.get("MemAvailable", 0)
    return {"total": total, "available": available, "used": total - available}


def uptime():
    return float(read("/proc/uptime").split()[0])


def readings():
    return {"load": load(), "memory": memory(), "uptime": uptime()}


def publish():
    for key, value in readings().items():
        if last.get(key) != value:
            last[key] = value
            send({"jsonrpc": "2.0", "method": "set", "params": {"service": SERVICE, "property": key, "value": value}})


def processes(pattern):
    ticks = os.sysconf("SC_CLK_TCK")
    page = os.sysconf("SC_PAGE_SIZE")
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = read("/proc/%s/stat" % entry)
            command = read("/proc/%s/cmdline" % entry).replace("\0", " ").strip()
        except OSError:
            continue  # it exited meanwhile
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if pattern and pattern.lower() not in (name + " " + command).lower():
            continue
        found.append({
            "pid": int(entry),
            "name": name,
            "command": command or "[" + name + "]",
            "cpu": (int(fields[11]) + int(fields[12])) / ticks,
            "memory": int(fields[21]) * page,
        })
    found.sort(key=lambda process: -process["cpu"])
    return found


def describe():
    value = readings()
    return {"services": [{
        "name": SERVICE,
        "summary": "Load, memory, uptime and processes, read from /proc.",
        "properties": [
            {"name": "load", "type": "{ one, five, fifteen }", "doc": "Load averages over 1, 5 and 15 minutes.", "value": value["load"]},
            {"name": "memory", "type": "{ total, available, used }", "doc": "Memory in bytes.", "value": value["memory"]},
            {"name": "uptime", "type": "number", "doc": "Seconds since the machine started.", "value": value["uptime"]},
        ],
        "methods": [{
            "name": "processes",
            "args": [{"name": "filter", "type": "string?", "doc": "Only processes whose name or command holds this text."}],
            "returns": "{processes}",
            "doc": "Running processes { pid, name, command, cpu (seconds), memory (bytes) }, busiest first.",
        }],
        "events": [],
    }]}


def answer(message):
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        settings.update(params.get("settings") or {})
        result = describe()
        last.update(readings())
        return result
    if method == "call":
        if params.get("method") == "processes":
            args = params.get("args") or []
            return processes(args[0] if args else None)
        raise LookupError("no method " + str(params.get("method")))
    raise LookupError("unknown method " + str(method))


def main():
    interval = None
    deadline = None
    while True:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([sys.stdin], [], [], timeout)
        if not ready:
            publish()
            deadline = time.monotonic() + interval
            continue
        line = sys.stdin.readline()
        if not line:
            return  # stdin closed: the host is gone
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("method") == "shutdown":
            return
        if "id" not in message:
            continue  # cancel: every call here answers at once
        try:
            send({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)})
        except LookupError as error:
            send({"jsonrpc": "2.0", "id": message["id"],
                  "error": {"code": -32601, "message": str(error), "data": {"code": "invalid_argument"}}})
        if interval is None and message.get("method") == "initialize":
            interval = float(settings.get("interval") or 2)
            deadline = time.monotonic() + interval


if __name__ == "__main__":
    main()
