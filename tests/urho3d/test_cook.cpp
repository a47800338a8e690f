// The cook path without the CLI: every fixture -> import -> to_untold ->
// untold::open with deep checks; triangle meshes keep the source's vertex and
// index counts; a skinned model with an animation keeps skeleton, skin and clip.
#include <untold/convert/to_untold.hpp>
#include <untold/reader.hpp>
#include <untold/urho3d/import.hpp>

#include "u3d_support.hpp"

namespace u3 = untold::urho3d;
namespace cv = untold::convert;
using namespace u3d_test;

TEST_CASE("urho3d cook: every fixture becomes a .untold that deep-validates, with the source's counts") {
  for (const auto& p : model_fixtures()) {
    CAPTURE(p.string());
    const bytes file = load(p);
    auto m = u3::open_model(file);
    REQUIRE(m);
    auto s = u3::import_files(file, {}, p.stem().string());
    REQUIRE(s);
    cv::conversion_report report;
    auto out = cv::to_untold(*s, {}, report);
    REQUIRE_MESSAGE(out.has_value(), out.error().describe());
    auto a = untold::open(out->file, {.deep_checks = true});
    REQUIRE_MESSAGE(a.has_value(), a.error().describe());
    // Triangle-list geometries: one mesh each, the distinct vertices they draw, the same index count.
    std::size_t triangle_geometries = 0;
    for (std::size_t g = 0; g < m->geometries.size(); ++g) {
      const auto& l = m->geometries[g].lods[0];
      if (l.primitive != u3::primitive_type::triangle_list) continue;
      ++triangle_geometries;
      bool found = false;
      for (const auto& rec : a->meshes()) {
        if (a->string(rec.mesh_name_offset) != s->meshes[g].name) continue;
        found = true;
        CHECK(rec.index_count == l.index_count);
        CHECK(rec.vertex_count == s->meshes[g].vertex_count());
      }
      CHECK_MESSAGE(found, "geometry " << g);
    }
    CHECK(a->meshes().size() >= triangle_geometries);
  }
}

TEST_CASE("urho3d cook: a skinned, morphed model with an animation keeps skeleton, skin and clip") {
  const tiny t = make_tiny();
  gen ani;
  ani.id("UANI").cstr("Walk").f32(1).u32(2);
  ani.cstr("root").u8(3).u32(2);
  for (int k = 0; k < 2; ++k) ani.f32(static_cast<float>(k)).f32(0).f32(1).f32(2).f32(1).f32(0).f32(0).f32(0);
  ani.cstr("child").u8(2).u32(1).f32(0).f32(0.7071f).f32(0.7071f).f32(0).f32(0);
  const std::vector<untold::byte_span> anims = {ani.b};
  auto s = u3::import_files(t.file, anims, "tiny");
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  cv::conversion_report report;
  auto out = cv::to_untold(*s, {}, report);
  REQUIRE_MESSAGE(out.has_value(), out.error().describe());
  auto a = untold::open(out->file, {.deep_checks = true});
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  CHECK(a->table<untold::skeleton_record>().size() == 1);
  CHECK(a->table<untold::skeleton_joint_record>().size() == 2);
  CHECK(a->table<untold::skin_record>().size() == 1);
  CHECK(a->table<untold::animation_clip_record>().size() == 1);
  // One channel per joint (the cook's rule): root with 2 translation and 2 rotation keys, child with 1 rotation key.
  const auto channels = a->table<untold::animation_channel_record>();
  REQUIRE(channels.size() == 2);
  CHECK(channels[0].translation_count + channels[1].translation_count == 2);
  CHECK(channels[0].rotation_count + channels[1].rotation_count == 3);
  CHECK(a->table<untold::translation_keyframe_record>().size() == 2);
  CHECK(a->table<untold::rotation_keyframe_record>().size() == 3);
  CHECK(a->meshes().size() == 1);
  CHECK(a->meshes()[0].vertex_count == 3);
}
