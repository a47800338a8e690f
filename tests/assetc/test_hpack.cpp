// .hpack v2: hand-made bytes, writer determinism, lookup by path, layout, and
// hostile TOCs (overlaps, order, ranges past the end, wrap-around, TOC size).
#include "assetc_support.hpp"

#include <optional>

using namespace hm_test;

namespace {

struct toc_row {
  std::uint64_t offset, size;
  std::uint8_t kind;
  std::string path;
};

/// A pack written by hand: header, the rows as given, payload bytes 0xAB up to `file_size`.
bytes hand_pack(const std::vector<toc_row>& rows, std::size_t file_size, std::optional<std::uint64_t> toc_bytes = std::nullopt) {
  gen toc;
  for (const toc_row& r : rows) {
    toc.u64(r.offset), toc.u64(r.size), toc.u8(r.kind), toc.u16(static_cast<std::uint32_t>(r.path.size()));
    toc.str(r.path);
  }
  gen g;
  g.tag("HPAK"), g.u32(2), g.u32(static_cast<std::uint32_t>(rows.size())), g.u32(0);
  g.u64(toc_bytes.value_or(toc.size()));
  g.out.insert(g.out.end(), toc.out.begin(), toc.out.end());
  while (g.size() < file_size) g.u8(0xAB);
  return g.out;
}

std::string hpack_rule(const bytes& b, untold::limits lim = {}) { return rule_of(ua::open_hpack(span(b), {.limits = lim})); }

const bytes mesh_bytes(17, std::byte{0x11});
const bytes mat_bytes(3, std::byte{0x22});

}  // namespace

TEST_CASE("hpack: writer bytes equal a hand-made pack") {
  const ua::pack_file files[] = {{"m.hmesh", span(mesh_bytes)}, {"a/b.hmat", span(mat_bytes)}};
  auto out = ua::write_hpack(files);
  REQUIRE_MESSAGE(out, out.error().describe());
  // TOC: (19 + 8) + (19 + 7) = 53 bytes; payloads at 80 and 96; file padded to 128.
  bytes expected = hand_pack({{80, 3, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128);
  std::fill(expected.begin() + 77, expected.end(), std::byte{0});
  std::copy(mat_bytes.begin(), mat_bytes.end(), expected.begin() + 80);
  std::copy(mesh_bytes.begin(), mesh_bytes.end(), expected.begin() + 96);
  CHECK(*out == expected);
  // Input order does not matter.
  const ua::pack_file swapped[] = {files[1], files[0]};
  CHECK(*ua::write_hpack(swapped) == *out);
}

TEST_CASE("hpack: lookup by path, entries as views, layout") {
  std::vector<bytes> payloads;
  std::vector<std::string> names;
  for (int i = 0; i < 50; ++i) {
    names.push_back("dir" + std::to_string(i % 7) + "/file_" + std::to_string(i) + (i % 2 ? ".ktx2" : ".hmesh"));
    payloads.emplace_back(static_cast<std::size_t>(i * 3), static_cast<std::byte>(i));
  }
  std::vector<ua::pack_file> files;
  for (int i = 0; i < 50; ++i) files.push_back({names[static_cast<std::size_t>(i)], span(payloads[static_cast<std::size_t>(i)])});
  auto out = ua::write_hpack(files);
  REQUIRE(out);
  auto p = ua::open_hpack(span(*out));
  REQUIRE_MESSAGE(p, p.error().describe());
  REQUIRE(p->size() == 50);
  for (int i = 0; i < 50; ++i) {
    const auto idx = static_cast<std::size_t>(i);
    const ua::pack_entry* e = p->find(names[idx]);
    REQUIRE(e != nullptr);
    CHECK(e->kind == static_cast<std::uint8_t>(i % 2 ? ua::pack_kind::ktx2 : ua::pack_kind::hmesh));
    const untold::byte_span s = p->bytes(*e);
    CHECK(s.size() == payloads[idx].size());
    CHECK(std::equal(s.begin(), s.end(), payloads[idx].begin(), payloads[idx].end()));
    if (!s.empty()) CHECK(s.data() >= out->data());  // a view into the pack, not a copy
    CHECK(e->offset % 16 == 0);
  }
  CHECK(p->find("dir0/file_0.hmesh ") == nullptr);
  CHECK(p->find("") == nullptr);
  CHECK(!p->bytes("nope"));
  const ua::pack_layout l = p->layout();
  CHECK(l.file == out->size());
  CHECK(l.header + l.toc + l.payload + l.padding == l.file);
  std::uint64_t payload = 0;
  for (const auto& x : payloads) payload += x.size();
  CHECK(l.payload == payload);
}

TEST_CASE("hpack: kinds from the extension") {
  CHECK(ua::pack_kind_for_path("a/b.hmesh") == ua::pack_kind::hmesh);
  CHECK(ua::pack_kind_for_path("a/b.HMAT") == ua::pack_kind::hmat);
  CHECK(ua::pack_kind_for_path("assets.hman") == ua::pack_kind::hman);
  CHECK(ua::pack_kind_for_path("a.hanim") == ua::pack_kind::hanim);
  CHECK(ua::pack_kind_for_path("t/tex_0.ktx2") == ua::pack_kind::ktx2);
  CHECK(ua::pack_kind_for_path("s.shader/vertex.spv") == ua::pack_kind::spv);
  CHECK(ua::pack_kind_for_path("f.hfont") == ua::pack_kind::hfont);
  CHECK(ua::pack_kind_for_path("a.hmesh/readme") == ua::pack_kind::other);
  CHECK(ua::pack_kind_for_path("notes.txt") == ua::pack_kind::other);
}

TEST_CASE("hpack: hostile TOCs") {
  SUBCASE("a valid hand-made pack opens") { CHECK(hpack_rule(hand_pack({{80, 3, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128)) == "OK"); }
  SUBCASE("HM-HPAK-RANGE: overlapping entries") {
    CHECK(hpack_rule(hand_pack({{80, 20, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128)) == "HM-HPAK-RANGE");
  }
  SUBCASE("HM-HPAK-RANGE: two entries at one offset") {
    CHECK(hpack_rule(hand_pack({{96, 3, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128)) == "HM-HPAK-RANGE");
  }
  SUBCASE("zero-size entries may share an offset") {
    CHECK(hpack_rule(hand_pack({{96, 0, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128)) == "OK");
  }
  SUBCASE("HM-HPAK-ORDER: paths out of order") {
    CHECK(hpack_rule(hand_pack({{96, 17, 1, "m.hmesh"}, {80, 3, 2, "a/b.hmat"}}, 128)) == "HM-HPAK-ORDER");
  }
  SUBCASE("HM-HPAK-ORDER: a duplicated path") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "m.hmesh"}, {96, 17, 1, "m.hmesh"}}, 128)) == "HM-HPAK-ORDER");
  }
  SUBCASE("HM-HPAK-RANGE: past the end") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "a/b.hmat"}, {96, 33, 1, "m.hmesh"}}, 128)) == "HM-HPAK-RANGE");
  }
  SUBCASE("HM-HPAK-RANGE: offset + size wrapping") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "a/b.hmat"}, {96, ~std::uint64_t{0} - 40, 1, "m.hmesh"}}, 128),
               {.max_chunk_bytes = ~std::uint64_t{0}}) == "HM-HPAK-RANGE");
  }
  SUBCASE("HM-HPAK-RANGE: an offset far past the end") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "a/b.hmat"}, {std::uint64_t{1} << 60, 1, 1, "m.hmesh"}}, 128)) == "HM-HPAK-RANGE");
  }
  SUBCASE("HM-HPAK-RANGE: unaligned") {
    CHECK(hpack_rule(hand_pack({{81, 3, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128)) == "HM-HPAK-RANGE");
  }
  SUBCASE("HM-HPAK-RANGE: inside the header and TOC") {
    CHECK(hpack_rule(hand_pack({{16, 3, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128)) == "HM-HPAK-RANGE");
  }
  SUBCASE("HM-HPAK-TOC: tocBytes larger than the entries") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128, 54)) == "HM-HPAK-TOC");
  }
  SUBCASE("HM-TRUNC: tocBytes smaller than the entries") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128, 50)) == "HM-TRUNC");
  }
  SUBCASE("HM-TRUNC: tocBytes past the end of the file") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "a/b.hmat"}}, 96, 1000)) == "HM-TRUNC");
  }
  SUBCASE("HM-TRUNC: tocBytes near 2^64") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "a/b.hmat"}}, 96, ~std::uint64_t{0} - 1)) == "HM-TRUNC");
  }
  SUBCASE("HM-COUNT: a count the TOC cannot hold") {
    bytes b = hand_pack({{80, 3, 2, "a/b.hmat"}}, 96);
    wr32(b, 8, 0xFFFFFFF0u);
    CHECK(hpack_rule(b, {.max_chunks = 0xFFFFFFFFu}) == "HM-COUNT");
  }
  SUBCASE("HM-LIMITS: entry count") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "a/b.hmat"}, {96, 17, 1, "m.hmesh"}}, 128), {.max_chunks = 1}) == "HM-LIMITS");
  }
  SUBCASE("HM-PATH") {
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "../b.hmat"}}, 96)) == "HM-PATH");
    CHECK(hpack_rule(hand_pack({{80, 3, 2, "/etc/passwd"}}, 96)) == "HM-PATH");
    CHECK(hpack_rule(hand_pack({{80, 3, 2, ""}}, 96)) == "HM-PATH");
  }
  SUBCASE("HM-VERSION and HM-MAGIC") {
    bytes b = hand_pack({{80, 3, 2, "a/b.hmat"}}, 96);
    wr32(b, 4, 1);
    CHECK(hpack_rule(b) == "HM-VERSION");
    b[0] = std::byte{0};
    CHECK(hpack_rule(b) == "HM-MAGIC");
  }
  SUBCASE("the writer refuses duplicated and unsafe paths") {
    const ua::pack_file dup[] = {{"x.hmat", span(mat_bytes)}, {"x.hmat", span(mesh_bytes)}};
    CHECK(rule_of(ua::write_hpack(dup)) == "HM-HPAK-ORDER");
    const ua::pack_file bad[] = {{"a/../../x", span(mat_bytes)}};
    CHECK(rule_of(ua::write_hpack(bad)) == "HM-PATH");
  }
}
