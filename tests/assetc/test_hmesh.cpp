// .hmesh v2: byte-exact golden file from a hand-written generator, writer ->
// reader round trips, views at any alignment, unknown chunks kept, and one
// crafted file per rule.
#include "assetc_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace hm_test;

namespace {

/// The fixture's .hmesh, built field by field from the format description
/// (not from the library): header, 15-row table, payloads at 16-byte steps.
bytes hand_made_fixture() {
  struct chunk {
    const char* tag;
    bytes payload;
    std::uint32_t flags = 0;
  };
  std::vector<chunk> chunks;
  auto add = [&chunks](const char* tag, const gen& g, std::uint32_t flags = 0) { chunks.push_back({tag, g.out, flags}); };
  auto bounds = [](gen& g) {
    for (float f : {0.f, 0.f, 0.f, 1.f, 1.f, 0.f, 0.5f, 0.5f, 0.f, 0.75f}) g.f32(f);
  };
  gen desc;
  for (std::uint32_t v : {4u, 6u, 1u, 2u, 2u}) desc.u32(v);
  desc.u16(28), desc.u8(2), desc.u8(1), desc.u32(64), desc.u32(124);
  add("DESC", desc);
  gen bnds;
  bounds(bnds);
  add("BNDS", bnds);
  gen vtxs;
  const float pos[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  for (const auto& p : pos) {
    vtxs.f32(p[0]), vtxs.f32(p[1]), vtxs.f32(0);
    vtxs.i16(0), vtxs.i16(0);      // normal (0,0,1)
    vtxs.i16(32766), vtxs.i16(0);  // tangent (1,0,0), bit 0 clear: handedness +1
    vtxs.f32(p[0]), vtxs.f32(p[1]);
  }
  add("VTXS", vtxs);
  gen idxs;
  for (std::uint32_t i : {0, 1, 2, 2, 1, 3}) idxs.u16(i);
  add("IDXS", idxs);
  gen mlet;
  for (std::uint32_t v : {0, 4, 0, 2}) mlet.u32(v);
  add("MLET", mlet);
  gen mlvr;
  for (std::uint32_t v : {0, 1, 2, 3}) mlvr.u32(v);
  add("MLVR", mlvr);
  gen mltr;
  for (std::uint32_t v : {0, 1, 2, 2, 1, 3}) mltr.u8(v);
  add("MLTR", mltr);
  gen mlbn;
  for (float f : {0.5f, 0.5f, 0.f, 0.75f, 0.f, 0.f, 1.f, 0.5f}) mlbn.f32(f);
  add("MLBN", mlbn);
  gen mtrl;
  mtrl.u64(0), mtrl.u64(0);  // patched below with independently computed hashes
  add("MTRL", mtrl);
  gen subm;
  for (std::uint32_t v : {0u, 3u, 0u, 1u, 1u, 0u}) subm.u32(v);
  bounds(subm);
  for (std::uint32_t v : {3u, 3u, 1u, 0u, 0xFFFFFFFFu, 0u}) subm.u32(v);
  bounds(subm);
  add("SUBM", subm);
  gen skin;
  const std::uint32_t joints[4][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}};
  const float weights[4][4] = {{1, 0, 0, 0}, {1, 0, 0, 0}, {0.5f, 0.5f, 0, 0}, {1, 0, 0, 0}};
  for (int v = 0; v < 4; ++v) {
    for (int k = 0; k < 4; ++k) skin.u16(joints[v][k]);
    for (int k = 0; k < 4; ++k) skin.f32(weights[v][k]);
  }
  add("SKIN", skin);
  gen skel;
  for (int j = 0; j < 2; ++j) {
    for (int k = 0; k < 16; ++k) skel.f32(k % 5 == 0 ? 1.f : 0.f);  // identity, column-major
    skel.f32(0), skel.f32(j == 1 ? 1.f : 0.f), skel.f32(0);          // bindT
    skel.f32(0), skel.f32(0), skel.f32(0), skel.f32(1);              // bindR
    skel.f32(1), skel.f32(1), skel.f32(1);                           // bindS
    skel.u32(j == 0 ? 0xFFFFFFFFu : 0u);                             // parent
    skel.u32(0);                                                     // pad
  }
  add("SKEL", skel);
  gen lodi;
  for (std::uint32_t v : {0, 1, 3}) lodi.u32(v);
  add("LODI", lodi);
  gen lodt;
  for (std::uint32_t v : {1, 2, 0, 3, 0, 0}) lodt.u32(v);
  add("LODT", lodt);
  gen xtra;
  for (std::uint32_t v : {1, 2, 3, 4, 5}) xtra.u8(v);
  add("XTRA", xtra, 7);

  gen file;
  file.tag("HMSH"), file.u32(2), file.u32(static_cast<std::uint32_t>(chunks.size())), file.u32(0), file.u64(0), file.u64(0);
  std::uint64_t at = 32 + 24 * chunks.size();
  std::vector<std::uint64_t> offsets;
  for (const chunk& c : chunks) {
    at = (at + 15) / 16 * 16;
    offsets.push_back(at);
    at += c.payload.size();
  }
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    file.str(std::string_view(chunks[i].tag, 4));
    file.u32(chunks[i].flags), file.u64(offsets[i]), file.u64(chunks[i].payload.size());
  }
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    while (file.size() < offsets[i]) file.u8(0);
    file.out.insert(file.out.end(), chunks[i].payload.begin(), chunks[i].payload.end());
  }
  // MTRL: FNV-1a of "models/quad/a" and "models/quad/b", by a byte loop here too.
  auto fnv = [](std::string_view s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return h;
  };
  const std::size_t mtrl_at = static_cast<std::size_t>(offsets[8]);
  wr64(file.out, mtrl_at, fnv("models/quad/a"));
  wr64(file.out, mtrl_at + 8, fnv("models/quad/b"));
  return file.out;
}

}  // namespace

TEST_CASE("hmesh: the writer's bytes equal the hand-made file and the committed golden file") {
  const bytes written = fixture_mesh();
  const bytes hand = hand_made_fixture();
  REQUIRE(written.size() == hand.size());
  CHECK(written == hand);
  CHECK(written.size() == 1205);  // 15 rows: 392 -> first payload at 400; XTRA (5 B) at 1200
  CHECK(read_data("assetc/quad.hmesh") == hand);
  // Determinism: the same input gives the same bytes.
  CHECK(fixture_mesh() == written);
}

TEST_CASE("hmesh: views read every chunk back") {
  mesh_fixture f;
  const bytes file = fixture_mesh();
  auto m = ua::open_hmesh(span(file), {.deep_checks = true});
  REQUIRE_MESSAGE(m, m.error().describe());
  CHECK(m->header().version == 2);
  CHECK(m->chunks().size() == 15);
  CHECK(m->desc() == ua::mesh_desc{4, 6, 1, 2, 2, 28, 2, 1, 64, 124});
  REQUIRE(m->bounds());
  CHECK(m->bounds()->radius == 0.75f);
  REQUIRE(m->vertices().size() == 4);
  CHECK(m->vertices().position(3) == std::array<float, 3>{1, 1, 0});
  CHECK(m->vertices().uv(2) == std::array<float, 2>{0, 1});
  CHECK(m->vertices().tangent(0)[3] == 1.0f);
  REQUIRE(m->indices().size() == 6);
  CHECK(m->indices().width() == 2);
  CHECK(std::vector<std::uint32_t>{m->indices()[3], m->indices()[4], m->indices()[5]} == std::vector<std::uint32_t>{2, 1, 3});
  CHECK(std::equal(m->meshlets().begin(), m->meshlets().end(), f.meshlets.begin(), f.meshlets.end()));
  CHECK(std::equal(m->meshlet_vertices().begin(), m->meshlet_vertices().end(), f.meshlet_vertices.begin()));
  CHECK(std::equal(m->meshlet_triangles().begin(), m->meshlet_triangles().end(), f.meshlet_triangles.begin(), f.meshlet_triangles.end()));
  CHECK(m->meshlet_bounds()[0] == f.meshlet_bounds[0]);
  CHECK(std::equal(m->materials().begin(), m->materials().end(), f.materials.begin(), f.materials.end()));
  CHECK(std::equal(m->submeshes().begin(), m->submeshes().end(), f.submeshes.begin(), f.submeshes.end()));
  CHECK(std::equal(m->skin().begin(), m->skin().end(), f.skin.begin(), f.skin.end()));
  CHECK(std::equal(m->skeleton().begin(), m->skeleton().end(), f.skeleton.begin(), f.skeleton.end()));
  CHECK(m->lod_count() == 1);
  CHECK(m->lods(0)[0] == ua::mesh_lod{0, 3});
  CHECK(m->lods(1)[0] == ua::mesh_lod{0, 0});
  CHECK(m->lod_index_range(m->lods(0)[0])[2] == 3u);
  CHECK(m->submesh_meshlets(0).size() == 1);
  CHECK(m->submesh_meshlets(1).empty());
  const ua::meshlet ml = m->submesh_meshlets(0)[0];
  CHECK(m->meshlet_vertex_range(ml).size() == 4);
  CHECK(m->meshlet_vertex_range(ml)[3] == 3u);
  CHECK(m->meshlet_triangle_range(ml).size() == 2);
  CHECK(m->meshlet_triangle_range(ml)[1] == ua::meshlet_triangle{{2, 1, 3}});
  CHECK(m->submesh_indices(1).size() == 3);
  CHECK(m->submesh_indices(1)[2] == 3u);
  // The unknown chunk is kept: listed, payload reachable, flags preserved.
  const auto unknown = ua::unknown_chunks(*m);
  REQUIRE(unknown.size() == 1);
  CHECK(unknown[0].fourcc == tag_value("XTRA"));
  CHECK(unknown[0].flags == 7);
  CHECK(std::vector<std::byte>(unknown[0].payload.begin(), unknown[0].payload.end()) == f.extra_payload);
}

TEST_CASE("hmesh: a read-back mesh written again gives the same bytes (unknown chunks kept)") {
  const bytes file = fixture_mesh();
  auto m = ua::open_hmesh(span(file));
  REQUIRE(m);
  auto to_vec = [](auto view) { return std::vector<typename decltype(view)::value_type>(view.begin(), view.end()); };
  const auto meshlets = to_vec(m->meshlets());
  const auto mlvr = to_vec(m->meshlet_vertices());
  const auto mltr = to_vec(m->meshlet_triangles());
  const auto mlbn = to_vec(m->meshlet_bounds());
  const auto mats = to_vec(m->materials());
  const auto subs = to_vec(m->submeshes());
  const auto skin = to_vec(m->skin());
  const auto skel = to_vec(m->skeleton());
  const auto lodi = to_vec(m->lod_indices());
  std::vector<std::uint32_t> idx;
  for (std::size_t i = 0; i < m->indices().size(); ++i) idx.push_back(m->indices()[i]);
  std::vector<ua::mesh_lod> lods;
  for (std::size_t s = 0; s < subs.size(); ++s)
    for (const ua::mesh_lod l : m->lods(s)) lods.push_back(l);
  const auto extras = ua::unknown_chunks(*m);
  ua::hmesh_input in;
  in.vertices = m->vertices().bytes();
  in.indices = idx;
  in.index_width = m->desc().index_width;
  in.flags = m->desc().flags;
  in.bounds = *m->bounds();
  in.meshlets = meshlets, in.meshlet_vertices = mlvr, in.meshlet_triangles = mltr, in.meshlet_bounds = mlbn;
  in.meshlet_max_vertices = m->desc().meshlet_max_vertices, in.meshlet_max_triangles = m->desc().meshlet_max_triangles;
  in.materials = mats, in.submeshes = subs, in.skin = skin, in.skeleton = skel;
  in.lod_indices = lodi, in.lod_count = m->lod_count(), in.lods = lods, in.extra_chunks = extras;
  auto again = ua::write_hmesh(in);
  REQUIRE(again);
  CHECK(*again == file);
}

TEST_CASE("hmesh: opens at every misalignment") {
  const bytes file = fixture_mesh();
  for (std::size_t shift = 0; shift < 16; ++shift) {
    std::vector<std::byte> buffer(file.size() + shift);
    std::copy(file.begin(), file.end(), buffer.begin() + static_cast<std::ptrdiff_t>(shift));
    auto m = ua::open_hmesh(untold::byte_span(buffer).subspan(shift), {.deep_checks = true});
    REQUIRE(m);
    CHECK(m->skin()[2].weights[1] == 0.5f);
    CHECK(m->meshlet_vertices()[3] == 3u);
  }
}

TEST_CASE("hmesh: a minimal mesh without optional chunks, and uint32 indices") {
  const float pos[] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  auto v = untold::encode_gpu_vertices(untold::gpu_vertex_input{.positions = pos});
  REQUIRE(v);
  const std::uint32_t idx[] = {0, 1, 2};
  ua::hmesh_input in;
  in.vertices = span(*v);
  in.indices = idx;
  in.index_width = 4;
  const ua::submesh sub{0, 3, 0, 0, ua::no_material, 0, {}};
  in.submeshes = std::span(&sub, 1);
  auto file = ua::write_hmesh(in);
  REQUIRE(file);
  auto m = ua::open_hmesh(span(*file), {.deep_checks = true});
  REQUIRE(m);
  CHECK(m->chunks().size() == 10);
  CHECK(!m->has(ua::chunk_id::skin));
  CHECK(!m->has(ua::chunk_id::lodt));
  CHECK(m->lod_count() == 0);
  CHECK(m->indices().width() == 4);
  CHECK(m->indices()[2] == 2u);
  CHECK(m->skin().empty());
}

TEST_CASE("hmesh: the writer refuses what it cannot write or what breaks a rule") {
  mesh_fixture f;
  SUBCASE("an index past the vertices") {
    f.indices[4] = 9;
    CHECK(rule_of(ua::write_hmesh(f.input())) == "HM-INDEX-VALUE");
  }
  SUBCASE("a slot past the materials") {
    f.submeshes[0].material_slot = 2;
    CHECK(rule_of(ua::write_hmesh(f.input())) == "HM-MATERIAL-SLOT");
  }
  SUBCASE("a catalogue fourcc as an extra chunk") {
    f.extras[0].fourcc = ua::fourcc("MTRL");
    CHECK(rule_of(ua::write_hmesh(f.input())) == "E-INVALID-ARGUMENT");
  }
  SUBCASE("lods not submeshes x lod_count") {
    f.lods.pop_back();
    CHECK(rule_of(ua::write_hmesh(f.input())) == "E-INVALID-ARGUMENT");
  }
  SUBCASE("a uint16 width with an index over 65535") {
    auto in = f.input();
    const std::uint32_t big[] = {0, 1, 70000};
    in.indices = big;
    in.index_width = 2;
    CHECK(rule_of(ua::write_hmesh(in)) == "E-INVALID-ARGUMENT");
  }
}
