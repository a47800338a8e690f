// .mdl: every real fixture parses to its last byte, deep-validates and
// round-trips byte-exactly; a hand-generated model exercises every rejection
// rule by mutation.
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include <untold/urho3d/model.hpp>

#include "u3d_support.hpp"

namespace u3 = untold::urho3d;
using namespace u3d_test;
using untold::errc;

TEST_CASE("urho3d model: every fixture parses to its last byte, deep-validates and round-trips") {
  const auto files = model_fixtures();
  REQUIRE(files.size() == 30);  // 28 of 2021 (Jack.mdl: skinned), 2 of 2011 with NaN geometry centres (History2011)
  std::size_t with_centers = 0, umd2 = 0;
  for (const auto& p : files) {
    CAPTURE(p.string());
    const bytes file = load(p);
    auto m = u3::open_model(file, {.deep_checks = true});
    REQUIRE_MESSAGE(m.has_value(), m.error().describe());
    CHECK(!m->vertex_buffers.empty());
    CHECK(!m->geometries.empty());
    for (const auto& vb : m->vertex_buffers) CHECK(vb.data.size() == std::size_t{vb.vertex_count} * vb.vertex_size);
    with_centers += m->geometry_centers.empty() ? 0 : 1;
    umd2 += m->kind == u3::model_kind::umd2 ? 1 : 0;
    auto again = u3::write_model(*m);
    REQUIRE_MESSAGE(again.has_value(), again.error().describe());
    CHECK(*again == file);
  }
  CHECK(umd2 == 1);  // MaterialPreview.mdl
  CHECK(with_centers > 0);
}

TEST_CASE("urho3d model: fixture facts") {
  auto box = load(data_dir() / "Models/Box.mdl");
  auto m = u3::open_model(box);
  REQUIRE(m);
  CHECK(m->kind == u3::model_kind::umdl);
  REQUIRE(m->vertex_buffers.size() == 1);
  const auto& vb = m->vertex_buffers[0];
  CHECK(vb.find(u3::element_semantic::position) != nullptr);
  CHECK(vb.find(u3::element_semantic::position)->offset == 0);
  REQUIRE(m->index_buffers.size() == 1);
  CHECK(m->geometries[0].lods[0].index_count == m->index_buffers[0].index_count);
  // The view points into the file: zero copy.
  CHECK(vb.data.data() >= box.data());
  CHECK(vb.data.data() + vb.data.size() <= box.data() + box.size());

  auto lines = u3::open_model(load(data_dir() / "Models/LinePrimitives/Basis.mdl"));
  REQUIRE(lines);
  CHECK(lines->geometries[0].lods[0].primitive == u3::primitive_type::line_list);
}


TEST_CASE("urho3d model: the hand-made model reads, deep-validates and round-trips") {
  for (const tiny_options& o : {tiny_options{}, tiny_options{.id = "UMD3", .version = 2},
                                tiny_options{.id = "UMD3", .version = 1}, tiny_options{.centers = false}}) {
    const tiny t = make_tiny(o);
    auto m = u3::open_model(t.file, {.deep_checks = true});
    REQUIRE_MESSAGE(m.has_value(), m.error().describe());
    CHECK(m->bones.size() == 2);
    CHECK(m->bones[1].collision_mask == 3);
    CHECK(m->bones[1].radius == 0.5f);
    REQUIRE(m->morphs.size() == 1);
    CHECK(m->morphs[0].name == "smile");
    CHECK(m->morphs[0].buffers[0].vertex_index(0) == 2);
    CHECK(m->morphs[0].buffers[0].delta(0, u3::morph_position) == u3::float3{0, 1, 0});
    CHECK(m->morphs[0].weight == (o.id == "UMD3" && o.version == 2 ? 0.5f : 0.0f));
    CHECK(m->geometry_centers.size() == (o.centers ? 1u : 0u));
    CHECK(m->vertex_buffers[0].find(u3::element_semantic::blend_indices)->offset == 40);
    auto again = u3::write_model(*m);
    REQUIRE(again);
    CHECK(*again == t.file);
  }
}

TEST_CASE("urho3d model: truncation at every field is an error") {
  const tiny t = make_tiny();
  for (std::size_t n = 0; n < t.file.size(); ++n) {
    if (n == t.end_of_bbox) continue;  // a file without geometry centres: valid
    const bytes cut(t.file.begin(), t.file.begin() + static_cast<std::ptrdiff_t>(n));
    auto m = u3::open_model(cut);
    REQUIRE_FALSE(m.has_value());
    const errc e = m.error().code;
    CHECK_MESSAGE((e == errc::u3d_truncated || e == errc::u3d_count_too_large || e == errc::u3d_missing_nul ||
                   e == errc::u3d_bad_magic),
                  n << ": " << m.error().describe());
  }
}

TEST_CASE("urho3d model: one crafted file per rejection rule") {
  const tiny base = make_tiny();
  auto mutated = [&](std::size_t at, std::uint32_t v) {
    bytes b = base.file;
    put_u32(b, at, v);
    return b;
  };
  SUBCASE("U3D-MAGIC") {
    bytes b = base.file;
    b[0] = std::byte{'X'};
    U3D_CHECK_ERR(u3::open_model(b), errc::u3d_bad_magic);
    U3D_CHECK_ERR(u3::open_model(bytes{}), errc::u3d_bad_magic);
  }
  SUBCASE("U3D-MAGIC-NONE: a 2011 model without identifier") {
    bytes b(base.file.begin() + 4, base.file.end());
    auto r = u3::open_model(b);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::u3d_no_identifier);
    CHECK(r.error().describe().find("missing magic") != std::string::npos);
  }
  SUBCASE("U3D-VERSION") {
    U3D_CHECK_ERR(u3::open_model(make_tiny({.id = "UMD3", .version = 9}).file), errc::u3d_bad_version);
    U3D_CHECK_ERR(u3::open_model(make_tiny({.id = "UMD3", .version = 0}).file), errc::u3d_bad_version);
  }
  SUBCASE("U3D-COUNT: counts that cannot fit are rejected before allocation") {
    U3D_CHECK_ERR(u3::open_model(mutated(base.vb_count, 0x00FFFFFFu)), errc::u3d_count_too_large);
    U3D_CHECK_ERR(u3::open_model(mutated(base.elements, 0x00FFFFFFu)), errc::u3d_count_too_large);
    U3D_CHECK_ERR(u3::open_model(mutated(base.bone_count, 1000000u)), errc::u3d_count_too_large);
    U3D_CHECK_ERR(u3::open_model(mutated(base.index_data - 8, 0x7FFFFFFFu)), errc::u3d_count_too_large);
    U3D_CHECK_ERR(u3::open_model(mutated(base.vb_count, 0xFFFFFFFFu)), errc::limit_exceeded);  // above max_records
  }
  SUBCASE("R-LIMITS: the caller's record limit") {
    u3::model_options o;
    o.limits.max_records = 1;
    U3D_CHECK_ERR(u3::open_model(base.file, o), errc::limit_exceeded);  // 4 elements > 1
  }
  SUBCASE("U3D-STRING") {
    gen g;
    g.id("UMD2").u32(0).u32(0).u32(0).u32(1).str("no-nul");
    U3D_CHECK_ERR(u3::open_model(g.b), errc::u3d_missing_nul);
  }
  SUBCASE("U3D-ELEMENT-TYPE") {
    U3D_CHECK_ERR(u3::open_model(mutated(base.elements + 4, 0x0007)), errc::u3d_element_type);
    U3D_CHECK_ERR(u3::open_model(mutated(base.elements + 4, 0x01000003)), errc::u3d_element_type);
  }
  SUBCASE("U3D-ELEMENT-SEMANTIC") {
    U3D_CHECK_ERR(u3::open_model(mutated(base.elements + 4, 0x0903)), errc::u3d_element_semantic);
  }
  SUBCASE("U3D-ELEMENT-MASK") {
    bytes box = load(data_dir() / "Models/Box.mdl");
    put_u32(box, 12, get_u32(box, 12) | 0x4000);
    U3D_CHECK_ERR(u3::open_model(box), errc::u3d_element_mask);
  }
  SUBCASE("U3D-VERTEX-SIZE: vertices without a layout") {
    U3D_CHECK_ERR(u3::open_model(make_tiny({.element_count = 0}).file), errc::u3d_vertex_size);
  }
  SUBCASE("U3D-MORPH-RANGE") {
    U3D_CHECK_ERR(u3::open_model(mutated(base.morph_range + 4, 4)), errc::u3d_morph_range);
  }
  SUBCASE("U3D-INDEX-SIZE") { U3D_CHECK_ERR(u3::open_model(mutated(base.ib_size, 3)), errc::u3d_index_size); }
  SUBCASE("U3D-LOD-COUNT") { U3D_CHECK_ERR(u3::open_model(mutated(base.lod_count, 0)), errc::u3d_lod_count); }
  SUBCASE("U3D-PRIMITIVE") { U3D_CHECK_ERR(u3::open_model(mutated(base.lod + 4, 6)), errc::u3d_primitive_type); }
  SUBCASE("U3D-BUFFER-REF") {
    U3D_CHECK_ERR(u3::open_model(mutated(base.lod + 8, 1)), errc::u3d_buffer_ref);
    U3D_CHECK_ERR(u3::open_model(mutated(base.lod + 12, 1)), errc::u3d_buffer_ref);
  }
  SUBCASE("U3D-DRAW-RANGE") {
    U3D_CHECK_ERR(u3::open_model(mutated(base.lod + 16, 1)), errc::u3d_draw_range);
    U3D_CHECK_ERR(u3::open_model(mutated(base.lod + 16, 0xFFFFFFFFu)), errc::u3d_draw_range);
  }
  SUBCASE("U3D-INDEX-VALUE (deep only)") {
    bytes b = base.file;
    b[base.index_data + 4] = std::byte{3};
    CHECK(u3::open_model(b).has_value());
    U3D_CHECK_ERR(u3::open_model(b, {.deep_checks = true}), errc::u3d_index_value);
  }
  SUBCASE("U3D-BONE-MAPPING") { U3D_CHECK_ERR(u3::open_model(mutated(base.mapping, 2)), errc::u3d_bone_mapping); }
  SUBCASE("U3D-BLEND-INDEX (deep only)") {
    bytes b = base.file;
    b[base.positions + 40] = std::byte{2};  // vertex 0, first index (weight 0.75), mapping has 2 entries
    CHECK(u3::open_model(b).has_value());
    U3D_CHECK_ERR(u3::open_model(b, {.deep_checks = true}), errc::u3d_blend_index);
    bytes zero_weight = base.file;
    zero_weight[base.positions + 42] = std::byte{200};  // third index has weight 0: ignored
    CHECK(u3::open_model(zero_weight, {.deep_checks = true}).has_value());
  }
  SUBCASE("U3D-BONE-PARENT: out of range and cycles") {
    U3D_CHECK_ERR(u3::open_model(mutated(base.bone1_parent, 2)), errc::u3d_bone_parent);
    auto r = u3::open_model(make_tiny({.bone1_parent = 0, .bone0_parent = 1}).file);  // 0 -> 1 -> 0
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::u3d_bone_parent);
    // A root that is not bone 0 (bone 1 self-parented, bone 0 its child) is fine.
    CHECK(u3::open_model(make_tiny({.bone1_parent = 1, .bone0_parent = 1}).file).has_value());
  }
  SUBCASE("several self-parented roots are fine") {
    auto r = u3::open_model(make_tiny({.bone1_parent = 1}).file);
    CHECK_MESSAGE(r.has_value(), r.error().describe());
  }
  SUBCASE("U3D-COLLISION") {
    bytes b = base.file;
    b[base.bone1_mask] = std::byte{7};
    U3D_CHECK_ERR(u3::open_model(b), errc::u3d_collision_mask);
  }
  SUBCASE("U3D-MORPH-BUFFER") {
    U3D_CHECK_ERR(u3::open_model(mutated(base.morph_buffer, 1)), errc::u3d_morph_buffer);
    U3D_CHECK_ERR(u3::open_model(make_tiny({.two_morph_buffers = true}).file), errc::u3d_morph_buffer);
  }
  SUBCASE("U3D-MORPH-MASK") {
    U3D_CHECK_ERR(u3::open_model(mutated(base.morph_mask, 0)), errc::u3d_morph_mask);
    U3D_CHECK_ERR(u3::open_model(mutated(base.morph_mask, 4)), errc::u3d_morph_mask);
  }
  SUBCASE("U3D-MORPH-VERTEX") {
    auto r = u3::open_model(mutated(base.morph_vertex, 3));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::u3d_morph_vertex);
    CHECK(r.error().subject() == "smile");
  }
  SUBCASE("U3D-FINITE (deep only)") {
    bytes b = base.file;
    put_f32(b, base.positions + 4, std::numeric_limits<float>::quiet_NaN());
    CHECK(u3::open_model(b).has_value());
    U3D_CHECK_ERR(u3::open_model(b, {.deep_checks = true}), errc::u3d_not_finite);
    // The error shows the float with its bits and where it lies, not "value 0".
    const auto r = u3::open_model(b, {.deep_checks = true});
    CHECK(r.error().context.offset == base.positions + 4);
    CHECK(r.error().describe().find("field position, value nan (bits 0x7fc00000)") != std::string::npos);
    bytes bone = base.file;
    put_f32(bone, base.bone0_parent + 4, std::numeric_limits<float>::infinity());
    U3D_CHECK_ERR(u3::open_model(bone, {.deep_checks = true}), errc::u3d_not_finite);
    CHECK(u3::open_model(bone, {.deep_checks = true}).error().describe().find("value inf (bits 0x7f800000)") !=
          std::string::npos);
    bytes weight = base.file;  // vertex 1's first blend weight (the writer of cook refused it)
    put_f32(weight, base.positions + 44 + 24, -std::numeric_limits<float>::infinity());
    const auto w = u3::open_model(weight, {.deep_checks = true});
    REQUIRE_FALSE(w);
    CHECK(w.error().code == errc::u3d_not_finite);
    CHECK(std::string_view(w.error().context.field) == "blendWeight");
  }
  SUBCASE("R-LIMITS: a bone deeper than limits.max_depth") {
    untold::limits shallow;
    shallow.max_depth = 0;  // the child (depth 1) is one level too deep
    const auto r = u3::open_model(base.file, {.limits = shallow});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::limit_exceeded);
    CHECK(std::string_view(r.error().context.field) == "boneDepth");
    CHECK(r.error().subject() == "child");
    shallow.max_depth = 1;
    CHECK(u3::open_model(base.file, {.limits = shallow}).has_value());
  }
  SUBCASE("U3D-TRAILING") {
    bytes b = base.file;
    b.insert(b.end(), {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}});
    U3D_CHECK_ERR(u3::open_model(b), errc::u3d_trailing_bytes);
    bytes partial = base.file;
    partial.resize(base.end_of_bbox + 8);  // part of a centre
    U3D_CHECK_ERR(u3::open_model(partial), errc::u3d_truncated);
  }
}

TEST_CASE("urho3d model: the writer refuses inconsistent input") {
  const tiny t = make_tiny();
  auto m = u3::open_model(t.file);
  REQUIRE(m);
  u3::model bad = *m;
  bad.vertex_buffers[0].vertex_count = 4;
  U3D_CHECK_ERR(u3::write_model(bad), errc::invalid_argument);
  bad = *m;
  bad.geometries[0].lods[0].index_count = 9;
  U3D_CHECK_ERR(u3::write_model(bad), errc::u3d_draw_range);
  bad = *m;
  bad.kind = u3::model_kind::umdl;
  U3D_CHECK_ERR(u3::write_model(bad), errc::invalid_argument);  // elements are not a legacy mask
  bad = *m;
  bad.geometry_centers.push_back({0, 0, 0});
  U3D_CHECK_ERR(u3::write_model(bad), errc::invalid_argument);
}

namespace {

/// A UMD2 model of one triangle with a position and a VECTOR2 texture
/// coordinate per vertex and one LOD at `distance`; `uv` is vertex 1's u.
bytes uv_model(float uv, float distance) {
  gen g;
  g.id("UMD2").u32(1).u32(3).u32(2).u32(0x0003).u32(0x0402).u32(0).u32(0);
  for (int v = 0; v < 3; ++v) g.f32(static_cast<float>(v)).f32(0).f32(0).f32(v == 1 ? uv : 0.5f).f32(0.5f);
  g.u32(1).u32(3).u32(2).u16(0).u16(1).u16(2);
  g.u32(1).u32(0).u32(1).f32(distance).u32(0).u32(0).u32(0).u32(0).u32(3);
  g.u32(0).u32(0);  // morphs, bones
  g.f32(0).f32(0).f32(0).f32(2).f32(0).f32(0);
  return g.b;
}

}  // namespace

TEST_CASE("urho3d model: a NaN texture coordinate or LOD distance is U3D-FINITE (deep only)") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  REQUIRE(u3::open_model(uv_model(0.25f, 0), {.deep_checks = true}).has_value());
  const bytes bad_uv = uv_model(nan, 0);
  CHECK(u3::open_model(bad_uv).has_value());  // structurally fine
  const auto uv = u3::open_model(bad_uv, {.deep_checks = true});
  REQUIRE_FALSE(uv);
  CHECK(uv.error().code == errc::u3d_not_finite);
  CHECK(std::string_view(uv.error().context.field) == "texcoord");
  CHECK(uv.error().context.offset == 32 + 20 + 12);  // vertex 1's u
  const auto lod = u3::open_model(uv_model(0.25f, -std::numeric_limits<float>::infinity()), {.deep_checks = true});
  REQUIRE_FALSE(lod);
  CHECK(lod.error().code == errc::u3d_not_finite);
  CHECK(std::string_view(lod.error().context.field) == "lod.distance");
  CHECK(lod.error().describe().find("value -inf (bits 0xff800000)") != std::string::npos);
}

TEST_CASE("urho3d model: the engine's own 2011 files with NaN geometry centres are accepted") {
  // Written by Urho3D's tools of March 2011 (tests/data/urho3d/PROVENANCE.md):
  // every centre is FF FF FF FF. The engine only sorts by it.
  for (const char* name : {"Box.mdl", "CloudPlane.mdl"}) {
    CAPTURE(name);
    const bytes file = load(data_dir() / "Models/History2011" / name);
    auto m = u3::open_model(file, {.deep_checks = true});
    REQUIRE_MESSAGE(m.has_value(), m.error().describe());
    REQUIRE(m->geometry_centers.size() == 1);
    CHECK(std::isnan(m->geometry_centers[0][0]));
    CHECK(u3::non_finite_centers(*m) == 1);
  }
  CHECK(u3::non_finite_centers(*u3::open_model(load(data_dir() / "Models/Box.mdl"))) == 0);
}

namespace {

/// A skinned UMD2 model of `n` vertices (position, normal, VECTOR2
/// texcoord, blend weights, UBYTE4 blend indices: 52 bytes), a triangle per
/// vertex (v, v + 1, v + 2 mod n) with 32-bit indices, three bones (so the
/// palette is 3) and vertex v skinned to bones v % 3 and (v + 1) % 3.
struct skinned_grid {
  bytes file;
  std::size_t vertices = 0;  // offset of the vertex data
  std::size_t indices = 0;   // offset of the index data
};
skinned_grid make_skinned(std::uint32_t n) {
  skinned_grid s;
  gen g;
  g.id("UMD2").u32(1).u32(n).u32(5).u32(0x0003).u32(0x0103).u32(0x0402).u32(0x0604).u32(0x0705).u32(0).u32(0);
  s.vertices = g.size();
  for (std::uint32_t v = 0; v < n; ++v) {
    g.f32(static_cast<float>(v)).f32(1).f32(2);                       // position
    g.f32(0).f32(1).f32(0);                                           // normal
    g.f32(0.25f).f32(0.75f);                                          // texcoord
    g.f32(0.5f).f32(0.5f).f32(0).f32(0);                              // blend weights
    g.u8(static_cast<std::uint8_t>(v % 3)).u8(static_cast<std::uint8_t>((v + 1) % 3)).u8(0).u8(0);  // blend indices
  }
  g.u32(1).u32(3 * n).u32(4);
  s.indices = g.size();
  for (std::uint32_t v = 0; v < n; ++v) g.u32(v).u32((v + 1) % n).u32((v + 2) % n);
  g.u32(1).u32(0).u32(1).f32(0).u32(0).u32(0).u32(0).u32(0).u32(3 * n);  // one geometry, identity mapping, one LOD
  g.u32(0);                                                              // morphs
  g.u32(3);
  for (std::uint32_t b = 0; b < 3; ++b) {
    g.cstr(b == 0 ? "root" : b == 1 ? "a" : "b").u32(b == 0 ? 0 : b - 1);
    g.f32(0).f32(0).f32(0).f32(1).f32(0).f32(0).f32(0).f32(1).f32(1).f32(1);  // position, rotation (wxyz), scale
    for (int k = 0; k < 12; ++k) g.f32(k % 5 == 0 ? 1.0f : 0.0f);             // 3x4 identity
    g.u8(0);
  }
  g.f32(0).f32(0).f32(0).f32(static_cast<float>(n)).f32(2).f32(2);
  s.file = g.b;
  return s;
}

}  // namespace

// The deep checks summarise each array in one pass and walk it element by
// element only when the summary shows a problem; whichever vertex, word or
// index holds it (in a whole block of the summary's vectors or in the tail
// after the last block), the error is the element walk's: the same field,
// record, value and offset.
TEST_CASE("urho3d model: deep checks find a bad value wherever it lies, with the same context") {
  constexpr std::uint32_t n = 37;  // 9 blocks of 4 vertices and a tail of one
  const skinned_grid base = make_skinned(n);
  REQUIRE(u3::open_model(base.file, {.deep_checks = true}).has_value());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::uint32_t v = 0; v < n; ++v) {
    CAPTURE(v);
    const std::size_t vertex = base.vertices + std::size_t{v} * 52;
    for (std::size_t word = 0; word < 12; ++word) {
      CAPTURE(word);
      bytes b = base.file;
      put_f32(b, vertex + 4 * word, word % 2 == 0 ? nan : -std::numeric_limits<float>::infinity());
      const auto r = u3::open_model(b, {.deep_checks = true});
      if (word >= 3 && word < 6) {  // the normal: not a checked float
        CHECK(r.has_value());
        continue;
      }
      REQUIRE_FALSE(r);
      CHECK(r.error().code == errc::u3d_not_finite);
      CHECK(std::string_view(r.error().context.field) == (word < 3 ? "position" : word < 8 ? "texcoord" : "blendWeight"));
      CHECK(r.error().context.offset == vertex + 4 * word);
      CHECK(r.error().context.record_index == 0);
    }
    bytes zero_weight = base.file;  // the third index has weight 0: ignored, however large
    zero_weight[vertex + 50] = std::byte{200};
    CHECK(u3::open_model(zero_weight, {.deep_checks = true}).has_value());
    bytes weighted = base.file;  // the first has weight 0.5: past the palette of 3
    weighted[vertex + 48] = std::byte{3};
    const auto blend = u3::open_model(weighted, {.deep_checks = true});
    REQUIRE_FALSE(blend);
    CHECK(blend.error().code == errc::u3d_blend_index);
    CHECK(blend.error().context.value == 3);
  }
  for (std::uint32_t i = 0; i < 3 * n; ++i) {
    CAPTURE(i);
    bytes b = base.file;
    put_u32(b, base.indices + 4 * std::size_t{i}, n + i);
    const auto r = u3::open_model(b, {.deep_checks = true});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::u3d_index_value);
    CHECK(r.error().context.value == n + i);
  }
}
