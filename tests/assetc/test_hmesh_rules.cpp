// .hmesh: one crafted file per rule, each made by patching the valid fixture
// at offsets read from its own table.
#include "assetc_support.hpp"

#include <limits>

using namespace hm_test;

namespace {

std::string open_rule(const bytes& b, bool deep = false, untold::limits lim = {}) {
  return rule_of(ua::open_hmesh(span(b), {.limits = lim, .deep_checks = deep}));
}

/// The rule with deep checks, after checking the structural pass accepts the file.
std::string deep_only_rule(const bytes& b) {
  CHECK(open_rule(b, false) == "OK");
  return open_rule(b, true);
}

}  // namespace

TEST_CASE("hmesh rules: the fixture is valid, deep included") {
  const bytes b = fixture_mesh();
  CHECK(open_rule(b, true) == "OK");
}

TEST_CASE("hmesh rules: header and table") {
  bytes b = fixture_mesh();
  SUBCASE("HM-MAGIC") {
    b[3] = std::byte{'X'};
    CHECK(open_rule(b) == "HM-MAGIC");
  }
  SUBCASE("HM-TRUNC: inside the header") {
    b.resize(20);
    CHECK(open_rule(b) == "HM-TRUNC");
  }
  SUBCASE("HM-TRUNC: inside the table") {
    b.resize(32 + 24 * 3);
    CHECK(open_rule(b) == "HM-TRUNC");
  }
  SUBCASE("HM-TRUNC: a chunk count whose table would wrap around") {
    wr32(b, 8, 0xFFFFFFFFu);
    CHECK(open_rule(b, false, {.max_chunks = 0xFFFFFFFFu}) == "HM-TRUNC");
  }
  SUBCASE("HM-VERSION") {
    wr32(b, 4, 1);
    CHECK(open_rule(b) == "HM-VERSION");
  }
  SUBCASE("HM-LIMITS: chunk count") {
    CHECK(open_rule(b, false, {.max_chunks = 14}) == "HM-LIMITS");
  }
  SUBCASE("HM-LIMITS: DESC counts") {
    CHECK(open_rule(b, false, {.max_records = 3}) == "HM-LIMITS");
  }
  SUBCASE("HM-LIMITS: one chunk's bytes") {
    CHECK(open_rule(b, false, {.max_chunk_bytes = 100}) == "HM-LIMITS");
  }
  SUBCASE("HM-CHUNK-ALIGN") {
    wr64(b, entry_at(b, "VTXS") + 8, chunk_at(b, "VTXS") + 4);
    CHECK(open_rule(b) == "HM-CHUNK-ALIGN");
  }
  SUBCASE("HM-CHUNK-RANGE: past the end") {
    wr64(b, entry_at(b, "XTRA") + 16, 100);
    CHECK(open_rule(b) == "HM-CHUNK-RANGE");
  }
  SUBCASE("HM-CHUNK-RANGE: a size that wraps offset + size") {
    wr64(b, entry_at(b, "XTRA") + 16, ~std::uint64_t{0} - 8);
    CHECK(open_rule(b, false, {.max_chunk_bytes = ~std::uint64_t{0}}) == "HM-CHUNK-RANGE");
  }
  SUBCASE("HM-CHUNK-RANGE: overlapping chunks") {
    wr64(b, entry_at(b, "IDXS") + 8, chunk_at(b, "VTXS") + 16);
    CHECK(open_rule(b) == "HM-CHUNK-RANGE");
  }
  SUBCASE("HM-CHUNK-RANGE: inside the chunk table") {
    wr64(b, entry_at(b, "DESC") + 8, 48);
    CHECK(open_rule(b) == "HM-CHUNK-RANGE");
  }
  SUBCASE("HM-DUP-CHUNK") {
    wr32(b, entry_at(b, "XTRA"), tag_value("BNDS"));
    const auto r = ua::open_hmesh(span(b));
    REQUIRE(!r);
    CHECK(r.error().rule_id() == "HM-DUP-CHUNK");
    CHECK(r.error().context.chunk_index == 14);
    CHECK(r.error().context.chunk_type == tag_value("BNDS"));
  }
  SUBCASE("unknown chunks may repeat") {
    const std::size_t e = entry_at(b, "XTRA");
    wr32(b, e - 24, tag_value("XTRA"));  // LODT becomes a second XTRA: LOD table gone, LODI alone is fine
    CHECK(open_rule(b, true) == "OK");
  }
}

TEST_CASE("hmesh rules: DESC and chunk sizes") {
  bytes b = fixture_mesh();
  const std::size_t desc = chunk_at(b, "DESC");
  SUBCASE("HM-MISSING-CHUNK: no DESC") {
    wr32(b, entry_at(b, "DESC"), tag_value("DESX"));
    CHECK(open_rule(b) == "HM-MISSING-CHUNK");
  }
  SUBCASE("HM-MISSING-CHUNK: vertices counted but no VTXS") {
    wr32(b, entry_at(b, "VTXS"), tag_value("VTXX"));
    CHECK(open_rule(b) == "HM-MISSING-CHUNK");
  }
  SUBCASE("HM-MISSING-CHUNK: SKIN without SKEL") {
    wr32(b, entry_at(b, "SKEL"), tag_value("SKEX"));
    CHECK(open_rule(b) == "HM-MISSING-CHUNK");
  }
  SUBCASE("HM-DESC: vertexStride") {
    wr16(b, desc + 20, 36);
    CHECK(open_rule(b) == "HM-DESC");
  }
  SUBCASE("HM-DESC: indexWidth") {
    b[desc + 22] = std::byte{3};
    CHECK(open_rule(b) == "HM-DESC");
  }
  SUBCASE("HM-CHUNK-SIZE: DESC is not 32 bytes") {
    wr64(b, entry_at(b, "DESC") + 16, 28);
    CHECK(open_rule(b) == "HM-CHUNK-SIZE");
  }
  SUBCASE("HM-CHUNK-SIZE: indexCount disagrees with IDXS") {
    wr32(b, desc + 4, 5);
    CHECK(open_rule(b) == "HM-CHUNK-SIZE");
  }
  SUBCASE("HM-CHUNK-SIZE: vertexCount disagrees with VTXS") {
    wr32(b, desc + 0, 3);
    CHECK(open_rule(b) == "HM-CHUNK-SIZE");
  }
  SUBCASE("HM-CHUNK-SIZE: materialCount disagrees with MTRL") {
    wr32(b, desc + 16, 3);
    CHECK(open_rule(b) == "HM-CHUNK-SIZE");
  }
  SUBCASE("HM-CHUNK-SIZE: MLVR not whole u32s") {
    wr64(b, entry_at(b, "MLVR") + 16, 15);
    CHECK(open_rule(b) == "HM-CHUNK-SIZE");
  }
  SUBCASE("HM-CHUNK-SIZE: BNDS") {
    wr64(b, entry_at(b, "BNDS") + 16, 36);
    CHECK(open_rule(b) == "HM-CHUNK-SIZE");
  }
  SUBCASE("HM-CHUNK-SIZE: LODT rows disagree with lodCount") {
    wr32(b, chunk_at(b, "LODT"), 2);
    CHECK(open_rule(b) == "HM-CHUNK-SIZE");
  }
  SUBCASE("HM-CHUNK-SIZE: LODT lodCount x submeshCount overflowing") {
    wr32(b, chunk_at(b, "LODT"), 0x80000001u);
    CHECK(open_rule(b) == "HM-CHUNK-SIZE");
  }
}

TEST_CASE("hmesh rules: submeshes, meshlets, skeleton, LODs") {
  bytes b = fixture_mesh();
  const std::size_t subm = chunk_at(b, "SUBM");
  const std::size_t mlet = chunk_at(b, "MLET");
  SUBCASE("HM-SUBMESH-RANGE: index range") {
    wr32(b, subm + 64 + 4, 4);  // submesh 1: [3, 7) > 6
    const auto r = ua::open_hmesh(span(b));
    REQUIRE(!r);
    CHECK(r.error().rule_id() == "HM-SUBMESH-RANGE");
    CHECK(r.error().context.record_index == 1);
    CHECK(std::string(r.error().context.field) == "indexCount");
  }
  SUBCASE("HM-SUBMESH-RANGE: firstIndex + indexCount wrapping u32") {
    wr32(b, subm + 64, 0xFFFFFFFFu);
    CHECK(open_rule(b) == "HM-SUBMESH-RANGE");
  }
  SUBCASE("HM-SUBMESH-RANGE: meshlet range") {
    wr32(b, subm + 64 + 12, 1);  // submesh 1: meshlets [1, 2) > 1
    CHECK(open_rule(b) == "HM-SUBMESH-RANGE");
  }
  SUBCASE("HM-SUBMESH-RANGE: baseVertex") {
    wr32(b, subm + 20, 5);
    CHECK(open_rule(b) == "HM-SUBMESH-RANGE");
  }
  SUBCASE("HM-MATERIAL-SLOT") {
    wr32(b, subm + 16, 2);
    CHECK(open_rule(b) == "HM-MATERIAL-SLOT");
  }
  SUBCASE("HM-MATERIAL-SLOT accepts 0xFFFFFFFF") {
    wr32(b, subm + 16, 0xFFFFFFFFu);
    CHECK(open_rule(b, true) == "OK");
  }
  SUBCASE("HM-MESHLET-RANGE: vertex range past MLVR") {
    wr32(b, mlet + 4, 5);
    CHECK(open_rule(b) == "HM-MESHLET-RANGE");
  }
  SUBCASE("HM-MESHLET-RANGE: triangle range past MLTR") {
    wr32(b, mlet + 8, 1);
    CHECK(open_rule(b) == "HM-MESHLET-RANGE");
  }
  SUBCASE("HM-MESHLET-RANGE: over DESC meshletMaxVerts") {
    wr32(b, chunk_at(b, "DESC") + 24, 3);
    CHECK(open_rule(b) == "HM-MESHLET-RANGE");
  }
  SUBCASE("HM-MESHLET-RANGE: over DESC meshletMaxTris") {
    wr32(b, chunk_at(b, "DESC") + 28, 1);
    CHECK(open_rule(b) == "HM-MESHLET-RANGE");
  }
  SUBCASE("HM-SKEL-PARENT: itself") {
    wr32(b, chunk_at(b, "SKEL") + 112 + 104, 1);
    CHECK(open_rule(b) == "HM-SKEL-PARENT");
  }
  SUBCASE("HM-SKEL-PARENT: a later joint (would allow a cycle)") {
    wr32(b, chunk_at(b, "SKEL") + 104, 1);
    CHECK(open_rule(b) == "HM-SKEL-PARENT");
  }
  SUBCASE("HM-SKEL-PARENT: negative other than -1") {
    wr32(b, chunk_at(b, "SKEL") + 112 + 104, static_cast<std::uint32_t>(-2));
    CHECK(open_rule(b) == "HM-SKEL-PARENT");
  }
  SUBCASE("HM-LOD-RANGE: LODT submeshCount") {
    wr32(b, chunk_at(b, "LODT") + 4, 3);
    CHECK(open_rule(b) == "HM-LOD-RANGE");
  }
  SUBCASE("HM-LOD-RANGE: a row past LODI") {
    wr32(b, chunk_at(b, "LODT") + 8, 1);  // [1, 4) > 3
    CHECK(open_rule(b) == "HM-LOD-RANGE");
  }
}

TEST_CASE("hmesh rules: overlapping meshlets are refused (keeps the deep pass linear)") {
  mesh_fixture f;
  f.meshlets = {{0, 4, 0, 2}, {0, 4, 0, 2}};
  f.meshlet_bounds.push_back(f.meshlet_bounds[0]);
  f.submeshes[0].meshlet_count = 2;
  CHECK(rule_of(ua::write_hmesh(f.input())) == "HM-MESHLET-RANGE");
}

TEST_CASE("hmesh rules: deep checks") {
  bytes b = fixture_mesh();
  SUBCASE("HM-INDEX-VALUE: IDXS") {
    wr16(b, chunk_at(b, "IDXS") + 10, 4);
    CHECK(deep_only_rule(b) == "HM-INDEX-VALUE");
  }
  SUBCASE("HM-INDEX-VALUE: MLVR") {
    wr32(b, chunk_at(b, "MLVR"), 4);
    CHECK(deep_only_rule(b) == "HM-INDEX-VALUE");
  }
  SUBCASE("HM-INDEX-VALUE: LODI") {
    wr32(b, chunk_at(b, "LODI") + 8, 70000);
    CHECK(deep_only_rule(b) == "HM-INDEX-VALUE");
  }
  SUBCASE("HM-MESHLET-INDEX") {
    b[chunk_at(b, "MLTR") + 5] = std::byte{4};
    const auto r = ua::open_hmesh(span(b), {.deep_checks = true});
    REQUIRE(!r);
    CHECK(r.error().rule_id() == "HM-MESHLET-INDEX");
    CHECK(r.error().context.record_index == 1);  // triangle 1
    CHECK(deep_only_rule(b) == "HM-MESHLET-INDEX");
  }
  SUBCASE("HM-SKIN-JOINT") {
    wr16(b, chunk_at(b, "SKIN") + 24 * 3 + 2, 2);
    CHECK(deep_only_rule(b) == "HM-SKIN-JOINT");
  }
  SUBCASE("HM-FINITE: a weight") {
    wrf(b, chunk_at(b, "SKIN") + 8 + 4, std::numeric_limits<float>::quiet_NaN());
    CHECK(deep_only_rule(b) == "HM-FINITE");
  }
  SUBCASE("HM-FINITE: a position") {
    wrf(b, chunk_at(b, "VTXS") + 28 + 4, std::numeric_limits<float>::infinity());
    CHECK(deep_only_rule(b) == "HM-FINITE");
  }
  SUBCASE("HM-FINITE: BNDS") {
    wrf(b, chunk_at(b, "BNDS") + 36, std::numeric_limits<float>::quiet_NaN());
    CHECK(deep_only_rule(b) == "HM-FINITE");
  }
  SUBCASE("HM-FINITE: a SKEL joint transform (issue 27: NaN in SKEL passed)") {
    // Joint 1's bind translation y (after the 64-byte inverse bind matrix and x).
    wrf(b, chunk_at(b, "SKEL") + 112 + 64 + 4, std::numeric_limits<float>::quiet_NaN());
    CHECK(deep_only_rule(b) == "HM-FINITE");
    const auto r = ua::open_hmesh(span(b), {.deep_checks = true});
    REQUIRE(!r);
    CHECK(r.error().context.record_index == 1);
    CHECK(std::string(r.error().context.field) == "bindTranslation");
    CHECK(r.error().describe().find("value nan (bits 0x7fc00000)") != std::string::npos);
  }
  SUBCASE("HM-FINITE: an infinite inverse bind matrix entry") {
    wrf(b, chunk_at(b, "SKEL") + 4 * 5, std::numeric_limits<float>::infinity());
    CHECK(deep_only_rule(b) == "HM-FINITE");
  }
  SUBCASE("HM-FINITE: submesh bounds") {
    wrf(b, chunk_at(b, "SUBM") + 24, -std::numeric_limits<float>::infinity());
    CHECK(deep_only_rule(b) == "HM-FINITE");
  }
}

TEST_CASE("hmesh rules: errors describe themselves with the chunk") {
  bytes b = fixture_mesh();
  wr32(b, chunk_at(b, "SUBM") + 16, 9);
  const auto r = ua::open_hmesh(span(b));
  REQUIRE(!r);
  const std::string d = r.error().describe();
  CHECK(d.find("HM-MATERIAL-SLOT") == 0);
  CHECK(d.find("field materialSlot") != std::string::npos);
  CHECK(d.find("value 9") != std::string::npos);
  CHECK(r.error().family() == untold::format_family::assetc);
}

TEST_CASE("hmesh: check_meshlet_coverage (HM-MESHLET-COVER)") {
  SUBCASE("the fixture's meshlet covers submesh 0 (its first triangle) only, so it fails") {
    // Submesh 0 holds triangle (0,1,2); its one meshlet holds both triangles.
    const bytes b = fixture_mesh();
    auto m = ua::open_hmesh(span(b));
    REQUIRE(m);
    const auto r = ua::check_meshlet_coverage(*m);
    REQUIRE(!r);
    CHECK(r.error().rule_id() == "HM-MESHLET-COVER");
    CHECK(r.error().context.record_index == 0);
  }
  SUBCASE("one meshlet per submesh, triangles rotated, passes; a changed triangle fails") {
    mesh_fixture f;
    f.meshlets = {{0, 3, 0, 1}, {3, 3, 1, 1}};
    f.meshlet_vertices = {0, 1, 2, 2, 1, 3};
    f.meshlet_triangles = {{{1, 2, 0}}, {{0, 1, 2}}};  // (1,2,0) is (0,1,2) rotated
    f.meshlet_bounds = {f.meshlet_bounds[0], f.meshlet_bounds[0]};
    f.submeshes[1].meshlet_count = 1;
    auto file = ua::write_hmesh(f.input());
    REQUIRE_MESSAGE(file, file.error().describe());
    auto m = ua::open_hmesh(span(*file), {.deep_checks = true});
    REQUIRE(m);
    CHECK(ua::check_meshlet_coverage(*m).has_value());
    f.meshlet_triangles[0] = {{0, 2, 1}};  // flipped winding: not the same triangle
    auto flipped = ua::write_hmesh(f.input());
    REQUIRE(flipped);
    auto m2 = ua::open_hmesh(span(*flipped));
    REQUIRE(m2);
    CHECK(rule_of(ua::check_meshlet_coverage(*m2)) == "HM-MESHLET-COVER");
  }
  SUBCASE("submeshes sharing meshlets are refused up front") {
    mesh_fixture f;
    f.submeshes[1].first_meshlet = 0;
    f.submeshes[1].meshlet_count = 1;
    auto file = ua::write_hmesh(f.input());
    REQUIRE(file);
    auto m = ua::open_hmesh(span(*file));
    REQUIRE(m);
    const auto r = ua::check_meshlet_coverage(*m);
    REQUIRE(!r);
    CHECK(std::string(r.error().context.field) == "meshletCount");
  }
}

namespace {

/// An n x n grid: a meshlet (4 vertices, 2 triangles) per quad, a skin of
/// two joints (vertex v on joint v % 2), one LOD level over the first half
/// of the indices; `width`-byte indices.
bytes grid_mesh(std::uint32_t n, std::uint8_t width) {
  std::vector<float> positions;
  for (std::uint32_t y = 0; y < n; ++y)
    for (std::uint32_t x = 0; x < n; ++x) positions.insert(positions.end(), {float(x), float(y), 0.0f});
  std::vector<std::uint32_t> indices, mlvr;
  std::vector<ua::meshlet> meshlets;
  std::vector<ua::meshlet_triangle> mltr;
  for (std::uint32_t y = 0; y + 1 < n; ++y)
    for (std::uint32_t x = 0; x + 1 < n; ++x) {
      const std::uint32_t i = y * n + x;
      indices.insert(indices.end(), {i, i + 1, i + n, i + 1, i + n + 1, i + n});
      meshlets.push_back({static_cast<std::uint32_t>(mlvr.size()), 4, static_cast<std::uint32_t>(mltr.size()), 2});
      mlvr.insert(mlvr.end(), {i, i + 1, i + n, i + n + 1});
      mltr.push_back({{0, 1, 2}});
      mltr.push_back({{1, 3, 2}});
    }
  std::vector<ua::skin_vertex> skin;
  for (std::uint32_t v = 0; v < n * n; ++v) skin.push_back({{static_cast<std::uint16_t>(v % 2), 0, 0, 0}, {1, 0, 0, 0}});
  const std::vector<ua::joint> skeleton{ua::joint{}, ua::joint{.parent = 0}};
  auto vertices = untold::encode_gpu_vertices(untold::gpu_vertex_input{.positions = positions});
  REQUIRE(vertices);
  const auto half = static_cast<std::uint32_t>(indices.size() / 6 * 3);
  const std::vector<std::uint32_t> lodi(indices.begin(), indices.begin() + half);
  const ua::mesh_lod lods[] = {{0, half}};
  const ua::submesh sub{0, static_cast<std::uint32_t>(indices.size()), 0, static_cast<std::uint32_t>(meshlets.size()),
                        ua::no_material, 0, {}};
  ua::hmesh_input in;
  in.vertices = span(*vertices);
  in.indices = indices;
  in.index_width = width;
  const std::vector<ua::meshlet_bound> bounds(meshlets.size());
  in.meshlets = meshlets, in.meshlet_vertices = mlvr, in.meshlet_triangles = mltr, in.meshlet_bounds = bounds;
  in.meshlet_max_vertices = 64, in.meshlet_max_triangles = 124;
  in.submeshes = std::span(&sub, 1);
  in.skin = skin, in.skeleton = skeleton;
  in.lod_indices = lodi, in.lod_count = 1, in.lods = lods;
  auto out = ua::write_hmesh(in);
  REQUIRE_MESSAGE(out, out.error().describe());
  return *out;
}

/// The deep error of `b`, after checking the structural pass accepts it.
untold::error deep_error(const bytes& b) {
  REQUIRE(ua::open_hmesh(span(b)).has_value());
  const auto r = ua::open_hmesh(span(b), {.deep_checks = true});
  REQUIRE_FALSE(r);
  return r.error();
}

}  // namespace

// The deep checks summarise each array in one pass (its largest value, or
// whether its floats are finite) and walk it element by element only when
// the summary shows a problem; wherever the bad element lies (in a whole
// vector block or the tail after the last one), the error is the walk's:
// the same rule, record and value.
TEST_CASE("hmesh rules: deep checks find a bad value wherever it lies, with the same context") {
  constexpr std::uint32_t n = 9;  // 81 vertices: 10 blocks of 8 and a tail of 1
  for (const std::uint8_t width : {std::uint8_t{2}, std::uint8_t{4}}) {
    CAPTURE(int{width});
    const bytes base = grid_mesh(n, width);
    REQUIRE(ua::open_hmesh(span(base), {.deep_checks = true}).has_value());
    const std::size_t vtxs = chunk_at(base, "VTXS"), skin = chunk_at(base, "SKIN");
    for (std::uint32_t v = 0; v < n * n; ++v) {
      CAPTURE(v);
      for (std::uint32_t c = 0; c < 3; ++c) {
        bytes b = base;
        wrf(b, vtxs + 28 * std::size_t{v} + 4 * c, c == 1 ? -std::numeric_limits<float>::infinity()
                                                          : std::numeric_limits<float>::quiet_NaN());
        const untold::error e = deep_error(b);
        CHECK(e.rule_id() == "HM-FINITE");
        CHECK(std::string(e.context.field) == "position");
        CHECK(e.context.record_index == v);
        CHECK(e.context.value == c);
      }
      bytes joint = base;
      wr16(joint, skin + 24 * std::size_t{v} + 6, 2);  // the fourth joint: past the skeleton of 2
      const untold::error j = deep_error(joint);
      CHECK(j.rule_id() == "HM-SKIN-JOINT");
      CHECK(j.context.record_index == v);
      CHECK(j.context.value == 2);
      bytes weight = base;
      wrf(weight, skin + 24 * std::size_t{v} + 8 + 12, std::numeric_limits<float>::quiet_NaN());
      const untold::error w = deep_error(weight);
      CHECK(w.rule_id() == "HM-FINITE");
      CHECK(std::string(w.context.field) == "weights");
      CHECK(w.context.record_index == v);
    }
    const std::size_t idxs = chunk_at(base, "IDXS"), index_count = 6 * (n - 1) * (n - 1);
    for (std::size_t i = 0; i < index_count; ++i) {
      CAPTURE(i);
      bytes b = base;
      if (width == 2) wr16(b, idxs + 2 * i, static_cast<std::uint16_t>(n * n));
      else wr32(b, idxs + 4 * i, 0x80000000u);  // the top bit too
      const untold::error e = deep_error(b);
      CHECK(e.rule_id() == "HM-INDEX-VALUE");
      CHECK(e.context.record_index == i);
      CHECK(e.context.value == (width == 2 ? n * n : 0x80000000u));
    }
    for (const char* tag : {"MLVR", "LODI"}) {
      CAPTURE(tag);
      const std::size_t at = chunk_at(base, tag == std::string("MLVR") ? "MLVR" : "LODI");
      const std::size_t count = tag == std::string("MLVR") ? 4 * (n - 1) * (n - 1) : index_count / 2;
      for (std::size_t i = 0; i < count; ++i) {
        bytes b = base;
        wr32(b, at + 4 * i, n * n + static_cast<std::uint32_t>(i));
        const untold::error e = deep_error(b);
        CHECK(e.rule_id() == "HM-INDEX-VALUE");
        CHECK(e.context.record_index == i);
        CHECK(e.context.value == n * n + i);
      }
    }
    const std::size_t mltr = chunk_at(base, "MLTR");
    for (std::size_t k = 0; k < 6 * (n - 1) * (n - 1); ++k) {
      bytes b = base;
      b[mltr + k] = std::byte{4};  // every meshlet has 4 vertices
      const untold::error e = deep_error(b);
      CHECK(e.rule_id() == "HM-MESHLET-INDEX");
      CHECK(e.context.record_index == k / 3);
      CHECK(e.context.value == 4);
    }
  }
}
