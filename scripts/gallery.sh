#!/usr/bin/env bash
# scripts/gallery.sh [BUILD_DIR] - the thumbnails of docs/gallery.md: every
# sample model of tests/data and examples/data, in every format the library
# reads, drawn by `untold render` (256 x 256 PNG, auto-framed) into
# docs/gallery/, and docs/gallery.md written around them. Formats with no
# model sample of their own in the repository (.untold with a skinned clip,
# an assetc mesh with more than a quad) are made from the samples by
# `untold cook` / `untold convert` first, in a temporary directory.
#
# The images are byte-identical on the same machine and Vulkan driver (the
# render is deterministic); docs/gallery.md names the device they came from.
# Needs a build with the renderer (Vulkan + glslangValidator) and a Vulkan
# device (lavapipe: mesa-vulkan-drivers).
set -euo pipefail

cd "$(dirname "$0")/.."
build=${1:-build/dev}
untold="$build/tools/untold"
[[ -x "$untold" ]] || { echo "no $untold: build the untold_cli target first" >&2; exit 2; }
out=docs/gallery
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
rm -f "$out"/*.png

urho=tests/data/urho3d/Models
jack="$urho/Jack.mdl --animations $urho/Jack_Walk.ani"

# Made from the samples (shown in the table with the command that made them).
"$untold" cook "$urho/Jack.mdl" --animations "$urho/Jack_Walk.ani" -o "$work/Jack.untold" -q
"$untold" cook examples/data/sample.gltf -o "$work/sample.untold" -q
"$untold" convert examples/data/sample.gltf "$work/sample.hmesh" -q
"$untold" convert "$urho/TeaPot.mdl" "$work/TeaPot.pmdl_b" -q

# name | format | input (with options) | caption | how the input was made
rows=(
  "jack_walk|Urho3D .mdl + .ani|$jack --animation Walk --time 0.5 --eye -1.7,2.2,-2.9|Jack.mdl posed by Jack_Walk.ani at 0.5 s (skinned)|"
  "teapot|Urho3D .mdl|$urho/TeaPot.mdl|TeaPot.mdl|"
  "level|Urho3D .mdl|$urho/NinjaSnowWar/Level.mdl|NinjaSnowWar/Level.mdl|"
  "potion|Urho3D .mdl|$urho/NinjaSnowWar/Potion.mdl|NinjaSnowWar/Potion.mdl|"
  "torus|Urho3D .mdl|$urho/Torus.mdl|Torus.mdl|"
  "jack_untold|.untold|$work/Jack.untold --animation Walk --time 0.5 --eye -1.7,2.2,-2.9|Jack cooked to .untold, the clip in the file, at 0.5 s|untold cook $urho/Jack.mdl --animations $urho/Jack_Walk.ani -o Jack.untold"
  "sample_untold|.untold|$work/sample.untold|the glTF sample cooked|untold cook examples/data/sample.gltf -o sample.untold"
  "pmdl_cube|Pragma PMDL|tests/data/udm/models/cube.pmdl_b|udm/models/cube.pmdl_b|"
  "pmdl_rect|Pragma PMDL|tests/data/udm/models/rect_unlit.pmdl_b|udm/models/rect_unlit.pmdl_b|"
  "pmdl_teapot|Pragma PMDL|$work/TeaPot.pmdl_b|TeaPot.mdl converted to PMDL|untold convert $urho/TeaPot.mdl TeaPot.pmdl_b"
  "hmesh_quad|assetc .hmesh|tests/data/assetc/quad.hmesh|assetc/quad.hmesh|"
  "hmesh_sample|assetc .hmesh|$work/sample.hmesh|the glTF sample converted to assetc|untold convert examples/data/sample.gltf sample.hmesh"
  "gltf_sample|glTF 2.0|examples/data/sample.gltf|examples/data/sample.gltf|"
  "gltf_texture_transform|glTF 2.0|tests/data/gltf/texture_transform.gltf|gltf/texture_transform.gltf|"
)

device=""
table=""
for row in "${rows[@]}"; do
  IFS='|' read -r name format input caption made <<< "$row"
  # shellcheck disable=SC2086 # $input holds the file and its options
  json=$("$untold" render $input --size 256x256 -o "$out/$name.png" --json)
  [[ -n "$device" ]] || device=$(sed -n 's/.*"device": "\(.*\)".*/\1/p' <<< "$json")
  shown=${input//$work\//}
  command="untold render $shown --size 256x256 -o $name.png"
  [[ -z "$made" ]] || command="$made && $command"
  table+="| ![$caption](gallery/$name.png) | $format | $caption | \`$command\` |"$'\n'
done

cat > docs/gallery.md <<EOF
# Gallery

Thumbnails of the sample models of every format untold reads, drawn by
[\`untold render\`](cli.md#untold-render-file--o-outpng) (Vulkan, offscreen) at
256 x 256, auto-framed from the posed bounds, Lambert-shaded with a colour
per material. Made by \`scripts/gallery.sh\` (this page too), on $device;
the same build on the same driver makes the same bytes.

Formats with no model sample of their own in the repository are made from
the samples first (the command is in the row). Jack's rows give \`--eye\`: the
default camera looks from +Z (glTF's front), and Urho3D's characters face
-Z once imported into the scene's right-handed axes.

| | format | model | command |
|---|---|---|---|
$table
EOF
echo "wrote ${#rows[@]} thumbnails to $out and docs/gallery.md ($device)"
