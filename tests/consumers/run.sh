#!/usr/bin/env bash
# Builds and runs the consumer projects against this checkout:
#   add_subdirectory, FetchContent,
#   find_package core-only (with libcurl made unfindable: the core must not need it),
#   find_package COMPONENTS remote (untold::remote),
#   and an install without untold::remote, where COMPONENTS remote must fail cleanly.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source_dir="$(cd "$here/../.." && pwd)"
out="$(mkdir -p "${1:-$source_dir/build/consumers}" && cd "${1:-$source_dir/build/consumers}" && pwd)"
passed=0

for way in add_subdirectory fetchcontent; do
  cmake -S "$here/$way" -B "$out/$way" -G Ninja -DUNTOLD_SOURCE_DIR="$source_dir" > "$out/$way.log"
  cmake --build "$out/$way" > /dev/null
  "$out/$way/consumer"
  passed=$((passed + 1))
done

install_untold() {  # name, extra cmake args...
  local name="$1"; shift
  rm -rf "$out/$name-prefix"
  cmake -S "$source_dir" -B "$out/$name" -G Ninja -DUNTOLD_BUILD_TESTS=OFF -DUNTOLD_BUILD_TOOLS=OFF \
    -DUNTOLD_BUILD_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX="$out/$name-prefix" "$@" > "$out/$name.log"
  cmake --install "$out/$name" > /dev/null
}

install_untold lib -DUNTOLD_BUILD_REMOTE=ON
cmake -S "$here/find_package" -B "$out/find_package" -G Ninja -DCMAKE_PREFIX_PATH="$out/lib-prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_CURL=ON > "$out/find_package.log"
cmake --build "$out/find_package" > /dev/null
"$out/find_package/consumer"
passed=$((passed + 1))
cmake -S "$here/find_package_remote" -B "$out/find_package_remote" -G Ninja \
  -DCMAKE_PREFIX_PATH="$out/lib-prefix" > "$out/find_package_remote.log"
cmake --build "$out/find_package_remote" > /dev/null
"$out/find_package_remote/consumer_remote"
passed=$((passed + 1))

install_untold lib-core -DUNTOLD_BUILD_REMOTE=OFF
if cmake -S "$here/find_package_remote" -B "$out/find_package_remote_missing" -G Ninja \
  -DCMAKE_PREFIX_PATH="$out/lib-core-prefix" > "$out/find_package_remote_missing.log" 2>&1; then
  echo "consumers: COMPONENTS remote was accepted by an install without untold::remote" >&2
  exit 1
fi
grep -q "installed without untold::remote" "$out/find_package_remote_missing.log"
echo "consumer ok: COMPONENTS remote refused by a core-only install"
passed=$((passed + 1))
echo "consumers: $passed passed, 0 failed"
