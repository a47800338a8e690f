// Import into the neutral scene: counts equal the source, the mirror and
// winding conventions, skeleton/skin/morph/animation mapping, the report.
#include <untold/convert/to_untold.hpp>
#include <untold/urho3d/import.hpp>
#include <untold/urho3d/animation.hpp>

#include "u3d_support.hpp"

namespace u3 = untold::urho3d;
namespace cv = untold::convert;
using namespace u3d_test;
using untold::errc;

namespace {

bool reported(const cv::scene& s, std::string_view what) {
  for (const auto& e : s.report.entries)
    if (e.what == what) return true;
  return false;
}

}  // namespace

TEST_CASE("urho3d import: every fixture imports with the source's counts") {
  for (const auto& p : model_fixtures()) {
    CAPTURE(p.string());
    const bytes file = load(p);
    auto m = u3::open_model(file);
    REQUIRE(m);
    auto s = u3::import_files(file, {}, p.stem().string());
    REQUIRE_MESSAGE(s.has_value(), s.error().describe());
    CHECK(cv::validate_model(*s).has_value());
    CHECK(s->materials.size() == m->geometries.size());
    CHECK(s->materials[0].name == "slot 0");
    std::size_t expected_meshes = 0;
    for (const auto& g : m->geometries) {
      expected_meshes += 1;
      for (std::size_t l = 1; l < g.lods.size(); ++l)
        if (g.lods[l].vertex_buffer != g.lods[0].vertex_buffer || g.lods[l].primitive != g.lods[0].primitive)
          ++expected_meshes;
    }
    REQUIRE(s->meshes.size() == expected_meshes);
    // LOD0 of each geometry: same index count (lists), and the vertices it draws.
    std::size_t mesh = 0;
    for (const auto& g : m->geometries) {
      const auto& l = g.lods[0];
      const auto& out = s->meshes[mesh];
      if (l.primitive == u3::primitive_type::triangle_list || l.primitive == u3::primitive_type::line_list ||
          l.primitive == u3::primitive_type::point_list)
        CHECK(out.indices.size() == l.index_count - (l.primitive == u3::primitive_type::triangle_list ? l.index_count % 3 : 0));
      std::vector<bool> seen(m->vertex_buffers[l.vertex_buffer].vertex_count, false);
      std::size_t distinct = 0;
      for (std::size_t li = 0; li < g.lods.size(); ++li) {
        const auto& x = g.lods[li];
        if (li != 0 && (x.vertex_buffer != l.vertex_buffer || x.primitive != l.primitive)) continue;
        for (std::uint32_t i = 0; i < x.index_count; ++i) {
          const std::uint32_t v = m->index_buffers[x.index_buffer].at(x.index_start + i);
          if (!seen[v]) ++distinct;
          seen[v] = true;
        }
      }
      CHECK(out.vertex_count() == distinct);
      CHECK(out.lods.size() + 1 >= 1);
      mesh += 1;
      for (std::size_t li = 1; li < g.lods.size(); ++li)
        if (g.lods[li].vertex_buffer != l.vertex_buffer || g.lods[li].primitive != l.primitive) ++mesh;
    }
    CHECK(reported(*s, "coordinate system"));
    CHECK(reported(*s, "placeholder materials"));
  }
}

TEST_CASE("urho3d import: Z mirrored, winding reversed") {
  const bytes file = load(data_dir() / "Models/Box.mdl");
  auto m = u3::open_model(file);
  REQUIRE(m);
  auto s = u3::import_model(*m);
  REQUIRE(s);
  const auto& vb = m->vertex_buffers[0];
  const auto& ib = m->index_buffers[0];
  const auto& out = s->meshes[0];
  // First triangle (a, b, c) becomes (a', c', b'); vertex a' has z negated.
  const std::uint32_t a = ib.at(0), b = ib.at(1), c = ib.at(2);
  const std::uint32_t a2 = out.indices[0], c2 = out.indices[1], b2 = out.indices[2];
  auto z_of = [&](std::uint32_t v) { return untold::load_le_unchecked<float>(vb.vertex(v) + 8); };
  CHECK(out.positions[3 * a2 + 2] == -z_of(a));
  CHECK(out.positions[3 * b2 + 2] == -z_of(b));
  CHECK(out.positions[3 * c2 + 2] == -z_of(c));
  CHECK(out.positions[3 * a2] == untold::load_le_unchecked<float>(vb.vertex(a)));
}

TEST_CASE("urho3d import: skeleton, skin, morphs and an animation from the hand-made model") {
  // Bone 1 is the root and bone 0 its child: the importer must reorder.
  const tiny t = make_tiny({.bone1_parent = 1, .bone0_parent = 1});
  auto m = u3::open_model(t.file, {.deep_checks = true});
  REQUIRE(m);
  gen ani;
  ani.id("UANI").cstr("Wave").f32(1).u32(2);
  ani.cstr("root").u8(3).u32(1).f32(0).f32(1).f32(2).f32(3).f32(0.5f).f32(0.5f).f32(0.5f).f32(0.5f);
  ani.cstr("nobody").u8(4).u32(1).f32(0).f32(1).f32(1).f32(1);
  auto a = u3::open_animation(ani.b);
  REQUIRE(a);
  auto s = u3::import_model(*m, std::span(&*a, 1), "tiny");
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  REQUIRE(s->skeletons.size() == 1);
  const auto& joints = s->skeletons[0].joints;
  REQUIRE(joints.size() == 2);
  CHECK(joints[0].name == "child");  // the root comes first
  CHECK(joints[0].parent == cv::no_ref);
  CHECK(joints[1].name == "root");
  CHECK(joints[1].parent == 0);
  // Rest translation of "child" (0, 1, 0) stays; rotation identity (w=1) -> (0,0,0,1).
  CHECK(joints[0].rest.translation == std::array<float, 3>{0, 1, -0.0f});
  CHECK(joints[0].rest.rotation == std::array<float, 4>{-0.0f, -0.0f, 0, 1});
  REQUIRE(s->skins.size() == 1);
  // Bone mapping [1, 0] -> joints [joint of bone 1, joint of bone 0] = [0, 1].
  CHECK(s->skins[0].joints == std::vector<std::uint32_t>{0, 1});
  const auto& mesh = s->meshes[0];
  CHECK(mesh.skin == 0);
  REQUIRE(mesh.joints.size() == 3);
  CHECK(mesh.joints[0] == std::array<std::uint16_t, 4>{0, 1, 0, 0});
  CHECK(mesh.weights[0][0] == 0.75f);
  REQUIRE(mesh.morphs.size() == 1);
  CHECK(mesh.morphs[0].name == "smile");
  CHECK(mesh.morphs[0].position_deltas.size() == 9);
  CHECK(mesh.morphs[0].position_deltas[3 * 2 + 1] == 1.0f);  // vertex 2 moves up
  REQUIRE(s->animations.size() == 1);
  const auto& clip = s->animations[0];
  CHECK(clip.name == "Wave");
  REQUIRE(clip.channels.size() == 2);  // root: translation + rotation; "nobody" dropped
  CHECK(clip.channels[0].joint == 1);
  CHECK(clip.channels[0].values == std::vector<float>{1, 2, -3});
  CHECK(clip.channels[1].values == std::vector<float>{-0.5f, -0.5f, 0.5f, 0.5f});
  CHECK(reported(*s, "tracks without a matching bone"));
  CHECK(reported(*s, "bone collision shapes"));
  CHECK(s->report.lost_anything());
}

TEST_CASE("urho3d import: bad input is an error, not a crash") {
  const tiny t = make_tiny();
  bytes b = t.file;
  b[t.positions + 40] = std::byte{9};
  U3D_CHECK_ERR(u3::import_files(b, {}), errc::u3d_blend_index);
  U3D_CHECK_ERR(u3::import_files(bytes{}, {}), errc::u3d_bad_magic);
}

TEST_CASE("urho3d import and deep checks: work stays linear (R-LIMITS)") {
  const tiny t = make_tiny();
  auto m = u3::open_model(t.file);
  REQUIRE(m);
  SUBCASE("thousands of LODs over one draw range") {
    u3::model many = *m;
    many.geometries[0].lods.assign(30000, many.geometries[0].lods[0]);  // 90000 indices drawn, 3 stored
    auto bytes = u3::write_model(many);
    REQUIRE(bytes);
    auto again = u3::open_model(*bytes);
    REQUIRE(again);  // structurally fine
    U3D_CHECK_ERR(u3::open_model(*bytes, {.deep_checks = true}), errc::limit_exceeded);
    U3D_CHECK_ERR(u3::import_model(*again), errc::limit_exceeded);
    many.geometries[0].lods.resize(20000);  // 60000 <= 8 x 3 + 65536
    CHECK(u3::validate_model_deep(many).has_value());
  }
  SUBCASE("dense morph deltas beyond the caller's byte limit") {
    untold::limits small;
    small.max_total_bytes = 16;  // one position target of 3 vertices needs 36 bytes
    U3D_CHECK_ERR(u3::import_model(*m, {}, "tiny", {.limits = small}), errc::limit_exceeded);
    CHECK(u3::import_model(*m, {}, "tiny").has_value());
  }
}

TEST_CASE("urho3d import: a vertex a morph lists twice moves by the sum of its deltas, as in Urho3D") {
  // AnimatedModel::ApplyMorph adds every listed delta (vertex += delta x weight).
  const tiny t = make_tiny();
  auto m = u3::open_model(t.file, {.deep_checks = true});
  REQUIRE(m);
  gen entries;  // vertex 2 up by 1, then vertex 2 up by 2 and back by 0.5
  entries.u32(2).f32(0).f32(1).f32(0);
  entries.u32(2).f32(0).f32(2).f32(0.5f);
  u3::morph_buffer& mb = m->morphs[0].buffers[0];
  mb.vertex_count = 2;
  mb.data = entries.b;
  auto s = u3::import_model(*m);
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  REQUIRE(s->meshes[0].morphs.size() == 1);
  const std::vector<float>& d = s->meshes[0].morphs[0].position_deltas;
  REQUIRE(d.size() == 9);
  CHECK(d[3 * 2] == 0.0f);
  CHECK(d[3 * 2 + 1] == 3.0f);
  CHECK(d[3 * 2 + 2] == -0.5f);  // Z mirrored
}

TEST_CASE("urho3d import: repeated morph vertices drawn by many geometries cost linear work") {
  const auto work_of = [](std::uint32_t n) {
    const bytes file = repeated_morph_model(n, n);
    untold::budget budget(untold::limits{}, file.size());
    auto s = u3::import_files(file, {}, "repeat", {.budget = &budget});
    REQUIRE_MESSAGE(s.has_value(), s.error().describe());
    CHECK(s->meshes.size() == n);
    CHECK(s->meshes[0].morphs.size() == 1);
    CHECK(s->meshes[0].morphs[0].position_deltas[1] == doctest::Approx(0.001 * n).epsilon(1e-3));  // summed
    return budget.work().used;
  };
  const std::uint64_t small = work_of(1000), large = work_of(4000);
  CAPTURE(small);
  CAPTURE(large);
  CHECK(large <= 16 * 8000 + 1000);  // (entries + geometries) x a constant; the old loop took 16,000,000
  CHECK(large <= 5 * small);         // 4x the input, about 4x the work
}

TEST_CASE("urho3d import: a NaN geometry centre becomes the bounding-box centre, reported as changed") {
  const bytes file = load(data_dir() / "Models/History2011/Box.mdl");
  auto s = u3::import_files(file, {}, "Box");
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  bool found = false;
  for (const auto& e : s->report.entries)
    if (e.what == "geometry centres") {
      found = true;
      CHECK(e.severity == cv::report_entry::kind::changed);
      CHECK(e.count == 1);
    }
  CHECK(found);
  auto real = u3::import_files(load(data_dir() / "Models/Box.mdl"), {}, "Box");
  REQUIRE(real);
  CHECK_FALSE(reported(*real, "geometry centres"));
}

TEST_CASE("urho3d import: names that are not valid UTF-8 become '?' bytes, reported, the writer takes them") {
  tiny t = make_tiny();
  t.file[t.bone_count + 4] = std::byte{0xFF};  // "root" -> "\xFFoot"
  auto s = u3::import_files(t.file, {}, "tiny");
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  CHECK(s->skeletons[0].joints[0].name == "?oot");
  bool found = false;
  for (const auto& e : s->report.entries)
    if (e.what == "names") found = e.severity == cv::report_entry::kind::changed && e.count == 1;
  CHECK(found);
  cv::conversion_report report;
  auto out = cv::to_untold(*s, {}, report);
  CHECK_MESSAGE(out.has_value(), out.error().describe());  // it was E-INVALID-ARGUMENT (field path)
}

TEST_CASE("urho3d import: finite bone values whose rest matrix overflows are U3D-FINITE, naming the bone") {
  // A rotation component of 1e20 is finite, but its square is not: the
  // joint's rest matrix would be infinite (the writer used to refuse it as
  // E-INVALID-ARGUMENT, found by fuzz_urho3d_model).
  tiny t = make_tiny();
  put_f32(t.file, t.bone0_parent + 4 + 12 + 4, 1e20f);  // bone "root": rotation x
  REQUIRE(u3::open_model(t.file, {.deep_checks = true}).has_value());
  auto s = u3::import_files(t.file, {}, "tiny");
  REQUIRE_FALSE(s);
  CHECK(s.error().code == errc::u3d_not_finite);
  CHECK(std::string_view(s.error().context.field) == "bone.restTransform");
  CHECK(s.error().subject() == "root");
}
