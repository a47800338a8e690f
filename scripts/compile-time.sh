#!/usr/bin/env bash
# Prints the compile cost of each public header as a Markdown table: the
# preprocessed line count and the best-of-N user CPU time of
# `$CXX -std=c++20 -fsyntax-only` on a translation unit that includes only
# that header (docs/compile-time.md keeps the latest table).
#
# Usage: scripts/compile-time.sh [runs]     (CXX defaults to g++; runs to 5)
#
# INSTRUCTIONS=1 adds a column with the instructions the compiler executes
# (valgrind --tool=cachegrind, about 15 s per row): unlike CPU time it does
# not change with the load of a shared machine, so it compares two versions
# of a header exactly. ROWS=paths measures only the paths and the umbrella.
set -euo pipefail
cd "$(dirname "$0")/.."
cxx="${CXX:-g++}"
runs="${1:-5}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
flags=(-std=c++20 -Iinclude -DUNTOLD_HAS_LZ4=1 -DUNTOLD_HAS_ZSTD=1 -DUNTOLD_HAS_MESHOPT=1 -DUNTOLD_HAS_OPENSSL=1)

measure() {  # name, lines of the translation unit...
  local name="$1"; shift
  printf '%s\n' "$@" > "$tmp/tu.cpp"
  local lines best=""
  lines=$("$cxx" "${flags[@]}" -E "$tmp/tu.cpp" | wc -l)
  for ((i = 0; i < runs; ++i)); do
    local t
    t=$( { /usr/bin/time -f "%U" "$cxx" "${flags[@]}" -fsyntax-only "$tmp/tu.cpp"; } 2>&1 )
    if [[ -z "$best" ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best="$t"; fi
  done
  local instructions=""
  if [[ -n "${INSTRUCTIONS:-}" ]]; then
    instructions=$(valgrind --tool=cachegrind --cache-sim=no --trace-children=yes --cachegrind-out-file=/dev/null \
                     "$cxx" "${flags[@]}" -fsyntax-only "$tmp/tu.cpp" 2>&1 |
                   awk '/I +refs:/ { gsub(",", "", $NF); if ($NF + 0 > m) m = $NF + 0 } END { printf " %.0f |", m / 1e6 }')
  fi
  printf '| %s | %s | %s |%s\n' "$name" "$lines" "$best" "$instructions"
}

if [[ -n "${INSTRUCTIONS:-}" ]]; then
  echo "| translation unit | preprocessed lines | -fsyntax-only, s (best of $runs) | million instructions |"
  echo "|---|---:|---:|---:|"
else
  echo "| translation unit | preprocessed lines | -fsyntax-only, s (best of $runs) |"
  echo "|---|---:|---:|"
fi
measure "standard floor: vector span string_view optional cstring" \
  '#include <vector>' '#include <span>' '#include <string_view>' '#include <optional>' '#include <cstring>'
reader_path=('#include <untold/reader.hpp>' '#include <untold/view.hpp>' '#include <untold/vertex.hpp>')
measure "reader path: reader.hpp + view.hpp + vertex.hpp" "${reader_path[@]}"
# What a translation unit that opens files pays: open() and the validators
# are inline functions, compiled by every includer whether it calls them or
# not, so this row differs from the one above only by the caller's own code.
measure "reader path + a function calling open() and reading vertices" "${reader_path[@]}" \
  'std::size_t count_vertices(untold::byte_span file) {' \
  '  auto a = untold::open(file);' \
  '  std::size_t n = 0;' \
  '  if (a)' \
  '    for (const untold::mesh_record& m : a->meshes())' \
  '      if (auto v = untold::pbr_vertex_view::from_bytes(a->vertices(m))) n += v->size();' \
  '  return n;' \
  '}'
measure "asset user: asset.hpp + view.hpp + vertex.hpp (handed an opened asset)" \
  '#include <untold/asset.hpp>' '#include <untold/view.hpp>' '#include <untold/vertex.hpp>'
if [[ "${ROWS:-all}" == paths ]]; then  # the rows above and the umbrella only
  measure "untold/untold.hpp" "#include <untold/untold.hpp>"
else
  while IFS= read -r header; do
    measure "$header" "#include <$header>"
  done < <(cd include && find untold -name '*.hpp' ! -path 'untold/remote/*' ! -path 'untold/rules/*' | sort)
fi
echo
echo "Measured with $("$cxx" --version | head -n 1) on $(nproc) cores, $(date -u +%Y-%m-%d)."
