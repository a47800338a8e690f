#!/usr/bin/env bash
# Builds and runs the three consumer projects against this checkout:
# add_subdirectory, FetchContent, and find_package after cmake --install.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source_dir="$(cd "$here/../.." && pwd)"
out="$(mkdir -p "${1:-$source_dir/build/consumers}" && cd "${1:-$source_dir/build/consumers}" && pwd)"

for way in add_subdirectory fetchcontent; do
  cmake -S "$here/$way" -B "$out/$way" -G Ninja -DUNTOLD_SOURCE_DIR="$source_dir" > "$out/$way.log"
  cmake --build "$out/$way" > /dev/null
  "$out/$way/consumer"
done

cmake -S "$source_dir" -B "$out/lib" -G Ninja -DUNTOLD_BUILD_TESTS=OFF -DUNTOLD_BUILD_TOOLS=OFF \
  -DUNTOLD_BUILD_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX="$out/prefix" > "$out/lib.log"
cmake --install "$out/lib" > /dev/null
cmake -S "$here/find_package" -B "$out/find_package" -G Ninja -DCMAKE_PREFIX_PATH="$out/prefix" > "$out/find_package.log"
cmake --build "$out/find_package" > /dev/null
"$out/find_package/consumer"
echo "consumers: 3 passed, 0 failed"
