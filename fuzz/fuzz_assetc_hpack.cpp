// fuzz_assetc_hpack: untold::assetc::open_hpack on arbitrary bytes.
// Properties: nothing reads outside the bytes; rejections carry HM- rule
// ids; find() returns every entry by its path; entries are disjoint spans
// inside the file and the layout adds up to the file size; packing the
// entries again gives a pack that reopens with the same paths and bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <untold/assetc/hpack.hpp>

#include "die.hpp"

using untold_fuzz::die;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace ua = untold::assetc;
  std::vector<std::byte> buffer(size);
  if (size != 0) std::memcpy(buffer.data(), data, size);
  auto p = ua::open_hpack(buffer);
  if (!p) {
    if (!p.error().rule_id().starts_with("HM-")) die("rejection without an HM- rule: " + p.error().describe());
    return 0;
  }
  std::vector<ua::pack_file> files;
  for (const ua::pack_entry& e : p->entries()) {
    if (p->find(e.path) != &e) die("find() misses an entry");
    const untold::byte_span s = p->bytes(e);
    if (s.size() != e.size || (e.size != 0 && (s.data() < buffer.data() || s.data() + s.size() > buffer.data() + buffer.size())))
      die("an entry's span is not inside the file");
    files.push_back({e.path, s, e.kind});
  }
  const ua::pack_layout l = p->layout();
  if (l.header + l.toc + l.payload + l.padding != l.file || l.file != size) die("layout does not add up");
  auto again = ua::write_hpack(files);
  if (!again) die("a valid pack did not write back: " + again.error().describe());
  auto q = ua::open_hpack(*again);
  if (!q) die("a rewritten pack does not reopen: " + q.error().describe());
  if (q->size() != p->size()) die("entry count changed");
  for (std::size_t i = 0; i < p->size(); ++i) {
    const auto a = p->bytes(p->entries()[i]);
    const auto b = q->bytes(q->entries()[i]);
    if (p->entries()[i].path != q->entries()[i].path || p->entries()[i].kind != q->entries()[i].kind ||
        a.size() != b.size() || (a.size() != 0 && std::memcmp(a.data(), b.data(), a.size()) != 0))
      die("an entry changed on rewrite");
  }
  return 0;
}
