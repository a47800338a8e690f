"""Dump every mesh of a file to numpy: OUT/<mesh>.npz with positions, normals,
tangents, uv0, uv1, colors (float32, decoded) and indices (uint32).

    python3 examples/python/dump_meshes.py FILE OUT_DIR
"""
import os
import sys

import numpy as np

import untold


def main(path: str, out_dir: str) -> int:
    asset = untold.open(path)
    os.makedirs(out_dir, exist_ok=True)
    for mesh in asset.meshes:
        decoded = asset.decode_vertices(mesh)      # a new float32 array
        indices = asset.indices(mesh)              # a read-only view of the file's bytes
        target = os.path.join(out_dir, f"{mesh.index:03d}_{mesh.name or 'mesh'}.npz")
        np.savez(target, positions=decoded["position"], normals=decoded["normal"], tangents=decoded["tangent"],
                 uv0=decoded["uv0"], uv1=decoded["uv1"], colors=decoded["color0"], indices=indices.astype(np.uint32))
        print(f"{target}: {mesh.vertex_count} vertices, {indices.size // 3} triangles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
