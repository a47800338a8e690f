// fuzz_udm_ascii: untold::udm::read_ascii on arbitrary text.
// Properties:
//   - never reads outside the input, never overflows the stack (nesting is
//     capped by limits.max_depth);
//   - every failure carries a UDM- rule id;
//   - an accepted tree writes as binary, parses back, and writes as ASCII
//     text that reads back to the same tree.
#include <cmath>  // before traverse.hpp, which uses std::isfinite without including it

#include "traverse.hpp"

#include <untold/udm/udm.hpp>

namespace u = untold::udm;
using untold_fuzz::die;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  u::ascii_read_options o;
  o.limits.max_depth = 64;
  o.limits.max_records = 1 << 16;
  o.limits.max_chunk_bytes = 1 << 20;
  o.limits.max_total_bytes = 4 << 20;
  auto tree = u::read_ascii(text, o);
  if (!tree) {
    if (!tree.error().rule_id().starts_with("UDM-") && tree.error().rule_id() != "E-ENCODE")
      die("error without a UDM rule id: " + tree.error().describe());
    return 0;
  }
  auto bin = u::write_binary(*tree);
  if (!bin) die("an accepted tree cannot be written: " + bin.error().describe());
  u::read_options ro;
  ro.limits = o.limits;
  ro.limits.max_depth = 2 * o.limits.max_depth + 2;  // arrays and elements count alike in binary
  auto doc = u::document::parse(*bin, ro);
  // LZ4 data given as base64 is not checked by the text reader; the binary
  // reader decodes it and may reject it (UDM-LZ4 / UDM-LIMITS / UDM-BLOCK-SIZE).
  if (!doc) {
    if (!doc.error().rule_id().starts_with("UDM-")) die("binary error without a UDM rule id");
    return 0;
  }
  auto again = u::write_ascii(*tree);
  if (!again) die("an accepted tree cannot be written as ASCII");
  auto back = u::read_ascii(*again, o);
  if (!back || !(*back == *tree)) die("ASCII -> tree -> ASCII -> tree changed the tree");
  return 0;
}
