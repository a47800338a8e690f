#!/usr/bin/env bash
# CI fuzz smoke run: builds the libFuzzer targets with clang
# (-fsanitize=fuzzer,address,undefined; -O1 -gline-tables-only, as OSS-Fuzz
# builds them: as many executions as -O2 -g in a quarter less build time) and
# runs each for a bounded time, starting from its committed corpus
# (fuzz/corpus/<target>/ is not changed; libFuzzer runs every input of it
# first, so this is also the corpus replay under ASan+UBSan) and from
# $UNTOLD_FUZZ_SEEDS/<target>/ when given. Any crash, leak, timeout or
# out-of-memory fails the run; the input is kept under
# <build-dir>/artifacts/<target>/ - add it to fuzz/corpus/<target>/ as
# regress-<what> once fixed.
#
# Usage: fuzz/smoke.sh [build-dir]          (default: build/fuzz-smoke)
#   UNTOLD_FUZZ_SECONDS  seconds per target (default 20)
#   UNTOLD_JOBS          build jobs and targets run at once (default 2)
#   UNTOLD_FUZZ_SEEDS    a directory of more seeds per target, e.g. the
#                        writer-made ones a test build's ctest wrote
#                        (<build>/fuzz/generated_corpus, fuzz.corpus.generate)
# Longer local runs: the same binaries, e.g.
#   nice <build-dir>/fuzz/fuzz_open -max_total_time=600 -rss_limit_mb=2048 \
#     -timeout=10 -max_len=65536 <scratch-corpus> fuzz/corpus/fuzz_open
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/fuzz-smoke}"
seconds="${UNTOLD_FUZZ_SECONDS:-20}"
jobs="${UNTOLD_JOBS:-2}"
seeds="${UNTOLD_FUZZ_SEEDS:-}"
targets=()
for source in fuzz/fuzz_*.cpp; do targets+=("$(basename "$source" .cpp)"); done

echo "=== [fuzz-smoke] configure + build (clang, libFuzzer, ASan+UBSan)"
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  -DUNTOLD_DEVELOPER_MODE=ON -DUNTOLD_BUILD_FUZZ=ON -DUNTOLD_BUILD_TESTS=OFF -DUNTOLD_BUILD_TOOLS=OFF \
  -DUNTOLD_BUILD_EXAMPLES=OFF -DUNTOLD_INSTALL=OFF > "$build.configure.log"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

run_target() {  # target -> 0 when the run found nothing
  local target="$1" work="$build/smoke-corpus/$1" artifacts="$build/artifacts/$1"
  local inputs=("fuzz/corpus/$target")
  if [[ -n "$seeds" && -d "$seeds/$target" ]]; then inputs+=("$seeds/$target"); fi
  # Longer inputs would be cut to -max_len, so not replayed as committed.
  if [[ -n "$(find "${inputs[@]}" -type f -size +65536c)" ]]; then
    echo "inputs over 65536 bytes in ${inputs[*]}: raise -max_len" > "$build/$target.log"
    return 1
  fi
  rm -rf "$work" && mkdir -p "$work" "$artifacts"
  "$build/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" "${inputs[@]}" > "$build/$target.log" 2>&1
}

echo "=== [fuzz-smoke] ${#targets[@]} targets x ${seconds}s, $jobs at a time"
failed=()
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  pids=()
  for target in "${targets[@]:i:jobs}"; do
    run_target "$target" &
    pids+=("$!:$target")
  done
  for entry in "${pids[@]}"; do
    target="${entry#*:}"
    if wait "${entry%%:*}"; then
      echo "  $target: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$build/$target.log" | grep -o '[0-9]*$') executions, no finding"
    else
      failed+=("$target")
      echo "  $target: FAILED, see $build/$target.log and $build/artifacts/$target/"
      tail -n 40 "$build/$target.log"
    fi
  done
done
if ((${#failed[@]})); then
  echo "=== [fuzz-smoke] findings in: ${failed[*]}"
  exit 1
fi
echo "=== [fuzz-smoke] passed"
