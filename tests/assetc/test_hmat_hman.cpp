// .hmat and .hman: hand-made bytes, round trips, lookups and crafted files per rule.
#include "assetc_support.hpp"

#include <limits>

using namespace hm_test;

namespace {

ua::material sample_material() {
  ua::material m;
  m.base_color = {0.5f, 0.25f, 1, 1};
  m.emissive = {0, 0.125f, 0};
  m.metallic = 0;
  m.roughness = 0.75f;
  m.alpha_cutoff = 0.25f;
  m.flags = ua::material::make_flags(true, ua::alpha_mode::mask);
  m.base_color_tex = ua::hash_ref("models/chair/tex_0");
  m.normal_tex = ua::hash_ref("models/chair/tex_1");
  return m;
}

bytes hand_made_hmat() {
  gen g;
  g.tag("HMAT"), g.u32(1), g.u32(2), g.u32(0);
  // Row 0: glTF defaults.
  for (float f : {1.f, 1.f, 1.f, 1.f, 0.f, 0.f, 0.f, 1.f, 1.f, 1.f, 1.f, 0.5f}) g.f32(f);
  g.u32(0), g.u32(0);
  for (int i = 0; i < 5; ++i) g.u64(0);
  // Row 1: the sample.
  for (float f : {0.5f, 0.25f, 1.f, 1.f, 0.f, 0.125f, 0.f, 0.f, 0.75f, 1.f, 1.f, 0.25f}) g.f32(f);
  g.u32(1 | (1 << 1)), g.u32(0);
  g.u64(ua::hash_ref("models/chair/tex_0")), g.u64(0), g.u64(ua::hash_ref("models/chair/tex_1")), g.u64(0), g.u64(0);
  return g.out;
}

std::vector<ua::manifest_entry> sample_entries() {
  return {{ua::hash_ref("models/chair/tex_1"), 0, 0, "models/chair/tex_1.ktx2"},
          {ua::hash_ref("models/chair/tex_0"), 0, 1, "models/chair/tex_0.ktx2"},
          {ua::hash_ref("court/tex_0"), 0, 1, "court/tex_0.ktx2"}};
}

}  // namespace

TEST_CASE("hmat: writer bytes equal the hand-made file, rows read back") {
  const ua::material rows[] = {ua::material{}, sample_material()};
  auto bytes_ = ua::write_hmat(rows);
  REQUIRE(bytes_);
  CHECK(bytes_->size() == 16 + 2 * 96);
  CHECK(*bytes_ == hand_made_hmat());
  auto h = ua::open_hmat(span(*bytes_), {.deep_checks = true});
  REQUIRE(h);
  REQUIRE(h->size() == 2);
  CHECK(h->rows()[0] == ua::material{});
  CHECK(h->rows()[1] == sample_material());
  CHECK(h->rows()[1].double_sided());
  CHECK(h->rows()[1].alpha() == ua::alpha_mode::mask);
  CHECK(h->rows()[1].textures()[2] == ua::hash_ref("models/chair/tex_1"));
  // At an odd address too.
  bytes shifted(bytes_->size() + 3);
  std::copy(bytes_->begin(), bytes_->end(), shifted.begin() + 3);
  auto h3 = ua::open_hmat(untold::byte_span(shifted).subspan(3));
  REQUIRE(h3);
  CHECK(h3->rows()[1] == sample_material());
}

TEST_CASE("hmat rules") {
  bytes b = hand_made_hmat();
  auto rule = [](const bytes& x, bool deep = false, untold::limits lim = {}) {
    return rule_of(ua::open_hmat(span(x), {.limits = lim, .deep_checks = deep}));
  };
  SUBCASE("HM-MAGIC") {
    b[0] = std::byte{'X'};
    CHECK(rule(b) == "HM-MAGIC");
  }
  SUBCASE("HM-TRUNC") {
    b.resize(10);
    CHECK(rule(b) == "HM-TRUNC");
  }
  SUBCASE("HM-VERSION") {
    wr32(b, 4, 2);
    CHECK(rule(b) == "HM-VERSION");
  }
  SUBCASE("HM-HMAT-SIZE: one byte more") {
    b.push_back(std::byte{0});
    CHECK(rule(b) == "HM-HMAT-SIZE");
  }
  SUBCASE("HM-HMAT-SIZE: count larger than the rows") {
    wr32(b, 8, 3);
    CHECK(rule(b) == "HM-HMAT-SIZE");
  }
  SUBCASE("HM-HMAT-SIZE: count x 96 near 2^32") {
    wr32(b, 8, 0xFFFFFFFFu);
    CHECK(rule(b, false, {.max_records = 0xFFFFFFFFu}) == "HM-HMAT-SIZE");
  }
  SUBCASE("HM-LIMITS") {
    CHECK(rule(b, false, {.max_records = 1}) == "HM-LIMITS");
  }
  SUBCASE("HM-HMAT-ALPHA") {
    wr32(b, 16 + 96 + 48, 3u << 1);
    CHECK(rule(b) == "HM-HMAT-ALPHA");
  }
  SUBCASE("HM-FINITE (deep only)") {
    wrf(b, 16 + 96 + 32, std::numeric_limits<float>::infinity());
    CHECK(rule(b) == "OK");
    CHECK(rule(b, true) == "HM-FINITE");
  }
  SUBCASE("the writer refuses alpha mode 3") {
    ua::material m;
    m.flags = 6;
    CHECK(rule_of(ua::write_hmat(std::span(&m, 1))) == "HM-HMAT-ALPHA");
  }
}

TEST_CASE("hman: sorted, deduplicated writer, lookup by hash") {
  auto entries = sample_entries();
  entries.push_back(entries[0]);  // identical (hash, path): written once
  auto out = ua::write_hman(entries);
  REQUIRE_MESSAGE(out, out.error().describe());
  auto h = ua::open_hman(span(*out));
  REQUIRE(h);
  REQUIRE(h->size() == 3);
  for (std::size_t i = 1; i < h->size(); ++i) CHECK(h->entries()[i - 1].hash < h->entries()[i].hash);
  const ua::manifest_entry* e = h->find(ua::hash_ref("models/chair/tex_0"));
  REQUIRE(e != nullptr);
  CHECK(e->path == "models/chair/tex_0.ktx2");
  CHECK(e->colorspace == 1);
  CHECK(h->find(ua::hash_ref("nothing")) == nullptr);
  // Input order does not matter.
  auto reversed = sample_entries();
  std::reverse(reversed.begin(), reversed.end());
  CHECK(*ua::write_hman(reversed) == *out);
}

TEST_CASE("hman: hand-made bytes") {
  gen g;
  g.tag("HMAN"), g.u32(1), g.u32(1), g.u32(0);
  g.u64(0xad44c4a2970495b9ull), g.u8(0), g.u8(1), g.u16(16), g.str("court/tex_0.ktx2");
  const ua::manifest_entry e{0xad44c4a2970495b9ull, 0, 1, "court/tex_0.ktx2"};
  auto out = ua::write_hman(std::span(&e, 1));
  REQUIRE(out);
  CHECK(*out == g.out);
}

TEST_CASE("hman rules") {
  const auto entries = sample_entries();
  bytes b = *ua::write_hman(entries);
  auto rule = [](const bytes& x, untold::limits lim = {}) { return rule_of(ua::open_hman(span(x), {.limits = lim})); };
  // Entry layout: 16-byte header, then (12 + pathLen) per entry.
  SUBCASE("HM-MAGIC") {
    b[1] = std::byte{0};
    CHECK(rule(b) == "HM-MAGIC");
  }
  SUBCASE("HM-VERSION") {
    wr32(b, 4, 2);
    CHECK(rule(b) == "HM-VERSION");
  }
  SUBCASE("HM-COUNT: more entries than bytes") {
    wr32(b, 8, 1000);
    CHECK(rule(b) == "HM-COUNT");
  }
  SUBCASE("HM-LIMITS") {
    CHECK(rule(b, {.max_records = 2}) == "HM-LIMITS");
  }
  SUBCASE("HM-TRUNC: a path running past the end") {
    b.resize(b.size() - 3);
    CHECK(rule(b) == "HM-TRUNC");
  }
  SUBCASE("HM-TRAILING") {
    b.push_back(std::byte{0});
    CHECK(rule(b) == "HM-TRAILING");
  }
  SUBCASE("HM-HMAN-ORDER: swapped hashes") {
    const std::uint64_t first = rd64(b, 16);
    const std::size_t second_at = 16 + 12 + rd32(b, 16 + 10) % 65536;
    wr64(b, 16, rd64(b, second_at));
    wr64(b, second_at, first);
    CHECK(rule(b) == "HM-HMAN-ORDER");
  }
  SUBCASE("HM-HMAN-ORDER: a duplicated hash") {
    const std::size_t second_at = 16 + 12 + (rd32(b, 16 + 8) >> 16);
    wr64(b, second_at, rd64(b, 16));
    CHECK(rule(b) == "HM-HMAN-ORDER");
  }
  SUBCASE("HM-HMAN-COLORSPACE") {
    b[16 + 9] = std::byte{2};
    CHECK(rule(b) == "HM-HMAN-COLORSPACE");
  }
  SUBCASE("HM-PATH: climbing out of the root") {
    const std::size_t len = rd32(b, 16 + 8) >> 16;
    REQUIRE(len >= 3);
    b[16 + 12] = std::byte{'.'}, b[16 + 13] = std::byte{'.'}, b[16 + 14] = std::byte{'/'};
    CHECK(rule(b) == "HM-PATH");
  }
  SUBCASE("the writer refuses a collision") {
    auto e = entries;
    e.push_back({e[0].hash, 0, 0, "other/path.ktx2"});
    const auto r = ua::write_hman(e);
    REQUIRE(!r);
    CHECK(r.error().rule_id() == "HM-HMAN-ORDER");
    CHECK(r.error().subject() == "other/path.ktx2");
  }
  SUBCASE("the writer refuses unsafe paths") {
    for (std::string_view p : {"", "/abs/x.ktx2", "a/../b", "a//b", "a\\b", "./a", "a/."}) {
      const ua::manifest_entry e{1, 0, 0, p};
      CHECK_MESSAGE(rule_of(ua::write_hman(std::span(&e, 1))) == "HM-PATH", p);
    }
  }
}
