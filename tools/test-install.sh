#!/usr/bin/env bash
# make install into a temporary prefix, then what a user does with it: a `#!/usr/bin/env crescent`
# script run from another folder with only PREFIX/bin (and the system's /usr/bin:/bin for env) on
# the PATH, using the geocoder's installed data; the binary is position-independent and has no
# run path and no debug information; then make uninstall leaves nothing behind.
# INSTALL_CONFIG (release unless given; make test-install passes debug) picks the build installed.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="$(mktemp -d /tmp/crescent-prefix.XXXXXX)"
work="$(mktemp -d /tmp/crescent-elsewhere.XXXXXX)"
trap 'rm -rf "$prefix" "$work"' EXIT

make --no-print-directory install INSTALL_CONFIG="${INSTALL_CONFIG:-release}" PREFIX="$prefix" >/dev/null
cat > "$work/where.lua" <<'LUA'
#!/usr/bin/env crescent
local places, err = nil, nil
task(function()
  places, err = services.geocoder:reverse({ lat = tonumber(arg[1]), lon = tonumber(arg[2]) })
  print(places and (places[1].name .. ", " .. places[1].country) or tostring(err))
end)
LUA
chmod +x "$work/where.lua"
output="$(cd "$work" && env -i HOME="$work" PATH="$prefix/bin:/usr/bin:/bin" ./where.lua 48.8534 2.3488)"
if [ "$output" != "Paris, France" ]; then
    echo "test-install: FAILED: the installed crescent printed '$output', expected 'Paris, France'" >&2
    exit 1
fi
if ldd "$prefix/bin/crescent" 2>/dev/null | grep -q libswiftCore; then
    echo "test-install: FAILED: the installed crescent links the Swift runtime dynamically" >&2
    exit 1
fi
# Position-independent, so the kernel loads it at a random address (ASLR): ELF type DYN, not EXEC.
if ! LC_ALL=C readelf -h "$prefix/bin/crescent" | grep -Eq '^ *Type: +DYN'; then
    echo "test-install: FAILED: the installed crescent is not position-independent: $(LC_ALL=C readelf -h "$prefix/bin/crescent" | grep 'Type:')" >&2
    exit 1
fi
# No run path: the loader looks for its few shared libraries (libc, libm, libz) in the system's
# folders only, not first in the folder the binary was installed to.
if LC_ALL=C readelf -d "$prefix/bin/crescent" | grep -Eq '\((RUNPATH|RPATH)\)'; then
    echo "test-install: FAILED: the installed crescent has a run path: $(LC_ALL=C readelf -d "$prefix/bin/crescent" | grep -E 'RUNPATH|RPATH')" >&2
    exit 1
fi
# Installed without its debug information (the symbols stay, for backtraces).
if LC_ALL=C readelf -S "$prefix/bin/crescent" | grep -q '\.debug_info'; then
    echo "test-install: FAILED: the installed crescent carries its debug information" >&2
    exit 1
fi
make --no-print-directory uninstall PREFIX="$prefix" >/dev/null
if [ -e "$prefix/bin/crescent" ] || [ -e "$prefix/share/crescent" ]; then
    echo "test-install: FAILED: make uninstall left files in $prefix" >&2
    exit 1
fi
echo "test-install: 1 passed, 0 failed"
