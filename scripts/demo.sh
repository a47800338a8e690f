#!/usr/bin/env bash
# The README's main job, end to end: build the untold command-line tool
# (Release), cook the bundled glTF sample into build/demo/sample.untold,
# then show `untold info` and `untold validate --deep` of it.
# Usage: scripts/demo.sh            (needs scripts/install-deps.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/demo
jobs="${UNTOLD_JOBS:-2}"
mkdir -p "$build"

echo "=== configure + build the untold tool (Release) in $build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DUNTOLD_BUILD_TESTS=OFF -DUNTOLD_BUILD_EXAMPLES=OFF > "$build/configure.log"
cmake --build "$build" -j "$jobs" --target untold_cli

untold="$build/tools/untold"
echo "=== untold cook examples/data/sample.gltf -o build/demo/sample.untold --compress zstd"
"$untold" cook examples/data/sample.gltf -o build/demo/sample.untold --compress zstd
echo "=== untold info build/demo/sample.untold"
"$untold" info build/demo/sample.untold
echo "=== untold validate --deep build/demo/sample.untold"
"$untold" validate --deep build/demo/sample.untold
