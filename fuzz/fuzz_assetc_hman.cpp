// fuzz_assetc_hman: untold::assetc::open_hman on arbitrary bytes.
// Properties: nothing reads outside the bytes; rejections carry HM- rule
// ids; find() returns every entry by its hash; a valid file is exactly what
// write_hman makes of its entries once the reserved header field is zeroed.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <untold/assetc/hman.hpp>

#include "die.hpp"

using untold_fuzz::die;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace ua = untold::assetc;
  std::vector<std::byte> buffer(size);
  if (size != 0) std::memcpy(buffer.data(), data, size);
  auto h = ua::open_hman(buffer, {.limits = {.max_records = 1u << 16}});
  if (!h) {
    if (!h.error().rule_id().starts_with("HM-")) die("rejection without an HM- rule: " + h.error().describe());
    return 0;
  }
  for (const ua::manifest_entry& e : h->entries())
    if (h->find(e.hash) != &e) die("find() misses an entry");
  auto out = ua::write_hman(h->entries());
  if (!out) die("a valid manifest did not write back: " + out.error().describe());
  std::vector<std::byte> canonical = buffer;
  std::memset(canonical.data() + 12, 0, 4);
  if (*out != canonical) die("write_hman(open_hman(x)) != x");
  return 0;
}
