#!/usr/bin/env python3
"""Writes the generated tables of docs/benchmarks.md from one bench/run.sh run.

    python3 bench/report.py OUTDIR [docs/benchmarks.md] [--only block,block]

OUTDIR holds results.json (untold_bench --benchmark_out, with repetitions:
the medians are used), machine.json (bench/run.sh), and optionally
writer_rss.json and gltfpack.txt. Every block of the page between
    <!-- BEGIN GENERATED: name -->  and  <!-- END GENERATED: name -->
is replaced by the table `name` below; the prose around the blocks is
hand-written and states no figure of its own. Benchmarks are picked by name
patterns, and every benchmark of the run that no table shows lands in the
"other" table, so a new benchmark appears on the page without editing this
file. With --only, just the named blocks are rewritten (a filtered run's:
those tables then name their run). Python 3 standard library only.
"""
import json
import os
import re
import sys

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


# ---- reading the run --------------------------------------------------------------------

class Run:
    """The medians of one untold_bench run, by run name, and which of them a table used."""

    def __init__(self, outdir):
        with open(os.path.join(outdir, "results.json")) as f:
            data = json.load(f)
        self.context = data.get("context", {})
        self.results = {}
        singles = {}
        for b in data["benchmarks"]:
            name = b.get("run_name", b["name"])
            if b.get("run_type") == "aggregate":
                if b.get("aggregate_name") == "median":
                    self.results[name] = b
            elif b.get("repetition_index", 0) == 0:
                singles.setdefault(name, b)
        for name, b in singles.items():  # a run without repetitions has no aggregates
            self.results.setdefault(name, b)
        self.order = list(self.results)
        self.used = set()
        self.machine = load_json(os.path.join(outdir, "machine.json")) or {}
        self.writer_rss = load_json(os.path.join(outdir, "writer_rss.json"))
        gltfpack = os.path.join(outdir, "gltfpack.txt")
        self.gltfpack = open(gltfpack).read() if os.path.exists(gltfpack) else None

    def get(self, name):
        """The median entry of benchmark `name` (marked as shown), or None."""
        b = self.results.get(name)
        if b is not None:
            self.used.add(name)
        return b

    def matching(self, pattern):
        """Names of the run matching regex `pattern` (search), in run order."""
        rx = re.compile(pattern)
        return [n for n in self.order if rx.search(n)]


def load_json(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def cpu(b):
    return b["cpu_time"] * UNIT[b.get("time_unit", "ns")] if b else None


def wall(b):
    return b["real_time"] * UNIT[b.get("time_unit", "ns")] if b else None


def counter(b, key):
    return b.get(key) if b else None


def ratio(a, b):
    return a / b if a is not None and b else None


def inverse(x):
    return 1 / x if x else None


# ---- formatting -------------------------------------------------------------------------

DASH = "–"


def sig(x, digits=3):
    """x with `digits` significant digits, thousands separated."""
    if x is None:
        return DASH
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - int(f"{abs(x):e}".split("e")[1]))
    return f"{x:,.{decimals}f}"


def seconds_text(s):
    if s is None:
        return DASH
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{sig(s / scale)} {unit}"
    return f"{sig(s / 1e-9)} ns"


def rate_text(bytes_per_second):
    if bytes_per_second is None:
        return DASH
    if bytes_per_second >= 1e9:
        return f"{sig(bytes_per_second / 1e9)} GB/s"
    return f"{sig(bytes_per_second / 1e6)} MB/s"


def mib_text(mib):
    if mib is None:
        return DASH
    return f"{sig(mib * 1024)} KiB" if mib < 1 else f"{sig(mib)} MiB"


def x(v, digits=3):
    return DASH if v is None else sig(v, digits)


def percent(v):
    return DASH if v is None else f"{sig(100 * v, 2)}%"


def table(header, rows, align=None):
    """A markdown table; `align` is a string of 'l'/'r' per column (default: first left)."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def no_results(what):
    return f"_Not in this run ({what})._"


# ---- the tables ---------------------------------------------------------------------------

def machine_table(run):
    m, c = run.machine, run.context
    quick = " **Quick run** (`UNTOLD_BENCH_QUICK=1`): no 1 GiB cases." if m.get("quick") else ""
    reps = m.get("repetitions", "?")
    how = "medians" if isinstance(reps, int) and reps > 1 else "one run each, no medians"
    caches = ", ".join(f"L{cache['level']}{' ' + cache['type'][0] if cache['type'] != 'Unified' else ''} "
                       f"{mib_text(cache['size'] / 2**20)}" + (f" (shared by {cache['num_sharing']})"
                                                               if cache.get("num_sharing", 1) > 1 else "")
                       for cache in c.get("caches", []))
    rows = [
        ("date", f"{m.get('date_utc', c.get('date', '?'))} UTC, commit `{m.get('commit', '?')}`"),
        ("CPU", f"{m.get('cpu', '?')}, {m.get('cpus', c.get('num_cpus', '?'))} CPUs"
                + (f", {m['hypervisor']} guest" if m.get("hypervisor") else "")
                + (f", {c['mhz_per_cpu']} MHz" if c.get("mhz_per_cpu") else "") + (f"; caches: {caches}" if caches else "")),
        ("memory", f"{m.get('memory_gib', '?')} GiB ({m.get('memory_available_gib', '?')} GiB available at the start)"),
        ("OS", m.get("os", "?")),
        ("compiler", f"{m.get('compiler', '?')}; {m.get('flags', '?')}"),
        ("libraries", f"lz4 {m.get('lz4', '?')}, zstd {m.get('zstd', '?')}, OpenSSL {m.get('openssl', '?')}, "
                      f"google-benchmark {m.get('benchmark', '?')} (Debian's build reports itself as "
                      f"\"{c.get('library_build_type', '?')}\": that is the timing harness, not the measured code)"),
        ("peers", f"tinygltf {m.get('tinygltf', '?')} (Debian's libtinygltf-dev), assimp {m.get('assimp', '?')}, "
                  f"cgltf {m.get('cgltf', 'not built')} (`UNTOLD_BENCH_CGLTF_DIR`), fastgltf "
                  f"{m.get('fastgltf', 'not built')} (`UNTOLD_BENCH_FASTGLTF_DIR`; simdjson {m.get('simdjson', '?')})"),
        ("load average", f"{m.get('load_average_start', '?')} at the start, {m.get('load_average_end', '?')} "
                         f"at the end ({m.get('cpus', '?')} CPUs)"),
        ("run", f"`bench/run.sh`, `--benchmark_repetitions={reps}`, {how}; the suite took "
                f"{sig((m.get('suite_seconds') or 0) / 60, 2)} min, the whole script "
                f"{sig((m.get('total_seconds') or 0) / 60, 2)} min.{quick}"),
    ]
    return table(("", ""), rows, "ll")


# Each goal: (measure, the figure at 86ea525 (measured elsewhere), goal, how this run measures it).
def goal_rows(run):
    def open_default_ratio(kind):
        big = run.results.get(f"open_default/{kind}/geometry_mb:1024/manual_time")
        small = run.results.get(f"open_default/{kind}/geometry_mb:1/manual_time")
        return counter(big, "vs_1mb"), ratio(cpu(big), cpu(small))

    plain_wall, plain_cpu = open_default_ratio("plain")
    digests_wall, digests_cpu = open_default_ratio("digests")
    nohash = counter(run.results.get("open_file_bench/file_warm/geometry_mb:1024/manual_time"), "vs_1mb")
    span = counter(run.results.get("open_file_bench/mmap_1gib_span_warm/geometry_mb:1/manual_time"), "vs_plain_mapping")
    one_gib = "no 1 GiB case in this run" if plain_wall is None and digests_wall is None else (
        f"digests {x(digests_wall)} wall, {x(digests_cpu)} CPU; without digests (contentHash) "
        f"{x(plain_wall)} wall; `verify_hash = false` {x(nohash)} wall; the 1 MiB file mapped in a "
        f"1 GiB span (same work, larger mapping) {x(span)} its plain mapping")

    deep_rows = [(n, counter(run.results.get(n), "vs_memcpy")) for n in run.matching(r"^(validate_deep|deep_)")
                 if counter(run.results[n], "vs_memcpy") is not None]
    deep = "; ".join(f"{x(v)} (`{n}`)" for n, v in deep_rows) or None

    fresh = run.results.get("BM_fresh_vertices/262144")
    views = inverse(counter(fresh, "vs_fresh_memcpy"))

    # Default options, uncompressed: write_<way>/none (google-benchmark appends
    # /real_time: bench_writer.cpp times wall time, writer and baselines alike).
    # vs_memcpy is wall against wall, cpu_vs_memcpy process CPU against CPU;
    # write_sha256 (one SHA-256 over the output's size) is the ceiling of any
    # writer with the content hash on.
    def writer_part(n):
        b = run.results.get(n)
        what = ("the ceiling with the content hash" if n.startswith("write_sha256")
                else f"{x(counter(b, 'writer_threads'), 1)} threads")
        return (f"{x(counter(b, 'vs_memcpy'))} (`{n.replace('/real_time', '')}`, {what}; "
                f"CPU {x(counter(b, 'cpu_vs_memcpy'))})")
    writer_names = [n for n in run.matching(r"^(write_\w+/none|write_sha256)(/real_time)?$")
                    if counter(run.results[n], "vs_memcpy") is not None]
    writer = "; ".join(writer_part(n) for n in writer_names) or None

    rss_counters = [(n, counter(run.results[n], "rss_vs_output")) for n in run.order
                    if counter(run.results[n], "rss_vs_output") is not None]
    rss_parts = [f"{x(v, 2)} (`{n}`)" for n, v in rss_counters]
    for r in run.writer_rss or []:
        rss_parts.append(f"{x(r['peak_rss_bytes'] / r['output_bytes'])} (`{r['command'].split(' -o ')[0]}`)")

    lz4 = inverse(counter(run.results.get("codec_scene/lz4_untold_open"), "vs_raw"))

    range_names = [n for n in run.order if re.search(r"load_all|range", n)
                   and any(k.startswith("vs_") or k.startswith("x_") for k in run.results[n])]
    range_parts = []
    for n in range_names:
        b = run.results.get(n)
        for k in sorted(b):
            if (k.startswith("vs_") or k.startswith("x_")) and isinstance(b[k], (int, float)):
                range_parts.append(f"{x(b[k])} ({short_name(n)})")

    # No cgltf here: what this run can say is the default open against the
    # peer it has (tinygltf) and against the no-hash open the issue measured
    # at 0.007x cgltf on its grid.
    default_vs_tiny, default_vs_nohash = [], []
    for n in run.matching(r"^load/untold_default/"):
        tiny = run.results.get(n.replace("untold_default", "tinygltf"))
        nohash = run.results.get(n.replace("untold_default", "untold_open"))
        if counter(tiny, "untold_default_ratio") is not None:
            default_vs_tiny.append(counter(tiny, "untold_default_ratio"))
        if ratio(cpu(run.results[n]), cpu(nohash)) is not None:
            default_vs_nohash.append(ratio(cpu(run.results[n]), cpu(nohash)))
    none = "no benchmark in this run"
    peer_note = (" (cgltf is not built here: see Peers)" if not default_vs_tiny else
                 f"; no cgltf here (see Peers). This run: default `open` / tinygltf {x(min(default_vs_tiny), 2)} to "
                 f"{x(max(default_vs_tiny), 2)}; default / no-hash `open` {x(min(default_vs_nohash))} to "
                 f"{x(max(default_vs_nohash))} (the issue measured the no-hash open at 0.007x cgltf on the grid)")
    def versus_cgltf(inp):
        v = counter(run.results.get(f"file/untold_default/{inp}/real_time"), "x_cgltf")
        return f"{x(v)} (`file/untold_default/{inp}`, wall; table Files)" if v is not None else None
    return [
        ("default `open_file`, grid, x cgltf full load", "2.36–3.28", "≤ 0.05", versus_cgltf("grid") or none + peer_note),
        ("default `open_file`, 2CylinderEngine, x cgltf", "3.33", "≤ 0.3",
         versus_cgltf("2CylinderEngine") or none + " (cgltf; 2CylinderEngine)"),
        ("default `open_file`, 1 GiB / 1 MiB", "916 (hash) / 1.23 (no hash)", "≤ 1.05", one_gib),
        ("deep checks, x memcpy (throughput)", "0.30–0.39", "≥ 0.6", deep or none),
        ("views -> new float arrays, x memcpy into a new buffer (time)", "2.5", "≤ 1.5",
         f"{x(views)} (`BM_fresh_vertices/262144`)" if views else none),
        ("writer, x memcpy, uncompressed (throughput, wall time)", "0.23", "≥ 0.5", writer or none),
        ("writer peak RSS / output size", "4.6", "≤ 2.5 incl. inputs", "; ".join(rss_parts) or none),
        ("lz4 open, x raw decode into fresh buffers (time)", "1.13", "≤ 1.03",
         f"{x(lz4)} (`codec_scene/lz4_untold_open`)" if lz4 else none),
        ("range `load_all` / whole-file deep open (time)", "~10", "≤ 1.2", "; ".join(range_parts) or none),
    ]


def short_name(name):
    """range_bench/load_all_pread_hash/geometry_mb:256/manual_time -> load_all_pread_hash, 256 MiB."""
    parts = [p for p in name.split("/")[1:] if p not in ("manual_time", "real_time")]
    return ", ".join(p.replace("geometry_mb:", "") + " MiB" if p.startswith("geometry_mb:") else p for p in parts)


def goals_table(run):
    return table(("measure", "issue 19 (86ea525, measured elsewhere)", "goal", "this run"), goal_rows(run), "lrrl")


def open_metadata_table(run):
    rows = []
    for meshes in (10, 100, 1000, 10000):
        prefix = run.get(f"open_metadata_memcpy_prefix/meshes:{meshes}")
        nohash = run.get(f"open_metadata/nohash/meshes:{meshes}")
        hashed = run.get(f"open_metadata/hash/meshes:{meshes}")
        if not (prefix or nohash):
            continue
        kib = counter(prefix, "metadata_kib")
        rows.append((f"{meshes:,}", mib_text(kib / 1024 if kib else None), seconds_text(cpu(prefix)),
                     seconds_text(cpu(nohash)), x(counter(nohash, "x_memcpy_prefix")),
                     x(counter(nohash, "ns_per_mesh")), seconds_text(cpu(hashed)),
                     x(counter(hashed, "x_memcpy_prefix"))))
    if not rows:
        return no_results("open_metadata")
    return table(("meshes", "metadata prefix", "memcpy prefix", "open, no hash", "x_memcpy_prefix", "ns per mesh",
                  "open, hash", "x_memcpy_prefix"), rows)


WAYS_IN = [
    ("file", "`open_file`, `verify_hash = false`"),
    ("mmap_no_willneed", "mmap without `posix_madvise(WILLNEED)` + `open`, no hash"),
    ("mmap_1gib_span", "the same, mapped at the start of a 1 GiB address span (as a 1 GiB file is)"),
    ("streamed", "`streamed_asset` over `file_range_source`, no hash"),
    ("file_hash", "`open_file`, `verify_hash = true` (whole-file contentHash)"),
    ("read_whole", "baseline: `read_file` of the whole file"),
]


def way_name(key, temperature):
    base = key.replace("_hash", "")
    return f"open_file_bench/{base}_{temperature}{'_hash' if key.endswith('_hash') else ''}"


def open_warm_table(run):
    rows = []
    for key, label in WAYS_IN:
        small = run.get(f"{way_name(key, 'warm')}/geometry_mb:1/manual_time")
        big = run.get(f"{way_name(key, 'warm')}/geometry_mb:1024/manual_time")
        if not (small or big):
            continue
        rows.append((label, seconds_text(wall(small)), seconds_text(wall(big)), x(counter(big, "vs_1mb")),
                     seconds_text(cpu(small)), seconds_text(cpu(big)), x(ratio(cpu(big), cpu(small)))))
    if not rows:
        return no_results("open_file_bench/*_warm")
    sizes = [counter(run.results.get(f"open_file_bench/file_warm/geometry_mb:{mb}/manual_time"), "file_mb")
             for mb in (1, 1024)]
    return (f"Files: {mib_text(sizes[0])} and {mib_text(sizes[1])}.\n\n" +
            table(("way in", "1 MiB wall", "1 GiB wall", "vs_1mb (wall)", "1 MiB CPU", "1 GiB CPU",
                   "1 GiB / 1 MiB (CPU)"), rows))


def integrity_table(run):
    rows = []
    for kind, label in (("plain", "file written with `block_digests = false` (contentHash at open)"),
                        ("digests", "file written with default options (block digests)"),
                        ("digests_verify_all", "with block digests + `verify_all`")):
        small = run.get(f"open_default/{kind}/geometry_mb:1/manual_time")
        big = run.get(f"open_default/{kind}/geometry_mb:1024/manual_time")
        if not (small or big):
            continue
        rows.append((label, seconds_text(wall(small)), seconds_text(cpu(small)), seconds_text(wall(big)),
                     seconds_text(cpu(big)), x(counter(big, "vs_1mb")), x(ratio(cpu(big), cpu(small))),
                     x(counter(big, "vs_no_digests"))))
    if not rows:
        return no_results("open_default")
    sizes = [counter(run.results.get(f"open_default/{k}/geometry_mb:1024/manual_time"), "file_mb")
             for k in ("plain", "digests")]
    text = table(("default `open_file`", "1 MiB wall", "1 MiB CPU", "1 GiB wall", "1 GiB CPU",
                  "vs_1mb (wall)", "1 GiB / 1 MiB (CPU)", "vs_no_digests (wall)"), rows)
    if all(sizes):
        text += f"\n\nThe 1 GiB files: {mib_text(sizes[0])} without digests, {mib_text(sizes[1])} with them."
    return text


def cold_table(run):
    rows = []
    for key, label in WAYS_IN:
        small = run.get(f"{way_name(key, 'cold')}/geometry_mb:1/manual_time")
        big = run.get(f"{way_name(key, 'cold')}/geometry_mb:1024/manual_time")
        if not (small or big):
            continue
        resident = counter(big, "resident_500ms_after")
        size = counter(big, "file_mb")
        rows.append((label, seconds_text(wall(small)), seconds_text(wall(big)), x(counter(big, "vs_warm")),
                     x(counter(big, "vs_read")),
                     DASH if resident is None else f"{percent(resident)} ({mib_text(resident * size)})",
                     x(counter(big, "resident_after_drop"))))
    if not rows:
        return no_results("open_file_bench/*_cold")
    return table(("way in", "1 MiB cold", "1 GiB cold", "vs_warm", "vs_read", "resident 500 ms after",
                  "resident after drop"), rows)


def validate_table(run):
    rows = []
    for name in run.matching(r"^validate_"):
        b = run.get(name)
        rows.append((f"`{name}`", rate_text(counter(b, "bytes_per_second")), seconds_text(cpu(b)),
                     x(counter(b, "vs_memcpy"))))
    return table(("benchmark", "throughput", "CPU per pass", "vs_memcpy"), rows) if rows else no_results("validate_")


def throughput_rows(run, pattern, ratio_key, extra=()):
    rows = []
    for name in run.matching(pattern):
        b = run.get(name)
        rows.append([f"`{name}`", rate_text(counter(b, "bytes_per_second")), seconds_text(cpu(b)),
                     x(counter(b, ratio_key))] + [x(counter(b, k)) for k in extra])
    return rows


def codecs_table(run):
    rows = throughput_rows(run, r"^(codec_|sha256_)", "vs_raw", ("ratio",))
    if not rows:
        return no_results("codec|sha256")
    return table(("benchmark", "throughput (decoded bytes)", "CPU per iteration", "vs_raw", "stored / raw"), rows)


def vertex_table(run):
    rows = throughput_rows(run, r"^BM_vertex_", "vs_memcpy")
    if not rows:
        return no_results("vertex")
    return table(("benchmark (path / vertices)", "throughput (input bytes)", "CPU per iteration", "vs_memcpy"), rows)


def fresh_table(run):
    rows = []
    for name in run.matching(r"^BM_fresh_"):
        b = run.get(name)
        v = counter(b, "vs_fresh_memcpy")
        rows.append((f"`{name}`", rate_text(counter(b, "bytes_per_second")), seconds_text(cpu(b)), x(v),
                     x(inverse(v))))
    if not rows:
        return no_results("BM_fresh_")
    return table(("benchmark (output bytes / vertices / indices)", "throughput (output bytes)", "CPU per iteration",
                  "vs_fresh_memcpy", "time / floor"), rows)


def gpu_table(run):
    rows = []
    for name in run.matching(r"^gpu_"):
        b = run.get(name)
        rows.append((f"`{name}`", seconds_text(cpu(b)), seconds_text(wall(b)),
                     seconds_text(None if counter(b, "us_per_mesh") is None else counter(b, "us_per_mesh") * 1e-6),
                     rate_text(counter(b, "bytes_per_second")), x(counter(b, "vs_memcpy"))))
    if not rows:
        return no_results("gpu_")
    return table(("benchmark", "CPU per iteration", "wall per iteration", "per mesh", "throughput", "vs_memcpy"), rows)


def writer_table(run):
    names = run.matching(r"^(write_|writer_|BM_writer)")
    counters = []
    for name in names:
        for k, v in run.results[name].items():
            if k not in STANDARD_KEYS and isinstance(v, (int, float)) and k not in counters:
                counters.append(k)
    rows = []
    for name in names:
        b = run.get(name)
        # bench_writer.cpp registers UseRealTime(): throughput and ratios are
        # wall-based; cpu_time would be the main thread's alone.
        rows.append([f"`{name.replace('/real_time', '')}`", rate_text(counter(b, "bytes_per_second")),
                     seconds_text(wall(b))] + [x(counter(b, k)) for k in counters])
    parts = []
    if rows:
        parts.append(table(["benchmark", "throughput (output bytes, wall)", "wall per iteration"] + counters, rows))
    if run.writer_rss:
        parts.append(table(("peak RSS of one process (`/usr/bin/time`)", "command", "peak RSS", "output",
                            "peak RSS / output", "wall"),
                           [(r["label"], f"`{r['command']}`", mib_text(r["peak_rss_bytes"] / 2**20),
                             mib_text(r["output_bytes"] / 2**20), x(r["peak_rss_bytes"] / r["output_bytes"]),
                             seconds_text(r["seconds"])) for r in run.writer_rss], "llrrrr"))
    return "\n\n".join(parts) if parts else no_results("write_")


def range_table(run):
    rows = []
    for name in run.matching(r"^range_"):
        b = run.get(name)
        ratios = ", ".join(f"{k} {x(v)}" for k, v in b.items() if (k.startswith("vs_") or k.startswith("x_"))
                           and isinstance(v, (int, float)))
        rows.append((f"`{name}`", seconds_text(wall(b)), seconds_text(cpu(b)), rate_text(counter(b, "bytes_per_second")),
                     ratios or DASH))
    if not rows:
        return no_results("range_")
    return table(("benchmark", "wall per load", "CPU per load", "throughput (file bytes, wall)", "ratio (wall)"),
                 rows)


PEERS = ("untold_open", "untold_default", "untold_deep", "untold_deep_decode", "tinygltf", "assimp")


def peers_table(run):
    cases = []
    for name in run.matching(r"^load/untold_open/"):
        m = re.match(r"^load/untold_open/meshes:(\d+)/geometry_mb:(\d+)$", name)
        if m:
            cases.append((int(m.group(1)), int(m.group(2))))
    cases.sort(key=lambda c: (c[0] != 1000, c[0], c[1]))
    rows = []
    summary = {k: [] for k in ("open/tinygltf", "default/tinygltf", "deep/tinygltf", "open/assimp", "decode/assimp")}
    for meshes, mb in cases:
        e = {p: run.get(f"load/{p}/meshes:{meshes}/geometry_mb:{mb}") for p in PEERS}
        tiny, assimp = e["tinygltf"], e["assimp"]
        values = {"open/tinygltf": counter(tiny, "untold_open_ratio"),
                  "default/tinygltf": counter(tiny, "untold_default_ratio"),
                  "deep/tinygltf": counter(tiny, "untold_deep_ratio"),
                  "open/assimp": counter(assimp, "untold_open_ratio"),
                  "decode/assimp": counter(assimp, "untold_decode_ratio")}
        for k, v in values.items():
            if v is not None:
                summary[k].append(v)
        glb = counter(tiny, "file_mb") or counter(assimp, "file_mb")
        rows.append([f"{meshes:,}", f"{mb} MiB", mib_text(counter(e["untold_open"], "file_mb")), mib_text(glb)] +
                    [seconds_text(cpu(e[p])) for p in PEERS] + [x(v, 2) for v in values.values()])
    if not rows:
        return no_results("^load/")
    text = table(["meshes", "geometry", ".untold", ".glb", "untold open", "untold default", "untold deep",
                  "deep + decode", "tinygltf", "assimp", "open / tinygltf", "default / tinygltf", "deep / tinygltf",
                  "open / assimp", "decode / assimp"],
                 rows)
    ranges = [f"{k} {x(min(v), 2)} to {x(max(v), 2)}" for k, v in summary.items() if v]
    if ranges:
        text += "\n\nRanges over the scenes (untold's CPU time / the peer's): " + "; ".join(ranges) + "."
    return text


# Files side by side with cgltf (bench_peers.cpp, file/*): (benchmark, what).
FILE_ROWS = [
    ("cgltf", "cgltf_parse_file + cgltf_load_buffers + cgltf_validate (whole load)"),
    ("fastgltf", "fastgltf `MappedGltfFile` + `Parser::loadGltf` + `validate`"),
    ("untold_default", "`open_file`, default options"),
    ("untold_verified/threads:1", "`open_file`, `integrity::full` + deep checks, 1 thread"),
    ("untold_verified/threads:2", "the same, 2 threads (`thread_pool`)"),
    ("untold_strict/threads:1", "`open_file`, `integrity::strict` + deep checks (the contentHash over the file too), 1 thread"),
    ("untold_strict/threads:2", "the same, 2 threads"),
    ("decode_floor", "memcpy into new arrays of the decoded size (the floor)"),
    ("decode", "every mesh decoded into new position, normal, tangent, uv0 arrays"),
]
FILE_INPUTS = ["grid", "2CylinderEngine"]


def file_entry(run, what, inp):
    return run.get(f"file/{what.split('/')[0]}/{inp}/{'/'.join(what.split('/')[1:]) + '/' if '/' in what else ''}real_time")


def files_table(run):
    rows = []
    for inp in FILE_INPUTS:
        base = file_entry(run, "cgltf", inp)
        for what, text in FILE_ROWS:
            b = file_entry(run, what, inp)
            if b is None:
                continue
            rows.append([inp, text, seconds_text(wall(b)), seconds_text(counter(b, "cpu_ms") and counter(b, "cpu_ms") / 1e3),
                         x(counter(b, "x_cgltf")), x(ratio(counter(b, "cpu_ms"), counter(base, "cpu_ms"))),
                         x(counter(b, "x_fastgltf")), x(counter(b, "x_floor"))])
    if not rows:
        return no_results("^file/")
    text = table(["input", "load", "wall", "CPU (all threads)", "x cgltf (wall)", "x cgltf (CPU)", "x fastgltf (wall)",
                  "x floor"], rows, "llrrrrrr")
    goals = []
    for inp in FILE_INPUTS:
        v = counter(file_entry(run, "untold_verified/threads:2", inp), "x_cgltf")
        d = counter(file_entry(run, "untold_strict/threads:2", inp), "x_cgltf")
        f = counter(file_entry(run, "decode", inp), "x_floor")
        if v is not None:
            goals.append(f"{inp}: verified load, 2 threads, {x(v)}x cgltf (goal ≤ 0.5; with `strict`'s serial "
                         f"contentHash pass as well: {x(d)}x); decode {x(f)}x its floor (goal ≤ 1.3)")
    if goals:
        text += "\n\nGoals of issue 30 in this run (wall time): " + "; ".join(goals) + "."
    return text


# Foreign formats: (benchmark, what, its floor in the same run).
FOREIGN = [
    ("u3d/mdl_open", "Urho3D `.mdl` open (structure, views)", "u3d/mdl_memcpy"),
    ("u3d/mdl_open_deep", "Urho3D `.mdl` open + deep checks", "u3d/mdl_memcpy"),
    ("u3d/pak_extract", "Urho3D `.pak` extract (read, LZ4, SDBM) into a `std::vector`", "u3d/pak_lz4_raw"),
    ("u3d/pak_extract_into", "Urho3D `.pak` extract into the caller's buffer (`extract_entry_into`)", "u3d/pak_lz4_raw"),
    ("u3d/pak_sdbm", "Urho3D `.pak`: the SDBM checksums alone", "u3d/pak_lz4_raw"),
    ("udm_parse_model", "UDM `open_document` (all checks + LZ4)", "udm_raw_lz4_decode"),
    ("udm_extract_positions", "UDM PMDL position extraction", "udm_memcpy_vertices"),
    ("udm_import_model", "UDM `import_pmdl` from bytes", "udm_raw_lz4_decode"),
    ("udm_fresh_streams", "UDM import's output alone: the neutral mesh's vectors, allocated and zero-filled",
     "udm_raw_lz4_decode"),
    ("udm_check_values", "UDM `check_pmdl_values` (finite positions, uvs) on the parsed model", "udm_raw_lz4_decode"),
    ("udm_parse_tree_small", "UDM parse of a small property tree", None),
]


def foreign_table(run):
    rows = []
    for name, label, floor in FOREIGN:
        b = run.get(name)
        if not b:
            continue
        f = run.get(floor) if floor else None
        rows.append((label, f"`{name}`", seconds_text(cpu(b)),
                     f"`{floor}` {seconds_text(cpu(f))}" if f else DASH, x(ratio(cpu(b), cpu(f)))))
    for name in run.matching(r"^assetc_open/"):
        b = run.get(name)
        size = name.rsplit("/", 1)[1]
        floor = run.get(f"assetc_memcpy/{size}")
        kind = "open + deep checks" if "/deep/" in name else "open (structure)"
        grid = f"{size}² grid" + (" (the fixed cost: 4 vertices, 2 triangles)" if size == "2" else "")
        rows.append((f"assetc `.hmesh` {kind}, {grid}", f"`{name}`", seconds_text(cpu(b)),
                     f"`assetc_memcpy/{size}` {seconds_text(cpu(floor))}" if floor else DASH,
                     x(ratio(cpu(b), cpu(floor)))))
    for name in run.matching(r"^assetc_build_compile/"):
        b = run.get(name)
        rows.append((f"`untold build`, full compile, {sig(counter(b, 'triangles'))} triangles", f"`{name}`",
                     f"{seconds_text(wall(b))} wall", DASH,
                     f"{sig(counter(b, 'triangles_per_s'))} triangles/s"))
    for name in run.matching(r"^assetc_build_meshlets_compiler_stage/"):
        b = run.get(name)
        floor = run.get(name.replace("compiler_stage", "meshoptimizer_alone"))
        rows.append(("meshlet stage of `untold build`", f"`{name}`", seconds_text(cpu(b)),
                     f"`meshopt_buildMeshlets` alone {seconds_text(cpu(floor))}" if floor else DASH,
                     x(ratio(cpu(b), cpu(floor)))))
    if not rows:
        return no_results("u3d|udm|assetc")
    return (table(("benchmark", "name", "time (CPU)", "floor in the same run (CPU)", "time / floor"), rows, "llrlr")
            + "\n\n" + run_line(run))


def run_line(run):
    """Which run a table's figures come from (tables a filtered run rewrites alone carry it)."""
    m = run.machine
    return (f"Run: {m.get('date_utc', '?')} UTC, commit `{m.get('commit', '?')}`, "
            f"`--benchmark_repetitions={m.get('repetitions', '?')}` (medians), load average "
            f"{m.get('load_average_start', '?')} at the start and {m.get('load_average_end', '?')} at the end "
            f"({m.get('cpus', '?')} CPUs).")


# Issue 30 item 4: (measure, the figure (docs/benchmarks.md at 4f5afda), goal,
# [(benchmark, floor)] whose CPU-time ratios this run shows).
FOREIGN_GOALS = [
    ("Urho3D `.mdl` open + deep checks, x memcpy of the file (time)", "4.6", "≤ 1.5",
     [("u3d/mdl_open_deep", "u3d/mdl_memcpy")]),
    ("assetc `.hmesh` open + deep checks, x memcpy of the file (time), 512² and above", "2.33 (512²)", "≤ 1.5",
     [("assetc_open/deep/512", "assetc_memcpy/512"), ("assetc_open/deep/2048", "assetc_memcpy/2048")]),
    ("`pak extract`, x raw LZ4 of the same blocks (time)", "1.56", "≤ 1.1",
     [("u3d/pak_extract", "u3d/pak_lz4_raw"), ("u3d/pak_extract_into", "u3d/pak_lz4_raw"),
      ("u3d/pak_sdbm", "u3d/pak_lz4_raw")]),
    ("UDM `import_pmdl`, x raw LZ4 of the same arrays (time)", "1.57", "≤ 1.2",
     [("udm_import_model", "udm_raw_lz4_decode"), ("udm_parse_model", "udm_raw_lz4_decode"),
      ("udm_fresh_streams", "udm_raw_lz4_decode"), ("udm_check_values", "udm_raw_lz4_decode")]),
]


def foreign_goals_table(run):
    rows = []
    for measure, before, goal, pairs in FOREIGN_GOALS:
        parts = []
        for name, floor in pairs:
            b, f = run.get(name), run.get(floor)
            if b and f:
                parts.append(f"{x(ratio(cpu(b), cpu(f)))} (`{name}`)")
        rows.append((measure, before, goal, "; ".join(parts) or "no benchmark in this run"))
    fixed = run.get("assetc_open/deep/2")
    rows.append(("assetc `.hmesh` open + deep checks, fixed cost (a 2² grid: 4 vertices, 2 triangles)", DASH,
                 "≤ 20 us", f"{seconds_text(cpu(fixed))} (`assetc_open/deep/2`)" if fixed else "no benchmark in this run"))
    return table(("measure", "issue 30", "goal", "this run (CPU time / the floor's)"), rows, "lrrl") + "\n\n" + run_line(run)


def planner_table(run):
    tick = run.get("BM_streaming_planner_tick")
    floor = run.get("BM_streaming_distance_pass")
    if not tick:
        return no_results("BM_streaming")
    return table(("benchmark", "CPU per tick", "floor: distance pass", "x_distance_pass", "actions per tick",
                  "resident"),
                 [("planner tick, 10,000 tiles", seconds_text(cpu(tick)), seconds_text(cpu(floor)),
                   x(counter(tick, "x_distance_pass")), x(counter(tick, "actions_per_tick")),
                   mib_text(counter(tick, "resident_MiB")))])


def gltfpack_table(run):
    if not run.gltfpack:
        return no_results("scripts/bench-gltfpack.sh did not run or failed: it needs npm and the untold CLI; "
                          "`UNTOLD_BENCH_GLTFPACK=0` skips it")
    blocks = [b.strip().splitlines() for b in run.gltfpack.strip().split("\n\n") if b.strip()]
    out = []
    for lines in blocks:
        rows, notes = [], []
        wire = "bytes on the wire" in lines[0]
        for line in lines[2:]:
            cols = line.split()
            if wire and len(cols) == 8 and cols[1].isdigit():
                rows.append((cols[0],) + tuple(f"{int(c):,}" for c in cols[1:6]) + (cols[6], cols[7]))
            elif wire and line.startswith("total") and len(cols) >= 8:
                rows.append(("**total** (rows both wrote)", DASH) + tuple(f"**{int(c):,}**" for c in cols[-6:-2]) +
                            (f"**{cols[-2]}**", f"**{cols[-1]}**"))
            elif not wire and len(cols) == 7 and cols[1].isdigit():
                rows.append((cols[0], f"{int(cols[1]):,}", f"{int(cols[2]):,}", f"{int(cols[3]):,}", cols[4], cols[5],
                             cols[6]))
            elif cols:
                notes.append(line.strip())
        header = (("model", "gltfpack -cc", "+ zstd -19", "untold zstd:19", "meshopt+zstd:19",
                   "quantized + meshopt+zstd:19", "quantized / gltfpack+zstd", "meshopt+zstd / zstd:19") if wire else
                  ("model", "gltfpack -cc (B)", "untold (B)", "untold + images (B)", "ratio", "gltfpack ms",
                   "untold ms"))
        out.append(f"{lines[0]} (untold: the Release build of this run).\n\n" + table(header, rows) +
                   "".join(f"\n\n{note}" for note in notes))
    return "\n\n".join(out)


STANDARD_KEYS = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
                 "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
                 "aggregate_name", "aggregate_unit", "bytes_per_second", "items_per_second", "label",
                 "error_occurred", "error_message"}


def other_table(run):
    """Every benchmark of the run that no table above showed (new ones land here)."""
    rows = []
    for name in run.order:
        if name in run.used:
            continue
        b = run.results[name]
        counters = ", ".join(f"{k} {x(v)}" for k, v in b.items()
                             if k not in STANDARD_KEYS and isinstance(v, (int, float)))
        if b.get("bytes_per_second"):
            counters = f"{rate_text(b['bytes_per_second'])}" + (", " + counters if counters else "")
        rows.append((f"`{name}`", seconds_text(cpu(b)), seconds_text(wall(b)), counters or DASH))
    if not rows:
        return "_Every benchmark of this run is in a table above._"
    return table(("benchmark", "CPU", "wall", "counters"), rows, "lrrl")


# Order matters: "other" shows what the tables before it did not.
TABLES = [
    ("machine", machine_table), ("goals", goals_table), ("open_metadata", open_metadata_table),
    ("open_warm", open_warm_table), ("integrity", integrity_table), ("cold", cold_table),
    ("validate", validate_table), ("range", range_table), ("codecs", codecs_table), ("vertex", vertex_table), ("fresh", fresh_table),
    ("gpu", gpu_table), ("writer", writer_table), ("peers", peers_table), ("files", files_table),
    ("foreign_goals", foreign_goals_table),
    ("foreign", foreign_table),
    ("planner", planner_table), ("gltfpack", gltfpack_table), ("other", other_table),
]

BLOCK = re.compile(r"(<!-- BEGIN GENERATED: ([a-z_]+) -->\n).*?(<!-- END GENERATED: \2 -->)", re.S)


def main():
    args = sys.argv[1:]
    only = None
    if len(args) >= 2 and args[-2] == "--only":  # rewrite just these blocks (a filtered run's)
        only = set(args[-1].split(","))
        args = args[:-2]
    if len(args) not in (1, 2):
        sys.exit("usage: report.py OUTDIR [docs/benchmarks.md] [--only block,block]")
    run = Run(args[0])
    doc = args[1] if len(args) == 2 else "docs/benchmarks.md"
    with open(doc) as f:
        text = f.read()
    present = {m.group(2) for m in BLOCK.finditer(text)}
    generated = {}
    for name, make in TABLES:  # all of them, in order, so "other" knows what the rest used
        generated[name] = make(run).rstrip() + "\n"
    unknown = present - set(generated)
    if unknown:
        sys.exit(f"{doc}: unknown generated block(s): {', '.join(sorted(unknown))}")
    for name in generated:
        if name not in present:
            print(f"report.py: {doc} has no block '{name}'", file=sys.stderr)
    if only is not None:
        if only - set(generated):
            sys.exit(f"report.py: unknown block(s): {', '.join(sorted(only - set(generated)))}")
        present &= only
    text = BLOCK.sub(lambda m: m.group(1) + generated[m.group(2)] + m.group(3) if m.group(2) in present else m.group(0),
                     text)
    with open(doc, "w") as f:
        f.write(text)
    print(f"report.py: {len(present)} blocks of {doc} written from {args[0]}")


if __name__ == "__main__":
    main()
