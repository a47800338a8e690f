#!/usr/bin/env python3
"""Writes the bundled sample model: sample.gltf, sample.bin, checker.png.

Authored for this project (see PROVENANCE.md); run it again only to change
the model. Uses the Python standard library only.
"""
import base64, json, math, os, struct, zlib

here = os.path.dirname(os.path.abspath(__file__))


def cube():
    """24 vertices (4 per face) with normals, tangents and UVs; 36 indices."""
    pos, nrm, tan, uv, idx = [], [], [], [], []
    faces = [((1, 0, 0), (0, 0, -1)), ((-1, 0, 0), (0, 0, 1)), ((0, 1, 0), (1, 0, 0)),
             ((0, -1, 0), (1, 0, 0)), ((0, 0, 1), (1, 0, 0)), ((0, 0, -1), (-1, 0, 0))]
    for n, u in faces:
        v = (n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0])
        base = len(pos)
        for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            pos.append(tuple(0.5 * (n[k] + su * u[k] + sv * v[k]) for k in range(3)))
            nrm.append(n)
            tan.append(u + (1.0,))
            uv.append((0.5 * (su + 1), 0.5 * (1 - sv)))
        idx += [base, base + 1, base + 2, base, base + 2, base + 3]
    return pos, nrm, tan, uv, idx


def plane(size):
    h = size / 2
    pos = [(-h, 0, h), (h, 0, h), (h, 0, -h), (-h, 0, -h)]
    nrm = [(0, 1, 0)] * 4
    tan = [(1, 0, 0, 1.0)] * 4
    uv = [(0, size), (size, size), (size, 0), (0, 0)]  # the texture repeats once per unit
    return pos, nrm, tan, uv, [0, 1, 2, 0, 2, 3]


buffer = bytearray()
views, accessors = [], []


def add(data, fmt, count, type_, component, target, minmax=None):
    while len(buffer) % 4:
        buffer.append(0)
    offset = len(buffer)
    for item in data:
        buffer.extend(struct.pack(fmt, *(item if isinstance(item, tuple) else (item,))))
    views.append({"buffer": 0, "byteOffset": offset, "byteLength": len(buffer) - offset, "target": target})
    acc = {"bufferView": len(views) - 1, "componentType": component, "count": count, "type": type_}
    if minmax:
        acc["min"], acc["max"] = minmax
    accessors.append(acc)
    return len(accessors) - 1


def add_mesh(name, geometry, material):
    pos, nrm, tan, uv, idx = geometry
    lo = [min(p[k] for p in pos) for k in range(3)]
    hi = [max(p[k] for p in pos) for k in range(3)]
    a = {
        "POSITION": add(pos, "<3f", len(pos), "VEC3", 5126, 34962, (lo, hi)),
        "NORMAL": add(nrm, "<3f", len(nrm), "VEC3", 5126, 34962),
        "TANGENT": add(tan, "<4f", len(tan), "VEC4", 5126, 34962),
        "TEXCOORD_0": add(uv, "<2f", len(uv), "VEC2", 5126, 34962),
    }
    i = add(idx, "<H", len(idx), "SCALAR", 5123, 34963)
    return {"name": name, "primitives": [{"attributes": a, "indices": i, "material": material}]}


def rotation_y(degrees):
    r = math.radians(degrees) / 2
    return [0.0, math.sin(r), 0.0, math.cos(r)]


meshes = [add_mesh("crate", cube(), 0), add_mesh("ground", plane(4.0), 1)]
gltf = {
    "asset": {"version": "2.0", "generator": "untold examples/data/make_sample.py"},
    "scene": 0,
    "scenes": [{"name": "sample", "nodes": [0]}],
    "nodes": [
        {"name": "sample", "children": [1, 2]},
        {"name": "ground", "mesh": 1},
        {"name": "crate", "mesh": 0, "translation": [0.0, 0.5, 0.0], "rotation": rotation_y(30), "children": [3]},
        {"name": "small_crate", "mesh": 0, "translation": [0.0, 0.75, 0.0], "scale": [0.5, 0.5, 0.5]},
    ],
    "meshes": meshes,
    "materials": [
        {"name": "crate", "pbrMetallicRoughness": {"baseColorFactor": [0.8, 0.45, 0.2, 1.0],
                                                   "metallicFactor": 0.0, "roughnessFactor": 0.6}},
        {"name": "ground", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0},
                                                    "metallicFactor": 0.0, "roughnessFactor": 0.9}},
    ],
    "textures": [{"source": 0, "sampler": 0}],
    "samplers": [{"magFilter": 9728, "minFilter": 9728, "wrapS": 10497, "wrapT": 10497}],
    "images": [{"uri": "checker.png"}],
    "accessors": accessors,
    "bufferViews": views,
    "buffers": [{"uri": "sample.bin", "byteLength": len(buffer)}],
}

with open(os.path.join(here, "sample.bin"), "wb") as f:
    f.write(buffer)
with open(os.path.join(here, "sample.gltf"), "w") as f:
    json.dump(gltf, f, indent=1)
    f.write("\n")


def png(width, height, pixel):
    raw = b"".join(b"\0" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


with open(os.path.join(here, "checker.png"), "wb") as f:
    f.write(png(8, 8, lambda x, y: (200, 200, 200) if (x // 4 + y // 4) % 2 == 0 else (90, 110, 90)))
