// fuzz_assetc_hmat: untold::assetc::open_hmat on arbitrary bytes.
// Properties: nothing reads outside the bytes; rejections carry HM- rule
// ids; deep-valid implies valid; a valid file is exactly what write_hmat
// makes of its rows, once the header flags and row pads are zeroed.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <untold/assetc/hmat.hpp>

#include "die.hpp"

using untold_fuzz::die;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace ua = untold::assetc;
  std::vector<std::byte> buffer(size);
  if (size != 0) std::memcpy(buffer.data(), data, size);
  auto plain = ua::open_hmat(buffer);
  auto deep = ua::open_hmat(buffer, {.deep_checks = true});
  for (const auto* r : {&plain, &deep})
    if (!*r && !r->error().rule_id().starts_with("HM-")) die("rejection without an HM- rule: " + r->error().describe());
  if (deep && !plain) die("deep-valid but not valid");
  if (!plain) return 0;
  const std::vector<ua::material> rows(plain->rows().begin(), plain->rows().end());
  auto out = ua::write_hmat(rows);
  if (!out) die("a valid table did not write back: " + out.error().describe());
  std::vector<std::byte> canonical = buffer;
  std::memset(canonical.data() + 12, 0, 4);
  for (std::size_t i = 0; i < rows.size(); ++i) std::memset(canonical.data() + 16 + 96 * i + 52, 0, 4);
  if (*out != canonical) die("write_hmat(open_hmat(x)) != x");
  return 0;
}
