"""Measured scaling of the distributed tile cook (docs/distributed.md): the
same generated city cooked in one process (untold.cook_tiles) and on Dask
LocalClusters of 1 and 2 worker processes (untold.dask_cook), each checked
byte-identical to the single-process output. Prints a Markdown table. Not a
test: the figures depend on the machine and its load.

    PYTHONPATH=build/gcc/python/package /usr/bin/python3 bench/dask_scaling.py [--blocks 6] [--repeat 2]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python" / "tests"))

import untold  # noqa: E402
from untold import dask_cook  # noqa: E402
from city import write_city  # noqa: E402


def tree(root):
    root = pathlib.Path(root)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--blocks", type=int, default=6, help="city blocks per side (default 6)")
    p.add_argument("--subdivisions", type=int, default=12, help="quads per building face side (default 12)")
    p.add_argument("--tiles", default="grid:24")
    p.add_argument("--repeat", type=int, default=2, help="runs per configuration; the best is shown")
    a = p.parse_args()
    from dask.distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory(prefix="untold-scaling-") as tmp:
        src = write_city(os.path.join(tmp, "city.obj"), blocks=a.blocks, subdivisions=a.subdivisions,
                         terrain_cells=a.blocks * 8)
        best = {}
        start = time.monotonic()
        ref = untold.cook_tiles(src, os.path.join(tmp, "single"), tiles=a.tiles)
        seconds = time.monotonic() - start
        best["1 process (cook --tiles)"] = (seconds, None, None)
        expected = tree(os.path.join(tmp, "single"))
        triangles = ref.summary["source_triangles"]
        jobs = 0
        for workers in (1, 2):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
            client = Client(cluster)
            times = []
            for k in range(a.repeat):
                out = os.path.join(tmp, f"dask{workers}_{k}")
                plan_path = os.path.join(tmp, f"plan{workers}_{k}", "plan.json")
                start = time.monotonic()
                dask_cook.plan(src, out, plan_path, a.tiles)
                planned = time.monotonic() - start
                r = dask_cook.run_plan(plan_path, client=client, progress=False)
                times.append((planned + r["seconds"], planned, r["seconds"]))
                jobs = r["jobs"]
                assert tree(out) == expected, "dask output differs from the single-process cook"
                shutil.rmtree(out)
            best[f"Dask, {workers} worker process{'es' if workers > 1 else ''}"] = min(times)
            client.close()
            cluster.close()
    print(f"city: {a.blocks}x{a.blocks} buildings, {triangles} triangles, {a.tiles}, {jobs} jobs; "
          f"{os.cpu_count()} CPUs; best of {a.repeat} (plan included)\n")
    print("| run | seconds | plan (client: import, partition, pieces) | jobs | jobs' speed-up vs 1 worker |\n"
          "|---|---:|---:|---:|---:|")
    one = best["Dask, 1 worker process"][2]
    for name, (seconds, planned, jobs_seconds) in best.items():
        if planned is None:
            print(f"| {name} | {seconds:.2f} | | | |")
        else:
            print(f"| {name} | {seconds:.2f} | {planned:.2f} | {jobs_seconds:.2f} | {one / jobs_seconds:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
