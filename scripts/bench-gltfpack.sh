#!/usr/bin/env bash
# scripts/bench-gltfpack.sh [BUILD_DIR] - bytes on the wire and cook time of
# `gltfpack -cc` against `untold cook` on the same assimp-testmodels glTF
# files (issue 17 item 7, issue 30; results in docs/benchmarks.md).
#
# gltfpack comes from the npm registry (package "gltfpack", a WebAssembly build
# that runs on Debian's nodejs) and is installed into a temporary prefix that
# is deleted afterwards: never into the build, never system-wide. Without npm,
# `apt-get install -y npm` is run (root only); when the registry cannot be
# reached, Debian's older gltfpack package is used and named in the output.
#
# Sizes (every glTF 2.0 file of assimp-testmodels, one row each): images are
# counted the same way on both sides, inside the one file each tool writes
# (a .glb output of gltfpack embeds them unless -tr, untold cook --embed;
# neither re-encodes them). Columns: gltfpack -cc; that .glb + zstd -19 (what a CDN serving it
# compressed sends); untold cook --compress zstd:19; --compress
# meshopt+zstd:19; --vertex-layout quantized --compress meshopt+zstd:19, each
# with --mesh-order size (meshoptimizer's strip-friendly triangle order, which
# gltfpack -cc's output shows too: docs/benchmarks.md) (the
# .untold files are served as they are: their chunks are compressed). The
# ratio is the quantized meshopt+zstd file over gltfpack + zstd (goal <= 1.0)
# and meshopt+zstd over zstd:19 (goal <= 0.8).
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


sizes_of() {  # model path -> prints the size columns, or a failure note
  local src="$1" out="$2"
  rm -rf "$out"
  mkdir -p "$out"
  "$gltfpack" -i "$src" -o "$out/gp.glb" -cc > /dev/null 2>&1 || { echo "gltfpack-failed"; return; }
  zstd -q -19 -f "$out/gp.glb" -o "$out/gp.glb.zst"
  "$untold" cook -q "$src" -o "$out/z.untold" --embed --mesh-order size --compress zstd:19 > /dev/null 2>&1 || { echo "untold-failed"; return; }
  "$untold" cook -q "$src" -o "$out/m.untold" --embed --mesh-order size --compress meshopt+zstd:19 > /dev/null 2>&1 || { echo "untold-failed"; return; }
  "$untold" cook -q "$src" -o "$out/q.untold" --embed --mesh-order size --compress meshopt+zstd:19 --vertex-layout quantized > /dev/null 2>&1 ||
    { echo "untold-failed"; return; }
  echo "$(stat -c %s "$out/gp.glb") $(stat -c %s "$out/gp.glb.zst") $(stat -c %s "$out/z.untold") $(stat -c %s "$out/m.untold") $(stat -c %s "$out/q.untold")"
}

echo "gltfpack $version vs untold cook --mesh-order size, bytes on the wire, $(date -u +%Y-%m-%d)"
printf '%-46s %10s %10s %10s %10s %10s %9s %9s\n' model gltfpack gp+zstd zstd:19 meshopt+z quant+mz q/gp+z mz/z19
mapfile -t all < <(cd "$models_dir" && find glTF2 \( -name '*.gltf' -o -name '*.glb' \) | LC_ALL=C sort)
sum_gpz=0 sum_q=0 sum_z=0 sum_m=0
for rel in "${all[@]}"; do
  read -r -a s <<< "$(sizes_of "$models_dir/$rel" "$work/sizes")"
  if [[ ${#s[@]} -ne 5 ]]; then printf '%-46s %s\n' "$rel" "${s[0]:-failed}"; continue; fi
  q_ratio=$(awk -v a="${s[4]}" -v b="${s[1]}" 'BEGIN { printf "%.2f", a / b }')
  m_ratio=$(awk -v a="${s[3]}" -v b="${s[2]}" 'BEGIN { printf "%.2f", a / b }')
  printf '%-46s %10d %10d %10d %10d %10d %9s %9s\n' "$rel" "${s[0]}" "${s[1]}" "${s[2]}" "${s[3]}" "${s[4]}" "$q_ratio" "$m_ratio"
  sum_gpz=$((sum_gpz + s[1])); sum_z=$((sum_z + s[2])); sum_m=$((sum_m + s[3])); sum_q=$((sum_q + s[4]))
done
if [[ $sum_gpz -gt 0 ]]; then
  printf '%-46s %10s %10d %10d %10d %10d %9s %9s\n' "total (rows both tools wrote)" "" "$sum_gpz" "$sum_z" "$sum_m" "$sum_q" \
    "$(awk -v a=$sum_q -v b=$sum_gpz 'BEGIN { printf "%.2f", a / b }')" "$(awk -v a=$sum_m -v b=$sum_z 'BEGIN { printf "%.2f", a / b }')"
fi
echo "q/gp+z = quantized meshopt+zstd:19 / (gltfpack -cc + zstd -19), goal <= 1.0; mz/z19 = meshopt+zstd:19 / zstd:19, goal <= 0.8"
echo

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
