"""A generated city as a Wavefront OBJ (text, read by assimp): the input of the
tile-cook tests, the examples and bench/dask_scaling.py. Deterministic."""
from __future__ import annotations

import math
from typing import List


def _box(lines: List[str], first: int, name: str, cx: float, cz: float, w: float, h: float, d: float, n: int) -> int:
    """A box on the ground at (cx, cz), each face n x n quads; returns the vertices written."""
    lines.append(f"o {name}")
    written = 0
    faces = [((1, 0, 0), (0, 0, -1), (0, 1, 0)), ((-1, 0, 0), (0, 0, 1), (0, 1, 0)), ((0, 1, 0), (1, 0, 0), (0, 0, -1)),
             ((0, -1, 0), (1, 0, 0), (0, 0, 1)), ((0, 0, 1), (1, 0, 0), (0, 1, 0)), ((0, 0, -1), (-1, 0, 0), (0, 1, 0))]
    for nrm, u, v in faces:
        base = first + written
        for j in range(n + 1):
            for i in range(n + 1):
                a, b = i / n * 2 - 1, j / n * 2 - 1
                p = [nrm[k] + a * u[k] + b * v[k] for k in range(3)]
                lines.append(f"v {cx + p[0] * w / 2:.5f} {p[1] * h / 2 + h / 2:.5f} {cz + p[2] * d / 2:.5f}")
                lines.append(f"vn {nrm[0]} {nrm[1]} {nrm[2]}")
        written += (n + 1) * (n + 1)
        for j in range(n):
            for i in range(n):
                q = base + j * (n + 1) + i
                lines.append(f"f {q}//{q} {q + 1}//{q + 1} {q + n + 2}//{q + n + 2}")
                lines.append(f"f {q}//{q} {q + n + 2}//{q + n + 2} {q + n + 1}//{q + n + 1}")
    return written


def city_obj(blocks: int = 3, spacing: float = 24.0, subdivisions: int = 6, terrain_cells: int = 24) -> str:
    """blocks x blocks buildings `spacing` apart on a rolling terrain larger than any tile."""
    lines = ["# untold generated city (python/tests/city.py)"]
    first = 1
    half = blocks * spacing / 2
    for bz in range(blocks):
        for bx in range(blocks):
            h = 8 + 6 * ((bx * 7 + bz * 3) % 5)
            first += _box(lines, first, f"building_{bx}_{bz}", -half + (bx + 0.5) * spacing, -half + (bz + 0.5) * spacing,
                          10, h, 10, subdivisions)
    lines.append("o terrain")
    for j in range(terrain_cells + 1):
        for i in range(terrain_cells + 1):
            x = -half + 2 * half * i / terrain_cells
            z = -half + 2 * half * j / terrain_cells
            lines.append(f"v {x:.5f} {0.5 * math.sin(x * 0.05) * math.cos(z * 0.07) - 0.6:.5f} {z:.5f}")
            lines.append("vn 0 1 0")
    for j in range(terrain_cells):
        for i in range(terrain_cells):
            q = first + j * (terrain_cells + 1) + i
            r = q + terrain_cells + 1
            lines.append(f"f {q}//{q} {r}//{r} {q + 1}//{q + 1}")
            lines.append(f"f {q + 1}//{q + 1} {r}//{r} {r + 1}//{r + 1}")
    return "\n".join(lines) + "\n"


def write_city(path: str, **kwargs) -> str:
    with open(path, "w", encoding="ascii") as f:
        f.write(city_obj(**kwargs))
    return path
