#!/usr/bin/env bash
# Builds the web viewer (web/, docs/web.md) into OUTDIR (default build/web):
# the library and the tool's inspection code (tools/pipeline) compiled to
# WebAssembly with Debian's Emscripten, next to the static page.
#   scripts/build-web.sh [OUTDIR]
# Needs: emscripten (em++), nlohmann-json3-dev, and the npm packages of
# scripts/install-deps.sh under build/node (fzstd: the page's zstd decoder).
# Object files are kept in OUTDIR/obj and rebuilt only when a source is newer.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/build/web}"
mkdir -p "$out/obj/include"
out="$(cd "$out" && pwd)"
command -v em++ >/dev/null || { echo "build-web.sh: em++ not found (apt-get install emscripten)" >&2; exit 1; }
fzstd="$root/build/node/node_modules/fzstd/umd/index.js"
[[ -f "$fzstd" ]] || { echo "build-web.sh: $fzstd missing (run scripts/install-deps.sh)" >&2; exit 1; }
[[ -f /usr/include/nlohmann/json.hpp ]] || { echo "build-web.sh: nlohmann-json3-dev missing" >&2; exit 1; }
# Debian's emcc runs its JavaScript optimiser with the system node, which does
# not look in Debian's module folder for acorn unless told.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
# Only nlohmann-json from the host's /usr/include: the rest of it is glibc's.
ln -sfn /usr/include/nlohmann "$out/obj/include/nlohmann"

# JSON_NOEXCEPTION: the module is built without C++ exceptions (smaller and
# faster WASM; the library reports errors as values and never throws on
# input). A throw would be a bug: it aborts the module and the page says so.
# UNTOLD_EXTERNAL_CODECS: lz4/zstd chunks go to the page's JavaScript
# decoders (compression.hpp); meshopt chunks stay unsupported.
flags=(-std=c++20 -O2 -Wall -Wextra -Wno-unused-parameter
       -include "$root/web/compat.hpp" -DUNTOLD_EXTERNAL_CODECS -DJSON_NOEXCEPTION
       -I"$root/include" -I"$root/tools/pipeline" -isystem "$out/obj/include")
sources=(web/untold_web.cpp tools/pipeline/inspect.cpp tools/pipeline/formats.cpp
         tools/pipeline/format_urho3d.cpp tools/pipeline/format_udm.cpp tools/pipeline/format_assetc.cpp tools/pipeline/files.cpp)

objects=()
for src in "${sources[@]}"; do
  obj="$out/obj/$(basename "${src%.cpp}").o"
  objects+=("$obj")
  # Rebuild when the source or any header of the project is newer than the object.
  if [[ ! -f "$obj" || -n "$(find "$root/$src" "$root/include" "$root/tools/pipeline" "$root/web/compat.hpp" \
        -newer "$obj" -name '*.[ch]pp' -print -quit)" ]]; then
    echo "em++ $src"
    nice em++ "${flags[@]}" -c "$root/$src" -o "$obj"
  fi
done
echo "linking $out/untold.js"
nice em++ -O2 "${objects[@]}" -o "$out/untold.js" \
  -sMODULARIZE=1 -sEXPORT_NAME=createUntold -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=web \
  -sEXPORTED_FUNCTIONS=_malloc,_free,_untold_web_open,_untold_web_pose,_untold_web_positions,_untold_web_normals,_untold_web_indices,_untold_web_tile,_untold_web_stream_open,_untold_web_stream_tick \
  -sEXPORTED_RUNTIME_METHODS=ccall,cwrap,FS,HEAPU8,HEAPF32,HEAPU32,UTF8ToString
cp "$root"/web/index.html "$root"/web/viewer.js "$root"/web/codecs.js "$root"/web/style.css "$out/"
cp "$fzstd" "$out/fzstd.js"
ls -l "$out/untold.wasm" "$out/untold.js" | awk '{print $5, $9}'
