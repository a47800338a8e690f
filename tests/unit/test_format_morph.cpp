// Chunk types 23-27 (morph targets, morph data, Gaussian asset link, morph
// drivers, muscles) and the version-4 material fields (alpha mode in flags
// bits 0-1, transmissionFactor at offset 104): builder round trips, one
// crafted file per new rule (R-MORPH-MESH, R-MORPH-RANGE, R-MORPH-DRIVER,
// R-MORPH-VERTEX, R-INDEX-COUNT), the strings and finite checks of the new
// tables, and the writer's errors (E-FORMAT-VERSION, bad morph input).
#include "../ext_support.hpp"

#include <untold/ranges.hpp>

#include <cmath>
#include <limits>

using test::bytes;
using test::get_u32;
using test::put_f32;
using test::put_u32;
using test::put_u64;
using test::rejection;

namespace {

constexpr std::uint32_t kMesh = 3, kMaterial = 4, kMorphTarget = 23, kMorphData = 24, kGaussian = 25,
                        kMorphDriver = 26, kMuscle = 27;
constexpr std::size_t kMeshSize = 104, kMaterialSizeV4 = 108, kMorphTargetSize = 24, kEntrySize = 16,
                      kDriverSize = 36, kMuscleSize = 128;

std::size_t row_at(const bytes& f, std::uint32_t type) { return test::chunk_row_offset(test::chunk_row(f, type)); }
std::size_t rec(const bytes& f, std::uint32_t type, std::size_t row, std::size_t size) {
  return test::record_offset(f, type, row, size);
}

struct verdict {
  std::string rule = "accepted";
  std::string field;
  std::uint32_t chunk_type = 0;
  std::uint32_t record = untold::no_index;
};
verdict judge(const bytes& f, const untold::open_options& options = {}) {
  auto a = untold::open(f, options);
  if (a) return {};
  const untold::error& e = a.error();
  return {std::string(e.rule_id()), e.context.field ? e.context.field : "", e.context.chunk_type,
          e.context.record_index};
}
void expect(const bytes& f, const char* rule, const char* field, std::uint32_t type, std::uint32_t record,
            const untold::open_options& options = {}) {
  const verdict v = judge(f, options);
  CHECK(v.rule == rule);
  CHECK(v.field == field);
  CHECK(v.chunk_type == type);
  CHECK(v.record == record);
}

untold::asset open_ok(const bytes& f, untold::open_options options = {.deep_checks = true}) {
  auto a = untold::open(f, options);
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  return std::move(*a);
}

/// A 2x2 grid "face" with two morph targets (a dense one with normals, a
/// sparse one with a driver), a skeleton and a muscle, and a blended,
/// transmissive material.
struct morph_scene {
  test::grid face = test::make_grid(2);  // 4 vertices
  std::vector<untold::float3> smile = {{0, 0, 0}, {0.5f, 0, 0}, {0, 0, 0}, {0, -0.25f, 1}};
  std::vector<untold::float3> smile_normals = {{0, 0, 0}, {0, 0.125f, 0}, {0, 0, 0}, {0, 0, 0}};
  std::vector<untold::morph_delta> blink = {{.vertex = 2, .position = {0, 0, -2}}};
  std::vector<untold::skeleton_joint_desc> joints = {{.path = "root"}, {.path = "root/jaw", .parent = 0}};
};

bytes write_morph_scene(untold::write_options options = {}) {
  static const morph_scene in;
  untold::builder b;
  const auto material = b.add_material({.name = "glass", .base_color_factor = {1, 1, 1, 0.5f}, .alpha_cutoff = 0.25f,
                                        .alpha_mode = untold::alpha_mode::blend, .transmission_factor = 0.75f});
  const auto root = b.add_entity({.name = "head"});
  const auto face = b.add_mesh({.entity = root, .name = "face", .material = material, .vertices = in.face.vertices,
                                .indices = in.face.indices});
  const untold::morph_target_desc targets[] = {
      {.name = "smile", .positions = in.smile, .normals = in.smile_normals},
      {.name = "blink", .deltas = in.blink,
       .driver = untold::morph_driver_desc{.joint_path = "root/jaw", .pose_rotation = {0, 0, 0.5f, 0.75f},
                                           .radius = 0.25f}},
  };
  CHECK(b.add_morph_targets(face, targets) == 0);
  const auto skeleton = b.add_skeleton({.name = "rig", .entity = root, .joints = in.joints});
  b.add_muscle({.skeleton = skeleton, .name = "masseter", .origin_joint = "root", .insertion_joint = "root/jaw",
                .driver_joint = "root/jaw",
                .settings = {.origin_offset = {0, 0.5f, 0}, .belly_radius = 0.045f, .tendon_radius = 0.012f,
                             .rings = 5, .driver_full_angle = 1.5f}});
  b.add_raw_chunk(kGaussian, bytes(80, std::byte{0x11}), 1);
  options.content_hash = false;
  auto f = b.finish(options);
  REQUIRE_MESSAGE(f.has_value(), f.error().describe());
  return std::move(*f);
}

}  // namespace

TEST_CASE("morph: dense and sparse targets, a driver and a muscle round-trip through the builder") {
  const bytes f = write_morph_scene();
  const untold::asset a = open_ok(f);
  CHECK(a.format_version() == 4);

  const auto targets = a.table<untold::morph_target_record>();
  REQUIRE(targets.size() == 2);
  const untold::morph_target_record smile = targets[0], blink = targets[1];
  CHECK(a.string(smile.name_offset) == "smile");
  CHECK(smile.mesh_record_index == 0);
  CHECK(smile.flags == untold::morph_flags::has_normal_deltas);
  CHECK(smile.position_scale == 1.0f);
  CHECK(smile.first_entry_index == 0);
  REQUIRE(smile.entry_count == 2);  // vertices 1 and 3 move; 0 and 2 are stored as nothing
  const auto smile_entries = untold::view_morph_entries(a, smile);
  REQUIRE(smile_entries.size() == 2);
  CHECK(smile_entries[0].vertex_index == 1);
  CHECK(smile_entries[0].position(smile.position_scale) == untold::float3{0.5f, 0, 0});
  CHECK(smile_entries[0].normal() == untold::float3{0, 0.125f, 0});
  CHECK(smile_entries[0].position_delta == std::array<std::uint16_t, 3>{0x3800, 0, 0});  // binary16 0.5
  CHECK(smile_entries[1].vertex_index == 3);
  CHECK(smile_entries[1].position(1.0f) == untold::float3{0, -0.25f, 1});
  CHECK(smile_entries[1].position_delta == std::array<std::uint16_t, 3>{0, 0xB400, 0x3C00});

  CHECK(a.string(blink.name_offset) == "blink");
  CHECK(blink.flags == 0);
  CHECK(blink.first_entry_index == 2);
  REQUIRE(blink.entry_count == 1);
  const auto blink_entry = untold::view_morph_entries(a, blink)[0];
  CHECK(blink_entry.vertex_index == 2);
  CHECK(blink_entry.position(1.0f) == untold::float3{0, 0, -2});
  CHECK(blink_entry.normal_delta == std::array<std::uint16_t, 3>{0, 0, 0});

  const auto drivers = a.table<untold::morph_driver_record>();
  REQUIRE(drivers.size() == 1);
  CHECK(drivers[0].target_index == 1);
  CHECK(a.string(drivers[0].joint_path_offset) == "root/jaw");
  CHECK(drivers[0].pose_rotation == untold::float4{0, 0, 0.5f, 0.75f});
  CHECK(drivers[0].radius == 0.25f);
  CHECK(drivers[0].kernel == 0);

  const auto muscles = a.table<untold::muscle_record>();
  REQUIRE(muscles.size() == 1);
  const untold::muscle_record m = muscles[0];
  CHECK(m.skeleton_entity_id == a.table<untold::skeleton_record>()[0].entity_id);
  CHECK(a.string(m.name_offset) == "masseter");
  CHECK(a.string(m.origin_joint_offset) == "root");
  CHECK(a.string(m.insertion_joint_offset) == "root/jaw");
  CHECK(m.forward_joint_offset == untold::none);
  CHECK(m.flags == untold::muscle_flags::has_driver);
  CHECK(m.origin_offset == untold::float3{0, 0.5f, 0});
  CHECK(m.belly_radius == 0.045f);
  CHECK(m.rings == 5);
  CHECK(m.segments == 8);  // the reference exporter's default
  CHECK(m.driver_full_angle == 1.5f);

  const auto face = untold::resolve_mesh(a, 0);
  REQUIRE(face.has_value());
  CHECK(face->morph_targets == std::vector<std::uint32_t>{0, 1});

  // The Gaussian asset table is named but kept raw.
  const auto raw = a.raw_chunks();
  REQUIRE(raw.size() == 1);
  CHECK(a.chunks()[raw[0]].chunk_type == kGaussian);
  CHECK(a.chunks()[raw[0]].element_count == 1);
  CHECK(untold::chunk_type_name(kGaussian) == "gaussianAssetTable");
  CHECK(untold::chunk_type_name(kMorphTarget) == "morphTargetTable");
  CHECK(untold::chunk_type_name(kMorphData) == "morphTargetData");
  CHECK(untold::chunk_type_name(kMorphDriver) == "morphDriverTable");
  CHECK(untold::chunk_type_name(kMuscle) == "muscleTable");
  CHECK(untold::chunk_type_name(28) == "unknown");
}

TEST_CASE("morph: layout, element counts and byte-range loading of the morph chunks") {
  const bytes f = write_morph_scene();
  // MORPH_TARGET_DATA counts its entries, as the reference exporter writes it.
  CHECK(get_u32(f, row_at(f, kMorphData) + 32) == 3);
  CHECK(get_u32(f, row_at(f, kMorphTarget) + 32) == 2);
  // Morph data is bulk data: after VERTEX_DATA; the tables are metadata: before it.
  const auto offset = [&](std::uint32_t type) { return test::get_u64(f, row_at(f, type) + 8); };
  CHECK(offset(kMorphTarget) < offset(6));
  CHECK(offset(kMuscle) < offset(6));
  CHECK(offset(kMorphData) > offset(7));
  CHECK(untold::is_data_chunk(kMorphData));
  CHECK(untold::is_metadata_chunk(kMorphTarget));

  // A streamed open validates the tables before the data arrives.
  untold::memory_range_source src(f);
  auto s = untold::streamed_asset::open(src, {.initial_read = 0});
  REQUIRE_MESSAGE(s.has_value(), s.error().describe());
  const auto first_target = [&] { return s->metadata().table<untold::morph_target_record>()[0]; };
  CHECK(s->metadata().table<untold::morph_target_record>().size() == 2);
  CHECK(untold::view_morph_entries(s->metadata(), first_target()).empty());
  REQUIRE(s->load_all().has_value());
  CHECK(untold::view_morph_entries(s->metadata(), first_target()).size() == 2);
}

TEST_CASE("material: alpha mode and transmission round-trip in version 4") {
  const bytes f = write_morph_scene();
  const untold::asset a = open_ok(f);
  const untold::material_record m = a.materials()[0];
  CHECK(m.alpha_mode() == untold::alpha_mode::blend);
  CHECK(m.flags == 2);
  CHECK(m.alpha_cutoff == 0.25f);
  CHECK(m.transmission_factor == 0.75f);
  // Spec offsets of the v4 record: flags at 4, alphaCutoff at 52, transmission at 104.
  const std::size_t at = rec(f, kMaterial, 0, kMaterialSizeV4);
  CHECK(get_u32(f, at + 4) == 2);
  CHECK(untold::load_le_unchecked<float>(f.data() + at + 52) == 0.25f);
  CHECK(untold::load_le_unchecked<float>(f.data() + at + 104) == 0.75f);

  untold::material_record r;
  r.flags = 0x10;
  r.set_alpha_mode(untold::alpha_mode::mask);
  CHECK(r.flags == 0x11);
  CHECK(r.alpha_mode() == untold::alpha_mode::mask);
  r.flags = 0x13;  // 3: no enumerator, passed through
  CHECK(static_cast<std::uint32_t>(r.alpha_mode()) == 3);
}

TEST_CASE("material: older versions keep the alpha mode and store no transmission") {
  untold::builder b;
  b.add_material({.name = "cutout", .alpha_cutoff = 0.4f, .alpha_mode = untold::alpha_mode::mask});
  b.add_entity({.name = "e"});
  for (const std::uint32_t version : {1u, 2u, 3u, 4u}) {
    CAPTURE(version);
    auto f = b.finish({.format_version = version});
    REQUIRE(f.has_value());
    const untold::asset a = open_ok(*f);
    CHECK(a.format_version() == version);
    CHECK(a.materials()[0].alpha_mode() == untold::alpha_mode::mask);
    CHECK(a.materials()[0].alpha_cutoff == 0.4f);
    CHECK(a.materials()[0].transmission_factor == 0.0f);
    CHECK(a.chunks()[*a.find_chunk(untold::chunk_type::material_table)].uncompressed_size ==
          untold::material_record_size(version));
  }
}

TEST_CASE("writer: version 4 by default, and E-FORMAT-VERSION when an older one cannot store the content") {
  untold::builder plain;
  plain.add_entity({.name = "e"});
  auto f = plain.finish();
  REQUIRE(f.has_value());
  CHECK(get_u32(*f, 8) == 4);

  const struct {
    untold::material_desc material;
    std::uint32_t needs;
    const char* field;
  } cases[] = {
      {{.name = "glass", .transmission_factor = 0.5f}, 4, "transmissionFactor"},
      {{.name = "remap", .height_remap_max = 0.5f}, 4, "heightRemapMax"},
      {{.name = "height", .height_scale = 0.1f}, 3, "heightScale"},
      {{.name = "glow", .emissive_factor = {1, 0, 0}}, 2, "emissiveFactor"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.field);
    untold::builder b;
    b.add_material({.name = "plain"});
    b.add_material(c.material);
    CHECK(b.minimum_format_version() == c.needs);
    for (std::uint32_t version = 1; version <= 4; ++version) {
      CAPTURE(version);
      auto out = b.finish({.format_version = version});
      if (version >= c.needs) {
        CHECK(out.has_value());
        continue;
      }
      REQUIRE_FALSE(out.has_value());
      const untold::error& e = out.error();
      CHECK(e.code == untold::errc::format_version_too_low);
      CHECK(e.rule_id() == "E-FORMAT-VERSION");
      CHECK(std::string(e.context.field) == c.field);
      CHECK(e.context.record_index == 1);
      CHECK(e.context.value == version);
      CHECK(e.context.limit == c.needs);
    }
  }
  untold::builder b;
  b.add_entity({.name = "e"});
  CHECK(b.finish({.format_version = 5}).error().code == untold::errc::invalid_argument);
  CHECK(b.finish({.format_version = 0}).error().code == untold::errc::invalid_argument);
}

// ---- crafted rejections ---------------------------------------------------------------

TEST_CASE("morph: the unpatched scene is accepted, deep checks included") {
  const bytes f = write_morph_scene();
  CHECK(rejection(f) == "accepted");
  CHECK(rejection(f, {.deep_checks = true}) == "accepted");
}

TEST_CASE("R-MORPH-MESH") {
  bytes f = write_morph_scene();
  put_u32(f, rec(f, kMorphTarget, 1, kMorphTargetSize) + 0, 1);  // one mesh only
  expect(f, "R-MORPH-MESH", "meshRecordIndex", kMorphTarget, 1);
}

TEST_CASE("R-MORPH-RANGE") {
  const bytes original = write_morph_scene();
  const auto target = [&](const bytes& f, std::size_t row) { return rec(f, kMorphTarget, row, kMorphTargetSize); };
  SUBCASE("entries past the data") {
    bytes f = original;
    put_u32(f, target(f, 1) + 16, 2);  // [2, 4) of 3 entries
    expect(f, "R-MORPH-RANGE", "entryCount", kMorphTarget, 1);
  }
  SUBCASE("first entry past the data") {
    bytes f = original;
    put_u32(f, target(f, 0) + 12, 3);
    expect(f, "R-MORPH-RANGE", "firstEntryIndex", kMorphTarget, 0);
  }
  SUBCASE("first + count wraps u32") {
    bytes f = original;
    put_u32(f, target(f, 1) + 16, 0xFFFFFFFFu);
    expect(f, "R-MORPH-RANGE", "entryCount", kMorphTarget, 1);
  }
  SUBCASE("MORPH_TARGET_DATA missing") {
    bytes f = original;
    put_u32(f, row_at(f, kMorphData), 1000);  // now an unknown core chunk
    expect(f, "R-MORPH-RANGE", "firstEntryIndex", kMorphTarget, 0);
  }
  SUBCASE("a target without entries needs no data") {
    bytes f = original;
    put_u32(f, row_at(f, kMorphData), 1000);
    put_u32(f, target(f, 0) + 16, 0);
    put_u32(f, target(f, 1) + 16, 0);
    CHECK(rejection(f, {.deep_checks = true}) == "accepted");
  }
  SUBCASE("targets may share entries") {
    bytes f = original;
    put_u32(f, target(f, 1) + 12, 0);
    put_u32(f, target(f, 1) + 16, 3);
    CHECK(rejection(f, {.deep_checks = true}) == "accepted");
  }
}

TEST_CASE("R-MORPH-DRIVER") {
  bytes f = write_morph_scene();
  put_u32(f, rec(f, kMorphDriver, 0, kDriverSize), 2);  // two targets
  expect(f, "R-MORPH-DRIVER", "targetIndex", kMorphDriver, 0);
}

TEST_CASE("R-MORPH-VERTEX (deep)") {
  bytes f = write_morph_scene();
  put_u32(f, rec(f, kMorphData, 2, kEntrySize), 4);  // the face has 4 vertices
  CHECK(rejection(f) == "accepted");                 // a deep check
  auto a = untold::open(f, {.deep_checks = true});
  REQUIRE_FALSE(a.has_value());
  const untold::error& e = a.error();
  CHECK(e.rule_id() == "R-MORPH-VERTEX");
  CHECK(e.context.chunk_type == kMorphTarget);
  CHECK(e.context.record_index == 1);
  CHECK(std::string(e.context.field) == "vertexIndex");
  CHECK(e.context.value == 4);
  CHECK(e.context.limit == 4);
  CHECK(e.subject() == "entry 2");
}

TEST_CASE("R-TABLE-SIZE covers the new tables, R-DUP-CHUNK the interpreted ones") {
  for (const std::uint32_t type : {kMorphTarget, kMorphData, kMorphDriver, kMuscle}) {
    CAPTURE(type);
    bytes f = write_morph_scene();
    put_u32(f, row_at(f, type) + 32, get_u32(f, row_at(f, type) + 32) + 1);
    CHECK(rejection(f) == "R-TABLE-SIZE");
  }
  bytes f = write_morph_scene();
  put_u32(f, row_at(f, kMuscle), kMorphDriver);  // two driver tables
  CHECK(rejection(f) == "R-DUP-CHUNK");
}

TEST_CASE("R-STRING covers the strings of the morph and muscle tables") {
  const bytes original = write_morph_scene();
  const struct {
    std::uint32_t type;
    std::size_t size, at;
    const char* field;
  } cases[] = {
      {kMorphTarget, kMorphTargetSize, 4, "nameOffset"},
      {kMorphDriver, kDriverSize, 4, "jointPathOffset"},
      {kMuscle, kMuscleSize, 4, "nameOffset"},
      {kMuscle, kMuscleSize, 12, "forwardJointOffset"},
      {kMuscle, kMuscleSize, 16, "forwardTipJointOffset"},
      {kMuscle, kMuscleSize, 20, "originJointOffset"},
      {kMuscle, kMuscleSize, 24, "originTipJointOffset"},
      {kMuscle, kMuscleSize, 44, "insertionJointOffset"},
      {kMuscle, kMuscleSize, 48, "insertionTipJointOffset"},
      {kMuscle, kMuscleSize, 112, "driverJointOffset"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.field);
    bytes f = original;
    put_u32(f, rec(f, c.type, 0, c.size) + c.at, 0x7FFFFFFF);
    expect(f, "R-STRING", c.field, c.type, 0);
  }
}

TEST_CASE("R-FINITE covers morph scales, deltas and drivers (deep)") {
  const bytes original = write_morph_scene();
  SUBCASE("positionScale") {
    bytes f = original;
    put_f32(f, rec(f, kMorphTarget, 0, kMorphTargetSize) + 20, std::numeric_limits<float>::quiet_NaN());
    CHECK(rejection(f) == "accepted");
    expect(f, "R-FINITE", "positionScale", kMorphTarget, 0, {.deep_checks = true});
  }
  SUBCASE("a delta") {
    bytes f = original;
    untold::store_le_unchecked<std::uint16_t>(f.data() + rec(f, kMorphData, 1, kEntrySize) + 12, 0x7C00);  // +inf
    expect(f, "R-FINITE", "normalDelta", kMorphData, 1, {.deep_checks = true});
  }
  SUBCASE("a driver's radius") {
    bytes f = original;
    put_f32(f, rec(f, kMorphDriver, 0, kDriverSize) + 28, std::numeric_limits<float>::infinity());
    expect(f, "R-FINITE", "radius", kMorphDriver, 0, {.deep_checks = true});
  }
}

TEST_CASE("R-INDEX-COUNT: a triangle list's index count is a multiple of 3") {
  bytes f = write_morph_scene();
  const std::size_t mesh = rec(f, kMesh, 0, kMeshSize);
  // 6 indices -> 4: shrink indexCount and the byte size together, so only R-INDEX-COUNT breaks.
  put_u32(f, mesh + 20, 4);
  put_u64(f, mesh + 56, 8);
  expect(f, "R-INDEX-COUNT", "indexCount", kMesh, 0);
  put_u32(f, mesh + 20, 3);
  put_u64(f, mesh + 56, 6);
  CHECK(rejection(f) == "accepted");

  // The writer refuses to write one.
  untold::builder b;
  const auto e = b.add_entity({.name = "e"});
  const test::grid g = test::make_grid(2);
  b.add_mesh({.entity = e, .vertices = g.vertices, .indices = std::span(g.indices).first(4)});
  REQUIRE_FALSE(b.finish().has_value());
  CHECK(b.first_error().code == untold::errc::invalid_argument);
  CHECK(std::string(b.first_error().context.field) == "indices");
  CHECK(b.first_error().context.value == 4);
}

TEST_CASE("morph: bad morph and muscle input to the writer is a returned error") {
  const test::grid g = test::make_grid(2);
  const std::vector<untold::float3> three(3), four(4);
  const auto field_of = [](const untold::builder& b) {
    auto f = b.finish();
    REQUIRE_FALSE(f.has_value());
    return std::string(f.error().context.field);
  };
  const auto with_mesh = [&](untold::builder& b) {
    const auto e = b.add_entity({.name = "e"});
    return b.add_mesh({.entity = e, .vertices = g.vertices, .indices = g.indices});
  };
  {
    untold::builder b;
    b.add_morph_target(0, {.positions = four});
    CHECK(field_of(b) == "mesh");
  }
  {
    untold::builder b;
    b.add_morph_target(with_mesh(b), {.positions = three});
    CHECK(field_of(b) == "positions");
  }
  {
    untold::builder b;
    const std::vector<untold::morph_delta> sparse = {{.vertex = 4}};
    b.add_morph_target(with_mesh(b), {.deltas = sparse});
    CHECK(field_of(b) == "vertex");
  }
  {
    untold::builder b;
    const std::vector<untold::morph_delta> sparse = {{.vertex = 1}};
    b.add_morph_target(with_mesh(b), {.positions = four, .deltas = sparse});
    CHECK(field_of(b) == "deltas");
  }
  {
    untold::builder b;
    std::vector<untold::float3> bad = four;
    bad[2][1] = std::numeric_limits<float>::infinity();
    b.add_morph_target(with_mesh(b), {.positions = bad});
    CHECK(field_of(b) == "delta");
  }
  {
    untold::builder b;
    const std::vector<untold::float3> huge = {{0, 0, 0}, {1e6f, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    b.add_morph_target(with_mesh(b), {.positions = huge, .position_scale = 1.0f});
    CHECK(field_of(b) == "positionDelta");
  }
  {
    untold::builder b;
    b.add_morph_target(with_mesh(b), {.positions = four, .position_scale = 0.0f});
    CHECK(field_of(b) == "positionScale");
  }
  {
    untold::builder b;
    with_mesh(b);
    b.add_muscle({.skeleton = 0, .name = "m"});
    CHECK(field_of(b) == "skeleton");
  }
  {
    untold::builder b;
    b.add_material({.name = "m", .transmission_factor = 1.5f});
    CHECK(field_of(b) == "transmissionFactor");
  }
  {
    untold::builder b;
    b.add_material({.name = "m", .flags = 1, .alpha_mode = untold::alpha_mode::blend});
    CHECK(field_of(b) == "alphaMode");
  }
}

TEST_CASE("morph: large deltas get a power-of-two positionScale, and read back within binary16 precision") {
  const test::grid g = test::make_grid(2);
  const std::vector<untold::float3> big = {{0, 0, 0}, {100000.0f, 0, 0}, {0, 3.0f, 0}, {0, 0, -250000.0f}};
  untold::builder b;
  const auto e = b.add_entity({.name = "e"});
  const auto mesh = b.add_mesh({.entity = e, .vertices = g.vertices, .indices = g.indices});
  b.add_morph_target(mesh, {.name = "grow", .positions = big});
  auto f = b.finish();
  REQUIRE_MESSAGE(f.has_value(), f.error().describe());
  const untold::asset a = open_ok(*f);
  const untold::morph_target_record t = a.table<untold::morph_target_record>()[0];
  CHECK(t.position_scale == 4.0f);  // 250000 / 4 <= 65504 < 250000 / 2
  const auto entries = untold::view_morph_entries(a, t);
  REQUIRE(entries.size() == 3);
  for (const auto& entry : entries) {
    const untold::float3 want = big[entry.vertex_index], got = entry.position(t.position_scale);
    for (int k = 0; k < 3; ++k) CHECK(std::abs(got[k] - want[k]) <= std::abs(want[k]) * 0x1p-11f);
  }
}

TEST_CASE("morph: deep checks of targets that all share every entry are linear, not targets x entries") {
  // n targets, each patched to cover all n entries of one n-vertex mesh: a
  // scan per target would read n * n entries; the range queries read a few
  // hundred per target at most.
  constexpr std::uint32_t n = 3000;
  std::vector<untold::float3> positions(n), deltas(n, untold::float3{0, 0, 0.5f});
  for (std::uint32_t i = 0; i < n; ++i) positions[i] = {static_cast<float>(i % 7), 0, 0};
  const bytes vertices = test::raw_vertices(positions);
  const std::vector<std::uint32_t> indices = {0, 1, 2};
  untold::builder b;
  const auto e = b.add_entity({.name = "e"});
  const auto mesh = b.add_mesh({.entity = e, .vertices = vertices, .indices = indices});
  b.add_morph_target(mesh, {.name = "all", .positions = deltas});
  for (std::uint32_t i = 1; i < n; ++i) b.add_morph_target(mesh, {.name = "none"});
  auto built = b.finish({.content_hash = false});
  REQUIRE_MESSAGE(built.has_value(), built.error().describe());
  bytes f = std::move(*built);
  for (std::uint32_t i = 1; i < n; ++i) {
    put_u32(f, rec(f, kMorphTarget, i, kMorphTargetSize) + 12, 0);  // firstEntryIndex
    put_u32(f, rec(f, kMorphTarget, i, kMorphTargetSize) + 16, n);  // entryCount
  }
  untold::detail::validation_work = 0;
  CHECK(rejection(f, {.deep_checks = true}) == "accepted");
  CHECK(untold::detail::validation_work < std::uint64_t{n} * n / 10);
  // And a bad vertex in the shared entries is still found, in the first target.
  put_u32(f, rec(f, kMorphData, n - 1, kEntrySize), n);
  const verdict v = judge(f, {.deep_checks = true});
  CHECK(v.rule == "R-MORPH-VERTEX");
  CHECK(v.record == 0);
}
