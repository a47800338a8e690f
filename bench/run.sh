#!/usr/bin/env bash
# bench/run.sh [OUTDIR] - the one benchmark run docs/benchmarks.md quotes
# (issue 19 item 7). It
#   1. configures and builds untold_bench, untold_make_scene and the untold CLI
#      in Release in their own build directory ($UNTOLD_BENCH_BUILD_DIR,
#      default build/bench),
#   2. records the machine (CPU, cores, memory, load average at the start and
#      the end, kernel, compiler, library versions, commit, date) in
#      OUTDIR/machine.json,
#   3. runs untold_bench once with --benchmark_repetitions (medians) into
#      OUTDIR/results.json (with UNTOLD_BENCH_1GIB=1: the 1 GiB in-memory
#      cases), the writer's peak RSS for a 1 GiB file (untold_write_driver and
#      untold_make_scene under /usr/bin/time) into OUTDIR/writer_rss.json, and
#      scripts/bench-gltfpack.sh (when npm is there) into OUTDIR/gltfpack.txt,
#   4. writes every generated table of docs/benchmarks.md (bench/report.py,
#      python3 standard library only) and the plot OUTDIR/open_time.png
#      (bench/plot.py, python3-matplotlib; skipped with a message without it).
#
# OUTDIR defaults to docs/bench. Environment:
#   UNTOLD_BENCH_REPETITIONS  repetitions per benchmark (default 3; medians)
#   UNTOLD_BENCH_QUICK=1      leave out the 1 GiB files (every geometry_mb:1024
#                             case and the writer RSS runs): about half the
#                             time of the full run; the page says so
#   UNTOLD_BENCH_FILTER       a --benchmark_filter regex instead (debugging)
#   UNTOLD_BENCH_BLOCKS       only these generated blocks of the page (comma-
#                             separated, e.g. foreign,foreign_goals with a
#                             filter): the rest keep their run's figures
#   UNTOLD_BENCH_GLTFPACK=0   skip the gltfpack comparison (it installs
#                             gltfpack from npm into a temporary prefix)
#   UNTOLD_BENCH_DIR          where the generated scene files go (default
#                             /tmp/untold-bench; ~2.2 GB for the 1 GiB files)
#   UNTOLD_BENCH_DOC          the page to update (default docs/benchmarks.md)
#   UNTOLD_BENCH_SKIP_BUILD=1 run the binaries already in the build directory
#   UNTOLD_BENCH_CGLTF_DIR    a checkout of github.com/jkuhlmann/cgltf (the
#                             directory holding cgltf.h): adds the file/cgltf
#                             rows (bench_peers.cpp). Fetched by you, never
#                             vendored: e.g. git clone --depth 1
#                             https://github.com/jkuhlmann/cgltf /tmp/cgltf
#   UNTOLD_BENCH_FASTGLTF_DIR a checkout of github.com/spnda/fastgltf: adds the
#                             file/fastgltf rows; needs libsimdjson-dev
#                             (Debian's 3.0.1 builds it)
#   UNTOLD_BENCH_CYLINDER_GLB 2CylinderEngine.glb (default: Debian
#                             assimp-testmodels' copy); this script cooks it
#                             into $UNTOLD_BENCH_DIR/2CylinderEngine.untold
#
# Nothing here is part of the library's build: peers and tools are found or
# fetched by this script only.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=${1:-docs/bench}
build=${UNTOLD_BENCH_BUILD_DIR:-build/bench}
reps=${UNTOLD_BENCH_REPETITIONS:-3}
quick=${UNTOLD_BENCH_QUICK:-0}
doc=${UNTOLD_BENCH_DOC:-docs/benchmarks.md}
mkdir -p "$out"
started=$(date +%s)

if [[ ${UNTOLD_BENCH_SKIP_BUILD:-0} != 1 ]]; then
  echo "== configure and build ($build, Release)"
  mkdir -p "$build"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUNTOLD_BUILD_BENCH=ON -DUNTOLD_BUILD_TESTS=OFF \
    -DUNTOLD_BUILD_EXAMPLES=OFF -DUNTOLD_BUILD_TOOLS=ON -DUNTOLD_DEVELOPER_MODE=OFF \
    -DUNTOLD_BENCH_CGLTF_DIR="${UNTOLD_BENCH_CGLTF_DIR:-}" \
    -DUNTOLD_BENCH_FASTGLTF_DIR="${UNTOLD_BENCH_FASTGLTF_DIR:-}" > "$build/run-configure.log"
  targets=(untold_bench untold_make_scene untold_cli)
  if grep -q untold_write_driver bench/CMakeLists.txt; then targets+=(untold_write_driver); fi
  cmake --build "$build" --target "${targets[@]}"
fi

# ---- the machine ------------------------------------------------------------------
json_string() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
pkg_version() { pkg-config --modversion "$1" 2> /dev/null || echo "?"; }
deb_version() { dpkg-query -W -f='${Version}' "$1" 2> /dev/null || echo "?"; }
load_average() { cut -d' ' -f1-3 /proc/loadavg; }
checkout_version() {  # DIR FILE: the checkout's commit, else FILE's modification date; "not built" without DIR
  local dir=$1
  if [[ -z "$dir" ]]; then echo "not built"; return; fi
  git -C "$dir" rev-parse --short HEAD 2> /dev/null || date -u -r "$dir/$2" '+files of %Y-%m-%d'
}
compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
load_start=$(load_average)
commit=$(git rev-parse --short HEAD 2> /dev/null || echo "?")
changed=$(git diff --name-only HEAD -- include bench tools 2> /dev/null | tr '\n' ' ')
if [[ -n "$changed" ]]; then commit="$commit + uncommitted changes in: ${changed% }"; fi
{
  echo "{"
  echo "  \"date_utc\": $(json_string "$(date -u '+%Y-%m-%d %H:%M')"),"
  echo "  \"commit\": $(json_string "$commit"),"
  echo "  \"cpu\": $(json_string "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"),"
  echo "  \"cpus\": $(nproc),"
  echo "  \"hypervisor\": $(json_string "$(lscpu 2> /dev/null | sed -n 's/^Hypervisor vendor:[[:space:]]*//p')"),"
  echo "  \"memory_gib\": $(awk '/MemTotal/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo),"
  echo "  \"memory_available_gib\": $(awk '/MemAvailable/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo),"
  echo "  \"os\": $(json_string "$(. /etc/os-release && echo "$PRETTY_NAME"), Linux $(uname -r) ($(uname -m))"),"
  echo "  \"compiler\": $(json_string "$("$compiler" --version | head -n 1)"),"
  echo "  \"flags\": $(json_string "Release (-O3 -DNDEBUG) + the bench target's -O3, no -march"),"
  echo "  \"lz4\": $(json_string "$(pkg_version liblz4)"),"
  echo "  \"zstd\": $(json_string "$(pkg_version libzstd)"),"
  echo "  \"openssl\": $(json_string "$(pkg_version openssl)"),"
  echo "  \"benchmark\": $(json_string "$(deb_version libbenchmark-dev)"),"
  echo "  \"tinygltf\": $(json_string "$(deb_version libtinygltf-dev)"),"
  echo "  \"assimp\": $(json_string "$(pkg_version assimp)"),"
  echo "  \"cgltf\": $(json_string "$(checkout_version "${UNTOLD_BENCH_CGLTF_DIR:-}" cgltf.h)"),"
  echo "  \"fastgltf\": $(json_string "$(checkout_version "${UNTOLD_BENCH_FASTGLTF_DIR:-}" README.md)"),"
  echo "  \"simdjson\": $(json_string "$(deb_version libsimdjson-dev)"),"
  echo "  \"repetitions\": $reps,"
  echo "  \"quick\": $([[ $quick == 1 ]] && echo true || echo false),"
  echo "  \"load_average_start\": $(json_string "$load_start"),"
} > "$out/machine.json.part"

# ---- inputs made with the tool -----------------------------------------------------------
# 2CylinderEngine for the file/* rows of bench_peers.cpp, cooked with this build's CLI.
bench_dir=${UNTOLD_BENCH_DIR:-/tmp/untold-bench}
cylinder_glb=${UNTOLD_BENCH_CYLINDER_GLB:-/usr/share/assimp/models/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb}
export UNTOLD_BENCH_CYLINDER_GLB=$cylinder_glb UNTOLD_BENCH_CYLINDER=$bench_dir/2CylinderEngine.untold
if [[ -f "$cylinder_glb" ]]; then
  mkdir -p "$bench_dir"
  "$build/tools/untold" cook -q "$cylinder_glb" -o "$UNTOLD_BENCH_CYLINDER" > /dev/null
else
  echo "no $cylinder_glb (apt-get install assimp-testmodels): the 2CylinderEngine rows are skipped" >&2
fi

# ---- the suite -----------------------------------------------------------------------
filter=${UNTOLD_BENCH_FILTER:-}
if [[ -z "$filter" && $quick == 1 ]]; then filter='-geometry_mb:1024'; fi
# The in-memory 1 GiB cases of bench_open.cpp (deep checks, range load_all) are opt-in there.
if [[ $quick != 1 ]]; then export UNTOLD_BENCH_1GIB=1; fi
echo "== untold_bench, $reps repetitions${filter:+, filter $filter} (load average $load_start)"
bench_start=$(date +%s)
"$build/bench/untold_bench" ${filter:+"--benchmark_filter=$filter"} --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/results.json" --benchmark_out_format=json \
  --benchmark_counters_tabular=true
bench_seconds=$(($(date +%s) - bench_start))

# ---- the writer's peak RSS for a 1 GiB file -----------------------------------------------
# /usr/bin/time's maximum resident set size of one process writing 1000 meshes
# with 1 GiB of geometry: untold_write_driver (when bench/ has it) streamed to
# the file and the whole-file finish() way, each making and dropping one
# mesh's inputs at a time; untold_make_scene, which holds every input array.
rss_case() {  # label, then the command with OUT where the output file goes
  local label=$1 tmp rss seconds command
  shift
  command="${*/OUT/out.untold}"
  tmp=$(mktemp -d)
  /usr/bin/time -f '%M %e' -o "$tmp/time" "${@/OUT/$tmp/scene.untold}" > /dev/null
  read -r rss seconds < "$tmp/time"
  printf '%s{"label": %s, "command": %s, "peak_rss_bytes": %d, "output_bytes": %d, "seconds": %s}\n' \
    "$([[ -s "$out/writer_rss.json.part" ]] && echo ', ')" "$(json_string "$label")" \
    "$(json_string "${command#"$build/bench/"}")" "$((rss * 1024))" "$(stat -c %s "$tmp/scene.untold")" "$seconds" \
    >> "$out/writer_rss.json.part"
  rm -rf "$tmp"
}
rm -f "$out/writer_rss.json" "$out/writer_rss.json.part"
if [[ $quick != 1 && -z ${UNTOLD_BENCH_FILTER:-} ]]; then
  echo "== writer peak RSS (1000 meshes, 1 GiB of geometry)"
  size=(--meshes 1000 --geometry-mb 1024)
  if [[ -x "$build/bench/untold_write_driver" ]]; then
    rss_case "untold_write_driver: builder::write streamed to the file, one mesh's inputs alive" \
      "$build/bench/untold_write_driver" "${size[@]}" -o OUT
    rss_case "untold_write_driver --in-memory: finish() + write_file, one mesh's inputs alive" \
      "$build/bench/untold_write_driver" "${size[@]}" --in-memory -o OUT
    for codec in lz4 zstd; do
      rss_case "untold_write_driver --compress $codec: builder::write streamed, chunks compressed" \
        "$build/bench/untold_write_driver" "${size[@]}" --compress $codec -o OUT
    done
  fi
  rss_case "untold_make_scene: every input array alive, then the writer" \
    "$build/bench/untold_make_scene" "${size[@]}" -o OUT
  { echo "["; cat "$out/writer_rss.json.part"; echo "]"; } > "$out/writer_rss.json"
  rm -f "$out/writer_rss.json.part"
fi

# ---- cook vs gltfpack (npm, temporary prefix) ----------------------------------------
if [[ ${UNTOLD_BENCH_GLTFPACK:-1} != 0 ]] && command -v npm > /dev/null; then
  echo "== scripts/bench-gltfpack.sh"
  scripts/bench-gltfpack.sh "$build" > "$out/gltfpack.txt" || {
    echo "bench-gltfpack.sh failed; its section keeps no figures from this run" >&2
    rm -f "$out/gltfpack.txt"
  }
else
  rm -f "$out/gltfpack.txt"
fi

{
  cat "$out/machine.json.part"
  echo "  \"load_average_end\": $(json_string "$(load_average)"),"
  echo "  \"suite_seconds\": $bench_seconds,"
  echo "  \"total_seconds\": $(($(date +%s) - started))"
  echo "}"
} > "$out/machine.json"
rm -f "$out/machine.json.part"

# ---- the page ------------------------------------------------------------------------
echo "== $doc"
# Debian's python3 (where python3-matplotlib installs) even when another python3 comes first in PATH.
py=python3
if [[ -x /usr/bin/python3 ]]; then py=/usr/bin/python3; fi
"$py" bench/report.py "$out" "$doc" ${UNTOLD_BENCH_BLOCKS:+--only "$UNTOLD_BENCH_BLOCKS"}
if "$py" -c 'import matplotlib' 2> /dev/null; then
  "$py" bench/plot.py "$out/results.json" "$out/open_time.png"
else
  echo "no matplotlib (apt-get install python3-matplotlib): $out/open_time.png not redrawn" >&2
fi
echo "done in $(($(date +%s) - started)) s"
