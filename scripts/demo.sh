#!/usr/bin/env bash
# The main job: build, write a scene with the library, read it back and print it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/demo -G Ninja -DCMAKE_BUILD_TYPE=Release -DUNTOLD_BUILD_TESTS=OFF > /dev/null
cmake --build build/demo --target untold_example_write_and_read
./build/demo/examples/untold_example_write_and_read build/demo/example.untold
