// fuzz_open: untold::open on arbitrary bytes with every option set of
// untold_fuzz::option_sets() (defaults, deep checks, small limits, a lifted
// per-chunk cap, relaxed header without hash). A rejection must carry a rule
// id, an accepted asset must be fully traversable (fuzz/traverse.hpp), and
// deep checks may only reject more, never accept more. The scene walk must
// also survive the input read directly as an entity table
// (untold_fuzz::check_open). fuzz_structured checks the same properties on
// mutants that keep the file decodable.
#include "traverse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  untold_fuzz::check_open(untold_fuzz::as_span(data, size));
  return 0;
}
