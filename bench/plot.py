#!/usr/bin/env python3
"""Plots load time against file size (and against mesh count) for untold and
the peers, from untold_bench's JSON output (run with --benchmark_repetitions
so there are medians; single runs are used when there are none).

    bench/run.sh       # runs the suite and this script (docs/bench/open_time.png)
    python3 bench/plot.py docs/bench/results.json docs/bench/open_time.png

Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

SERIES = [  # benchmark family, label, style
    ("load/untold_open", "untold open (records validated, zero-copy)", "o-"),
    ("load/untold_deep", "untold open + deep checks", "s-"),
    ("load/untold_deep_decode", "untold deep + decode to float", "^-"),
    ("load/tinygltf", "tinygltf (.glb) + accessor checks", "D--"),
    ("load/assimp", "assimp (.glb), ValidateDataStructure", "v--"),
]


def medians(path):
    """run_name -> benchmark entry (the median aggregate when there is one)."""
    with open(path) as f:
        data = json.load(f)
    runs, singles = {}, {}
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                runs[name] = b
        elif b.get("repetition_index", 0) == 0:
            singles.setdefault(name, b)
    for name, b in singles.items():
        runs.setdefault(name, b)
    return data.get("context", {}), runs


def seconds(b, clock):
    return b[clock] * UNIT[b.get("time_unit", "ns")]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot.py results.json out.png")
    context, runs = medians(sys.argv[1])
    pattern = re.compile(r"^(load/[a-z_]+)/meshes:(\d+)/geometry_mb:(\d+)$")
    by_size, by_meshes = {}, {}
    for name, b in runs.items():
        m = pattern.match(name)
        if not m:
            continue
        family, meshes, mb = m.group(1), int(m.group(2)), int(m.group(3))
        point = (b["file_mb"], seconds(b, "cpu_time") * 1e3)
        if meshes == 1000:
            by_size.setdefault(family, []).append(point)
        if mb == 16:
            by_meshes.setdefault(family, []).append((meshes, point[1]))

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 6.2))
    for family, label, style in SERIES:
        if family in by_size:
            xs, ys = zip(*sorted(by_size[family]))
            left.plot(xs, ys, style, label=label)
        if family in by_meshes:
            xs, ys = zip(*sorted(by_meshes[family]))
            right.plot(xs, ys, style, label=label)
    # The same 1000-mesh metadata mapped from disk (page cache warm), 1 MiB and 1 GiB of geometry.
    for prefix, label, style in (
            ("open_file_bench/file_warm/", "untold open_file, mmap, warm (wall time)", "*:"),
            ("open_file_bench/file_warm_hash/", "untold open_file + content hash, warm (wall time)", "X:"),
            ("open_default/digests/", "untold open_file, default options, block digests, warm (wall time)", "P:"),
            ("open_default/plain/", "untold open_file, default options, no block digests, warm (wall time)", "h:")):
        warm = [(b["file_mb"], seconds(b, "real_time") * 1e3) for name, b in runs.items() if name.startswith(prefix)]
        if warm:
            xs, ys = zip(*sorted(warm))
            left.plot(xs, ys, style, color="black", markersize=10, label=label)

    left.set_title("Load time vs file size (1000 meshes)")
    left.set_xlabel("file size (MiB; a .glb is larger than the .untold of the same scene)")
    right.set_title("Load time vs mesh count (16 MiB of geometry)")
    right.set_xlabel("meshes")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylabel("time per load (ms, median CPU time)")
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.suptitle("untold vs glTF loaders, same scenes, same run ({}, {} CPUs, load avg {:.1f})".format(
        context.get("host_name", "?"), context.get("num_cpus", "?"),
        (context.get("load_avg") or [0])[0]), fontsize=10)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
