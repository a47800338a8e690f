#!/usr/bin/env python3
"""Writes the demo world of docs/streaming.md: a tile manifest (sizes only, no
tile files, so `untold stream-sim` takes request sizes from the manifest) and
a camera path.

    python3 docs/streaming/demo_world.py OUTDIR
    untold stream-sim OUTDIR/scene.json --path OUTDIR/camera.csv \
        --bandwidth 100 --latency 40 --budget-mb 160 --svg docs/streaming/stream-sim.svg

24 x 24 tiles of 64 m; each tile 2..8 MiB with LOD1 (25 %) from 200 m, LOD2
(6 %) from 400 m and an HLOD (1 %) from 600 m; streaming radius 150 m, unload
250 m (prefetch 200 m). The camera drives a loop of 307 m radius (16 m/s) in 120 s,
then stops for 10 s. Deterministic: no randomness.
"""
import json
import math
import os
import sys

MiB = 1024 * 1024


def main(out):
    os.makedirs(out, exist_ok=True)
    n, size = 24, 64.0
    tiles = []
    for i in range(n):
        for j in range(n):
            b = int((2 + ((i * 7 + j * 13) % 7)) * MiB)  # 2..8 MiB
            cx, cz = (i + 0.5) * size, (j + 0.5) * size
            tid = f"tile_{i}_{j}"
            tiles.append({
                "tile_id": tid,
                "path_relative_to_manifest": f"tiles/{tid}.untold",
                "file_size_bytes": b,
                "bounds": {"min": [cx - size / 2, 0, cz - size / 2], "max": [cx + size / 2, 30, cz + size / 2]},
                "center": [cx, 0, cz],
                "lod_levels": [
                    {"path": f"lods/{tid}_lod1.untold", "switch_distance": 200, "file_size_bytes": b // 4},
                    {"path": f"lods/{tid}_lod2.untold", "switch_distance": 400, "file_size_bytes": b // 16},
                ],
                "hlod_levels": [{"path": f"hlods/{tid}_hlod.untold", "switch_distance": 600, "file_size_bytes": b // 100}],
            })
    manifest = {
        "version": 3,
        "streaming_defaults": {"streaming_radius": 150, "unload_radius": 250, "priority": 0},
        "tile_size": {"x": size, "y": 30, "z": size},
        "tiles": tiles,
    }
    with open(os.path.join(out, "scene.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    centre, radius = n * size / 2, n * size * 0.2
    with open(os.path.join(out, "camera.csv"), "w") as f:
        f.write("t,x,y,z\n")
        for k in range(121):  # one row a second: a loop of 2*pi*radius in 120 s
            a = 2 * math.pi * k / 120
            f.write(f"{k},{centre + radius * math.cos(a):.2f},1.8,{centre + radius * math.sin(a):.2f}\n")
        f.write(f"130,{centre + radius:.2f},1.8,{centre:.2f}\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
