#!/usr/bin/env bash
# The README's main job, end to end: build the untold command-line tool
# (Release), cook the bundled glTF sample into build/demo/sample.untold and a
# real Urho3D model (tests/data/urho3d, PROVENANCE.md) into
# build/demo/teapot.untold with its conversion report, then show
# `untold info` and `untold validate --deep` of them and `untold info` of a
# real Pragma model.
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
echo "=== untold cook examples/data/sample.gltf -o build/demo/sample.untold --compress zstd --copy-textures"
"$untold" cook examples/data/sample.gltf -o build/demo/sample.untold --compress zstd --copy-textures
echo "=== untold info build/demo/sample.untold"
"$untold" info build/demo/sample.untold
echo "=== untold validate --deep build/demo/sample.untold"
"$untold" validate --deep build/demo/sample.untold
echo "=== untold cook tests/data/urho3d/Models/TeaPot.mdl -o build/demo/teapot.untold (a real Urho3D model)"
"$untold" cook tests/data/urho3d/Models/TeaPot.mdl -o build/demo/teapot.untold
echo "=== untold validate --deep build/demo/teapot.untold"
"$untold" validate --deep build/demo/teapot.untold
echo "=== untold info tests/data/udm/models/cube.pmdl_b (a real Pragma UDM model)"
"$untold" info tests/data/udm/models/cube.pmdl_b
