#!/usr/bin/env bash
# scripts/bench-gltfpack.sh [BUILD_DIR] - output size and cook time of
# `gltfpack -cc` against `untold cook --compress zstd` on the same
# assimp-testmodels glTF files (issue 17 item 7; results in docs/benchmarks.md).
#
# gltfpack comes from the npm registry (package "gltfpack", a WebAssembly build
# that runs on Debian's nodejs) and is installed into a temporary prefix that
# is deleted afterwards: never into the build, never system-wide. Without npm,
# `apt-get install -y npm` is run (root only); when the registry cannot be
# reached, Debian's older gltfpack package is used and named in the output.
#
# Sizes: gltfpack writes one .glb (geometry quantised and meshopt-compressed,
# images embedded when the source embeds them); untold writes the .untold
# (every chunk zstd-compressed, geometry as PBR_STATIC_V1) plus the images it
# copies or extracts next to it. Both are printed; the ratio is the total
# (.untold + images) over the .glb.
# Times: wall clock of one run, best of 3 (node's start-up is part of
# gltfpack's, as users run it).
set -euo pipefail

build=${1:-build/cook}
untold="$build/tools/untold"
[[ -x "$untold" ]] || { echo "no $untold: build the untold_cli target first" >&2; exit 2; }
models_dir=${UNTOLD_ASSIMP_MODELS_DIR:-/usr/share/assimp/models}
[[ -d "$models_dir/glTF2" ]] || { echo "assimp-testmodels not found in $models_dir (scripts/install-deps.sh)" >&2; exit 2; }

if ! command -v npm > /dev/null; then
  if [[ $(id -u) -eq 0 ]]; then apt-get install -y npm > /dev/null; else echo "npm is missing" >&2; exit 2; fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if npm install --prefix "$work/npm" --no-audit --no-fund --silent gltfpack > /dev/null 2>&1; then
  gltfpack="$work/npm/node_modules/.bin/gltfpack"
  version="$(node -e "console.log(require('$work/npm/node_modules/gltfpack/package.json').version)") (npm)"
else  # offline: Debian's (older) gltfpack package
  if ! command -v gltfpack > /dev/null && [[ $(id -u) -eq 0 ]]; then apt-get install -y gltfpack > /dev/null 2>&1 || true; fi
  command -v gltfpack > /dev/null || { echo "npm install gltfpack failed and Debian's gltfpack is missing" >&2; exit 2; }
  gltfpack=$(command -v gltfpack)
  version="$("$gltfpack" -v 2>&1 | head -n 1 | awk '{print $2}') (Debian package; npm unavailable)"
fi

models=(
  glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb
  glTF2/BoxTextured-glTF-Binary/BoxTextured.glb
  glTF2/simple_skin/simple_skin.gltf
  glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf
  glTF2/textureTransform/TextureTransformTest.gltf
  glTF2/BoxTextured-glTF/BoxTextured.gltf
)
best_of_3() {  # prints the best wall time in ms of running "$@" three times
  local best=
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s%N)
    "$@" > /dev/null 2>&1 || return 1
    t1=$(date +%s%N)
    local ms=$(((t1 - t0) / 1000000))
    if [[ -z "$best" || $ms -lt $best ]]; then best=$ms; fi
  done
  echo "$best"
}

echo "gltfpack $version vs untold cook --compress zstd, $(date -u +%Y-%m-%d)"
printf '%-44s %12s %12s %12s %8s %10s %10s\n' model gltfpack-cc untold untold+img ratio gltfpack-ms untold-ms
for rel in "${models[@]}"; do
  src="$models_dir/$rel"
  [[ -f "$src" ]] || continue
  name=$(basename "$rel")
  out="$work/out/${name%.*}"
  rm -rf "$out"
  mkdir -p "$out/gp" "$out/ut"
  gp_ms=$(best_of_3 "$gltfpack" -i "$src" -o "$out/gp/model.glb" -cc) || { printf '%-44s gltfpack failed\n' "$name"; continue; }
  ut_ms=$(best_of_3 "$untold" cook -q "$src" -o "$out/ut/model.untold" --compress zstd --copy-textures) ||
    { printf '%-44s untold cook failed\n' "$name"; continue; }
  gp=$(stat -c %s "$out/gp/model.glb")
  ut=$(stat -c %s "$out/ut/model.untold")
  ut_all=$(du -cb "$out/ut"/* | tail -n 1 | cut -f1)
  ratio=$(awk -v a="$ut_all" -v b="$gp" 'BEGIN { printf "%.2f", a / b }')
  printf '%-44s %12d %12d %12d %8s %10d %10d\n' "$name" "$gp" "$ut" "$ut_all" "$ratio" "$gp_ms" "$ut_ms"
done
echo "ratio = (untold + images) / gltfpack; the goal is <= 1.10"
