#!/usr/bin/env bash
# Builds and runs every test configuration: g++ -O2 with the tool in Release
# (-O3) as scripts/demo.sh builds it (warnings as errors), clang++ with ASan+UBSan,
# -fno-exceptions -fno-rtti, the CMake consumer projects, the web viewer in
# headless chromium, and a short libFuzzer run of every fuzz target.
# Usage: scripts/test.sh [build-root]   (default: build/ci)
set -euo pipefail
cd "$(dirname "$0")/.."
root="${1:-build/ci}"
jobs="${UNTOLD_JOBS:-$(nproc)}"
mkdir -p "$root"

configure_build_test() {  # name, extra cmake args...
  local name="$1"; shift
  echo "=== [t=${SECONDS}s] [$name] configure + build"
  cmake -S . -B "$root/$name" -G Ninja -DUNTOLD_DEVELOPER_MODE=ON "$@" > "$root/$name.configure.log"
  cmake --build "$root/$name" -j "$jobs"
  echo "=== [t=${SECONDS}s] [$name] test"
  # The browser tests (label web) run once, in the web stage below.
  ctest --test-dir "$root/$name" -j "$jobs" --output-on-failure --no-tests=error -LE web
}

# Everything (library, remote, tool, examples, cook sweep, every format's
# tests; the fuzz corpus replay in the first) twice: g++ optimised (-O2, as RelWithDebInfo
# but without -g, which costs a third of the build and changes no warning),
# and clang with ASan+UBSan (clang's warnings and the sanitizers in one
# build). Then the library alone with -fno-exceptions -fno-rtti (the tool
# needs exceptions for CLI11, assimp and yaml-cpp). Each public header on its
# own (UNTOLD_HEADER_CHECKS, one translation unit per header) is compiled in
# that last configuration only: self-containment does not depend on the
# compiler or the sanitizers, and there it also proves each header builds
# with -fno-exceptions -fno-rtti.
#
# The gcc, clang and -fno-exceptions configurations are unity builds (CMAKE_UNITY_BUILD: a target's
# sources in batches of 8 per translation unit), which parses the heavy
# headers an eighth as often (the g++ -O2 build of everything: 818 s against
# 1239 s per source on the 2-core development machine, both from clean, no
# ccache). Each public header on its own is the header checks of the
# -fno-exceptions stage.
# The tool in the g++ configuration is built as scripts/demo.sh builds it
# (UNTOLD_TOOL_AS_RELEASED: one translation unit per source at -O3), with
# warnings as errors: GCC warns at -O3 about code that is clean at -O2
# (-Wrestrict in inlined string concatenation), the README's first command
# must build without warnings, and the tests run that build of the tool.
# The Python package (UNTOLD_BUILD_PYTHON: two more translation units, the
# pipeline position-independent) is built and tested here only: its pytest
# suites, examples, README snippet and `pip install` into a venv run in this
# ctest (python/tests/CMakeLists.txt); the other configurations skip them.
configure_build_test gcc -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
  -DUNTOLD_HEADER_CHECKS=OFF -DUNTOLD_BUILD_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3 \
  "-DUNTOLD_WEB_DIR=$(cd "$root" && pwd)/web" -DCMAKE_UNITY_BUILD=ON -DUNTOLD_TOOL_AS_RELEASED=ON
# The web viewer (docs/web.md), once: the WebAssembly build, then its tests in
# headless chromium (tests/web/) against the gcc build's `untold`.
echo "=== [t=${SECONDS}s] [web] scripts/build-web.sh + browser tests (ctest -L web)"
scripts/build-web.sh "$root/web"
ctest --test-dir "$root/gcc" -L web --output-on-failure --no-tests=error
# cmake --install with the tool, examples and remote built (the consumers below
# install the library without them): the installed tool must run.
echo "=== [t=${SECONDS}s] [gcc] cmake --install (library, remote, tool)"
cmake --install "$root/gcc" --prefix "$root/gcc-prefix" > "$root/gcc.install.log"
"$root/gcc-prefix/bin/untold" --version
# The fuzz targets' corpus replays (UNTOLD_FUZZ_REPLAY) run in the gcc
# configuration only: under ASan+UBSan, fuzz/smoke.sh below runs every
# committed input and every writer-made seed of the gcc build
# (UNTOLD_FUZZ_SEEDS) through the libFuzzer binaries first; with
# -fno-exceptions they would run the same code paths as the gcc build's.
configure_build_test clang-asan-ubsan -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DUNTOLD_SANITIZE=address,undefined -DUNTOLD_HEADER_CHECKS=OFF -DCMAKE_UNITY_BUILD=ON -DUNTOLD_FUZZ_REPLAY=OFF
configure_build_test no-exceptions -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Debug -DUNTOLD_NO_EXCEPTIONS=ON \
  -DUNTOLD_BUILD_TOOLS=OFF -DUNTOLD_BUILD_EXAMPLES=OFF -DCMAKE_UNITY_BUILD=ON -DUNTOLD_FUZZ_REPLAY=OFF

echo "=== [t=${SECONDS}s] [consumers] add_subdirectory, FetchContent, find_package after install"
bash tests/consumers/run.sh "$root/consumers"

# libFuzzer smoke run: each fuzz target for 20 s (fuzz/smoke.sh, SECURITY.md),
# from its committed corpus and the gcc build's writer-made seeds.
UNTOLD_JOBS="$jobs" UNTOLD_FUZZ_SEEDS="$root/gcc/fuzz/generated_corpus" bash fuzz/smoke.sh "$root/fuzz-smoke"
echo "=== [t=${SECONDS}s] all configurations passed"
