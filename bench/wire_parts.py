#!/usr/bin/env python3
"""bench/wire_parts.py - where the bytes on the wire go, part by part.

    bench/wire_parts.py OUT.gltf       # gltfpack's .gltf + .bin (gltfpack -cc -o OUT.gltf)
    bench/wire_parts.py OUT.untold     # an untold cook output

For gltfpack's output: each meshopt-compressed bufferView (by attribute
stride and filter) and the JSON, each after `zstd -19` on its own (what
the whole .glb + zstd -19 comes to, within a few percent). For a .untold
file (the `untold` command: the optional second argument, else PATH): each
chunk's stored size and, for meshopt chunks, the stored bytes per stream
kind, and the fields streams' bytes per field: as stored (meshopt), or
each field after zstd -19 on its own (meshopt+zstd, whose streams are one
frame each; docs/format.md, "meshopt chunks"). Python standard library and the
zstd command only.
"""
import collections
import json
import struct
import subprocess
import sys


def zstd19(data: bytes) -> int:
    return len(subprocess.run(["zstd", "-19", "-c", "-q"], input=data, capture_output=True, check=True).stdout)


def gltfpack_parts(path: str) -> None:
    with open(path, "rb") as f:
        doc = json.load(f)
    with open(path[: -len(".gltf")] + ".bin", "rb") as f:
        binary = f.read()
    total = 0
    for view in doc.get("bufferViews", []):
        ext = view.get("extensions", {}).get("EXT_meshopt_compression")
        if not ext:
            continue
        at = ext.get("byteOffset", 0)
        part = binary[at:at + ext["byteLength"]]
        z = zstd19(part)
        total += z
        print(f"{ext['mode']:<10} stride {ext['byteStride']:>2} filter {ext.get('filter', 'NONE'):<11} "
              f"count {ext['count']:>7}  {len(part):>8} B  zstd -19 {z:>8} B")
    with open(path, "rb") as f:
        z = zstd19(f.read())
    total += z
    print(f"{'JSON':<48} zstd -19 {z:>8} B")
    print(f"{'total':<48} {total:>17} B")


def untold_parts(path: str) -> None:
    with open(path, "rb") as f:
        data = f.read()
    out = subprocess.run([sys.argv[2] if len(sys.argv) > 2 else "untold", "info", "--json", path],
                         capture_output=True, check=True, text=True).stdout
    info = json.loads(out)[0]
    kinds = {1: "vertex", 2: "index triangles", 3: "index sequence", 4: "raw", 5: "words", 6: "fields"}
    for c in info["chunks"]:
        print(f"chunk {c['typeName']:<16} {c['compression']:<13} {c['storedSize']:>9} B")
        if not c["compression"].startswith("meshopt"):
            continue
        stored = data[c["fileOffset"]:c["fileOffset"] + c["storedSize"]]
        n = struct.unpack_from("<I", stored, 0)[0]
        per_kind = collections.Counter()
        per_field = collections.Counter()
        for i in range(n):
            _, _, size, kind, _, stored_size = struct.unpack_from("<QIHBBQ", stored, 8 + 24 * i)
            per_kind[kinds.get(kind, str(kind))] += stored_size
            if kind == 6:
                at = sum(struct.unpack_from("<Q", stored, 8 + 24 * j + 16)[0] for j in range(i)) + 8 + 24 * n
                stream = stored[at:at + stored_size]
                if c["compression"] == "meshopt+zstd":  # one frame: each field below is zstd -19 on its own
                    stream = subprocess.run(["zstd", "-d", "-c", "-q"], input=stream, capture_output=True,
                                            check=True).stdout
                fields = stream[0]
                offset, field_at = 0, 1 + 6 * fields
                for f in range(fields):
                    fsize, fkind, fstored = struct.unpack_from("<BBI", stream, 1 + 6 * f)
                    part = stream[field_at:field_at + fstored]
                    size = zstd19(part) if c["compression"] == "meshopt+zstd" else fstored
                    per_field[f"bytes {offset:>2}..{offset + fsize - 1:>2}"] += size
                    offset += fsize
                    field_at += fstored
        for k, v in sorted(per_kind.items()):
            print(f"    {k:<20} {v:>9} B")
        for k, v in sorted(per_field.items()):
            print(f"      fields streams, {k:<14} {v:>9} B")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if sys.argv[1].endswith(".gltf"):
        gltfpack_parts(sys.argv[1])
    else:
        untold_parts(sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
