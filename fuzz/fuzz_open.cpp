// fuzz_open: untold::open on arbitrary bytes with every option set of
// untold_fuzz::option_sets() (defaults, deep checks, small limits, a lifted
// per-chunk cap, relaxed header without hash). A rejection must carry a rule
// id, an accepted asset must be fully traversable (fuzz/traverse.hpp), and
// deep checks may only reject more, never accept more. The scene walk must
// also survive the input read directly as an entity table.
#include "traverse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const untold::byte_span file = untold_fuzz::as_span(data, size);
  const auto sets = untold_fuzz::option_sets();
  std::vector<bool> accepted;
  for (const untold::open_options& options : sets) accepted.push_back(untold_fuzz::open_and_traverse(file, options));
  if (accepted[1] && !accepted[0]) untold_fuzz::die("deep checks accepted what the default open rejected");
  // The scene walk is safe on entity tables that were never validated.
  if (const auto raw = untold::record_view<untold::entity_record>::make(file.first(size - size % 136)))
    if (untold::walk_scene(*raw, untold::identity_matrix).order.size() != raw->size()) untold_fuzz::die("raw scene walk");
  return 0;
}
