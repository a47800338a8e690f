// fuzz_udm_ascii: untold::udm::open_ascii on arbitrary text.
// Properties:
//   - never reads outside the input, never overflows the stack (nesting is
//     capped by limits.max_depth);
//   - every failure carries a UDM- rule id;
//   - an accepted tree writes as binary (which the writer reads back: LZ4
//     data given as base64 is decoded there and may be refused, with a UDM-
//     rule id), and as ASCII text that reads back to the same tree;
//   - the converter cook uses runs on the binary document, sharing the
//     text's budget as the CLI does (fuzz_udm_common.hpp).
#include <cmath>  // before traverse.hpp, which uses std::isfinite without including it

#include "fuzz_udm_common.hpp"
#include "traverse.hpp"

#include <untold/udm/udm.hpp>

namespace u = untold::udm;
using untold_fuzz::die;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  u::ascii_open_options o;
  o.limits.max_depth = 64;
  o.limits.max_records = 1 << 16;
  o.limits.max_chunk_bytes = 1 << 20;
  o.limits.max_total_bytes = 4 << 20;
  untold::budget charged(o.limits, size);
  o.budget = &charged;
  auto tree = u::open_ascii(text, o);
  if (!tree) {
    if (!tree.error().rule_id().starts_with("UDM-") && tree.error().rule_id() != "E-ENCODE")
      die("error without a UDM rule id: " + tree.error().describe());
    return 0;
  }
  u::open_options ro;
  ro.limits = o.limits;
  ro.limits.max_depth = 2 * o.limits.max_depth + 2;  // arrays and elements count alike in binary
  ro.budget = &charged;
  // The writer's read-back decodes the LZ4 data the text gave as base64
  // (the text reader keeps it as is), and may refuse it (UDM-LZ4,
  // UDM-LIMITS, UDM-BLOCK-SIZE).
  auto bin = u::write_binary(*tree, {.limits = ro.limits, .budget = &charged});
  if (!bin) {
    if (!bin.error().rule_id().starts_with("UDM-")) die("write error without a UDM rule id: " + bin.error().describe());
    return 0;
  }
  auto doc = u::open_document(*bin, ro);
  if (!doc) {
    // Only the shared budget may refuse what the writer's read-back accepted.
    if (doc.error().code != untold::errc::udm_limit) die("the writer's output is refused: " + doc.error().describe());
    return 0;
  }
  udm_fuzz::check_cook(*doc, ro.limits, charged);
  auto again = u::write_ascii(*tree);
  if (!again) die("an accepted tree cannot be written as ASCII");
  o.budget = nullptr;
  auto back = u::open_ascii(*again, o);
  if (!back || !(*back == *tree)) die("ASCII -> tree -> ASCII -> tree changed the tree");
  return 0;
}
