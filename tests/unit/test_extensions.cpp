// Engine extension tables (spec 3.3) and plugin chunks: round trips of a
// skinned, animated scene and of an animation file, writer layout and errors,
// and one crafted file per R-EXT-RANGES rejection (patched at spec offsets),
// each asserting the rule id and the offending field.
#include "../ext_support.hpp"

#include <untold/ranges.hpp>

#include <cmath>
#include <deque>
#include <limits>

using test::bytes;
using test::get_u32;
using test::get_u64;
using test::put_f32;
using test::put_u32;
using test::put_u64;
using test::rejection;
using namespace test;  // chunk type and record size constants

namespace {

untold::asset open_ok(const bytes& f, untold::open_options options = {.deep_checks = true}) {
  auto a = untold::open(f, options);
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  return std::move(*a);
}

/// How a file is rejected: rule id, field, chunk type and record, or "accepted".
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

std::size_t row_at(const bytes& f, std::uint32_t type) { return test::chunk_row_offset(test::chunk_row(f, type)); }
std::size_t rec(const bytes& f, std::uint32_t type, std::size_t row, std::size_t size) {
  return test::record_offset(f, type, row, size);
}

bool same_bytes(untold::byte_span a, untold::byte_span b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

/// Expects rejection by R-EXT-RANGES naming `field` in table `type`, record `record`.
void expect_ext(const bytes& f, const char* field, std::uint32_t type, std::uint32_t record,
                const untold::open_options& options = {}) {
  const verdict v = judge(f, options);
  CHECK(v.rule == "R-EXT-RANGES");
  CHECK(v.field == field);
  CHECK(v.chunk_type == type);
  CHECK(v.record == record);
}

}  // namespace

// ---- round trips -------------------------------------------------------------------

TEST_CASE("ext: a skinned, animated scene round-trips every extension table") {
  const test::ext_inputs in;
  untold::builder b;
  test::fill_ext_scene(b, in);
  auto file = b.finish({.block_digests = false});  // counts plugin chunks
  REQUIRE_MESSAGE(file.has_value(), file.error().describe());
  const untold::asset a = open_ok(*file);

  // Skeletons: joints concatenated, parents kept skeleton-local.
  const auto skeletons = a.table<untold::skeleton_record>();
  REQUIRE(skeletons.size() == 2);
  CHECK(a.string(skeletons[0].name_offset) == "rig");
  CHECK(skeletons[0].entity_id == 2);  // the rig entity's id
  CHECK(skeletons[0].first_joint_record_index == 0);
  CHECK(skeletons[0].joint_record_count == 3);
  CHECK(skeletons[1].entity_id == 77);
  CHECK(skeletons[1].first_joint_record_index == 3);
  CHECK(skeletons[1].joint_record_count == 2);
  const auto joints = a.table<untold::skeleton_joint_record>();
  REQUIRE(joints.size() == 5);
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(a.string(joints[i].joint_path_offset) == in.rig_joints[i].path);
    CHECK(joints[i].parent_joint_index == in.rig_joints[i].parent);
    CHECK(joints[i].bind_transform == in.rig_joints[i].bind_transform);
    CHECK(joints[i].rest_transform == in.rig_joints[i].rest_transform);
  }
  CHECK(joints[4].parent_joint_index == 0);  // local to the prop skeleton, not row 0
  CHECK(joints[4].flags == 7);

  // The skin names the mesh's final row and carries per-vertex data.
  const auto meshes = a.meshes();
  REQUIRE(meshes.size() == 2);
  CHECK(a.string(meshes[1].mesh_name_offset) == "body");
  const auto skins = a.table<untold::skin_record>();
  REQUIRE(skins.size() == 1);
  const untold::skin_record skin = skins[0];
  CHECK(skin.mesh_record_index == 1);
  CHECK(skin.entity_id == 1);  // default: the mesh's entity
  CHECK(skin.skeleton_entity_id == 2);
  CHECK(skin.joint_count == 3);
  CHECK(skin.vertex_count == 9);
  const auto mapping = a.records<untold::skin_joint_mapping_record>(skin.first_joint_mapping_index, skin.joint_count);
  REQUIRE(mapping.size() == 3);
  for (std::size_t j = 0; j < 3; ++j) CHECK(mapping[j].skeleton_joint_index == in.palette[j]);
  const auto indices = untold::view_joint_indices(a, skin);
  const auto weights = untold::view_joint_weights(a, skin);
  REQUIRE(indices.size() == 9);
  REQUIRE(weights.size() == 9);
  for (std::size_t v = 0; v < 9; ++v) {
    CHECK(indices[v].joints == in.joint_indices[v]);
    CHECK(weights[v].weights == in.joint_weights[v]);
  }
  CHECK(a.table<untold::skin_joint_indices>().size() == 9);  // the whole chunk as a typed view

  // Edge indices through the typed view.
  const auto edges = untold::view_edge_indices(a, meshes[0]);
  CHECK(std::vector<std::uint32_t>(edges.begin(), edges.end()) ==
        std::vector<std::uint32_t>(in.floor.indices.begin(), in.floor.indices.begin() + 4));

  // Clips, channels, keys.
  const auto clips = a.table<untold::animation_clip_record>();
  REQUIRE(clips.size() == 2);
  CHECK(a.string(clips[0].name_offset) == "walk");
  CHECK(clips[0].duration == 1.0f);  // the latest key
  CHECK(clips[0].flags == 3);
  CHECK(clips[0].channel_record_count == 2);
  CHECK(clips[1].duration == 2.0f);
  CHECK(clips[1].channel_record_count == 0);
  const auto channels = a.table<untold::animation_channel_record>();
  REQUIRE(channels.size() == 2);
  CHECK(a.string(channels[1].joint_path_offset) == "root/hips/spine");
  CHECK(channels[1].flags == 1);
  const auto hips_t = a.records<untold::translation_keyframe_record>(channels[0].first_translation_index,
                                                                      channels[0].translation_count);
  CHECK(std::vector(hips_t.begin(), hips_t.end()) == in.hips_t);
  const auto spine_r =
      a.records<untold::rotation_keyframe_record>(channels[1].first_rotation_index, channels[1].rotation_count);
  CHECK(std::vector(spine_r.begin(), spine_r.end()) == in.spine_r);

  // Lights, camera, color management, LUT.
  const auto lights = a.table<untold::light_record>();
  REQUIRE(lights.size() == 2);
  CHECK(a.string(lights[0].name_offset) == "sun");
  CHECK(lights[0].entity_id == 100);  // no entity record: allowed
  CHECK(lights[0].light_type == 1);
  CHECK(lights[0].flags == (untold::light_flags::casts_shadow | (1u << 9)));  // unknown bits kept
  CHECK(lights[0].color == untold::float3{1, 0.9f, 0.8f});
  CHECK(lights[1].entity_id == 2);
  CHECK(lights[1].outer_cone == 0.6f);
  CHECK(lights[1].local_transform == test::translation(0, 3, 0));
  const auto cameras = a.table<untold::camera_record>();
  REQUIRE(cameras.size() == 1);
  CHECK(cameras[0].entity_id == 101);
  CHECK(cameras[0].fov_y_degrees == 45);
  CHECK(cameras[0].near_clip == 0.5f);
  CHECK(cameras[0].aspect == 1.5f);
  const auto color = a.table<untold::color_management_record>();
  REQUIRE(color.size() == 1);
  CHECK(color[0].lut_texture_index == 0);
  CHECK(a.string(color[0].view_transform_name_offset) == "AgX");
  CHECK(a.string(color[0].look_name_offset) == "Punchy");
  CHECK(color[0].gamma == 2.2f);
  CHECK(color[0].shaper_max_stops == 6.5f);
  CHECK(color[0].lut_size == 32);
  const auto luts = a.table<untold::color_grade_lut_record>();
  REQUIRE(luts.size() == 1);
  CHECK(a.string(luts[0].lut_uri_offset) == "Luts/grade.cube");
  CHECK(luts[0].domain_max == untold::float3{2, 2, 2});

  // Plugin chunks, in call order.
  const auto plugins = untold::plugin_chunks(a);
  REQUIRE(plugins.size() == 2);
  CHECK(plugins[0].plugin_id == "com.example.physics");
  CHECK(plugins[0].kind == 42);
  CHECK(plugins[0].chunk_version == 3);
  CHECK(plugins[0].chunk_type == kPhysics);
  CHECK(same_bytes(plugins[0].payload, in.physics));
  CHECK(plugins[1].chunk_type == kOther);
  CHECK(plugins[1].kind == 0xDEAD);
}

TEST_CASE("ext: layout puts the extension tables with the metadata and joint data with the data") {
  const bytes f = test::write_ext_scene();
  const untold::asset a = open_ok(f);
  std::vector<std::uint32_t> types;
  for (const untold::chunk_entry& c : a.chunks()) types.push_back(c.chunk_type);
  CHECK(types == std::vector<std::uint32_t>{1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15, 19, 20, 21, 22, 6, 7, 16, 17,
                                            18, kPhysics, kOther});
  CHECK(test::write_ext_scene() == f);  // deterministic
  // A scene without extensions writes none of their chunks.
  CHECK(a.table<untold::skin_record>().size() == 1);
  const untold::asset plain = open_ok(test::write_scene());
  CHECK_FALSE(plain.find_chunk(untold::chunk_type::skin_table).has_value());
  CHECK_FALSE(plain.find_chunk(untold::chunk_type::joint_index_data).has_value());
}

TEST_CASE("ext: compressed and hashed extension scene round-trips, streamed too") {
  untold::write_options options;
  options.compression.metadata = {untold::compression::zstd, 3};
  options.compression.data = {untold::compression::lz4, 0};
  options.block_digests = false;  // counts the scene's own plugin chunks, loaded only by load_all
  const bytes f = test::write_ext_scene(true, options);
  const untold::asset a = open_ok(f);
  CHECK(untold::plugin_chunks(a).size() == 2);

  untold::memory_range_source src(f);
  auto streamed = untold::streamed_asset::open(src, {.open = {.deep_checks = true}, .initial_read = 0});
  REQUIRE_MESSAGE(streamed.has_value(), streamed.error().describe());
  CHECK(untold::plugin_chunks(streamed->metadata()).empty());  // not loaded at open
  CHECK(streamed->metadata().table<untold::skin_record>()[0] == a.table<untold::skin_record>()[0]);
  const auto status = streamed->load_all();
  REQUIRE_MESSAGE(status.has_value(), status.error().describe());
  CHECK(untold::plugin_chunks(streamed->metadata()).size() == 2);
  CHECK(untold::view_joint_weights(streamed->metadata(), a.table<untold::skin_record>()[0]).size() == 9);
}

TEST_CASE("ext: an animation file (fileType 5) round-trips with only its required chunks") {
  const test::ext_inputs in;
  untold::builder b{untold::file_type::animation};
  b.add_animation_clip({.name = "walk", .channels = in.channels});
  auto f = b.finish({.block_digests = false});  // exactly the required chunks
  REQUIRE_MESSAGE(f.has_value(), f.error().describe());
  CHECK(get_u32(*f, 12) == 5);
  const untold::asset a = open_ok(*f);
  CHECK(a.file_type() == untold::file_type::animation);
  std::vector<std::uint32_t> types;
  for (const untold::chunk_entry& c : a.chunks()) types.push_back(c.chunk_type);
  CHECK(types == std::vector<std::uint32_t>{1, 12, 13, 14, 15});
  CHECK(a.header().entity_count == 0);
  CHECK(a.header().vertex_layout == 1);
  const auto clip = untold::resolve_clip(a, 0);
  REQUIRE(clip.has_value());
  CHECK(clip->name == "walk");
  REQUIRE(clip->channels.size() == 2);
  CHECK(clip->channels[0].joint_path == "root/hips");
  CHECK(std::vector(clip->channels[0].rotations.begin(), clip->channels[0].rotations.end()) == in.hips_r);

  SUBCASE("an empty animation file still has every required chunk") {
    untold::builder empty{untold::file_type::animation};
    auto e = empty.finish({.block_digests = false});
    REQUIRE(e.has_value());
    const untold::asset ea = open_ok(*e);
    CHECK(ea.chunks().size() == 5);
  }
  SUBCASE("scene tables are optional there, written when used") {
    untold::builder with_entity{untold::file_type::animation};
    with_entity.add_entity({.name = "armature"});
    with_entity.add_animation_clip({.name = "walk", .channels = in.channels});
    auto e = with_entity.finish({.block_digests = false});
    REQUIRE(e.has_value());
    const untold::asset ea = open_ok(*e);
    CHECK(ea.find_chunk(untold::chunk_type::entity_table).has_value());
    CHECK_FALSE(ea.find_chunk(untold::chunk_type::mesh_table).has_value());
  }
}

TEST_CASE("ext: R-REQUIRED for animation files") {
  const test::ext_inputs in;
  untold::builder b{untold::file_type::animation};
  b.add_animation_clip({.name = "walk", .channels = in.channels});
  const bytes original = *b.finish({.content_hash = false});
  for (const std::uint32_t type : {1u, kClip, kChannel, kTranslation, kRotation}) {
    CAPTURE(type);
    bytes f = original;
    put_u32(f, row_at(f, type), 1000);
    const verdict v = judge(f);
    CHECK(v.rule == "R-REQUIRED");
    CHECK(v.chunk_type == type);
  }
  // A tile needs no animation tables, an animation file no scene tables.
  bytes tile = original;
  put_u32(tile, 12, 1);
  CHECK(judge(tile).rule == "R-REQUIRED");
}

// ---- plugin chunks -------------------------------------------------------------------

TEST_CASE("ext: plugin envelope encode and parse") {
  const bytes payload = {std::byte{1}, std::byte{2}, std::byte{3}};
  const auto chunk = untold::encode_plugin_chunk("com.example.physics", 42, 3, payload);
  REQUIRE(chunk.has_value());
  REQUIRE(chunk->size() == 16 + 19 + 3);
  CHECK(get_u32(*chunk, 0) == 0x54584555u);
  CHECK((*chunk)[0] == std::byte{'U'});
  CHECK((*chunk)[3] == std::byte{'T'});
  CHECK(untold::load_le_unchecked<std::uint16_t>(chunk->data() + 4) == 1);
  CHECK(untold::load_le_unchecked<std::uint16_t>(chunk->data() + 6) == 19);
  CHECK(get_u32(*chunk, 8) == 42);
  CHECK(get_u32(*chunk, 12) == 3);
  const auto parsed = untold::parse_plugin_chunk(*chunk);
  REQUIRE(parsed.has_value());
  CHECK(parsed->plugin_id == "com.example.physics");
  CHECK(same_bytes(parsed->payload, payload));

  CHECK(untold::encode_plugin_chunk("", 1, 1, payload).error().context.field == std::string("pluginId"));
  CHECK_FALSE(untold::encode_plugin_chunk(" \t\n", 1, 1, payload).has_value());
  CHECK_FALSE(untold::encode_plugin_chunk("\xE3\x80\x80", 1, 1, payload).has_value());  // U+3000 only: blank
  CHECK_FALSE(untold::encode_plugin_chunk(std::string_view("a\0b", 3), 1, 1, payload).has_value());
  CHECK_FALSE(untold::encode_plugin_chunk("\xC3\x28", 1, 1, payload).has_value());
  CHECK_FALSE(untold::encode_plugin_chunk(std::string(65536, 'x'), 1, 1, payload).has_value());
  CHECK(untold::encode_plugin_chunk(" x ", 1, 1, payload).has_value());
  CHECK(untold::encode_plugin_chunk("\xE6\x97\xA5\xE6\x9C\xAC", 1, 1, {}).has_value());  // non-ASCII id, empty payload
}

TEST_CASE("ext: plugin_chunk_body checks the envelope against the expected id, kind and version") {
  const bytes payload = {std::byte{1}, std::byte{2}, std::byte{3}};
  const untold::plugin_chunk_identity expected{.plugin_id = "com.example.physics", .kind = 42, .chunk_version = 3};
  std::deque<bytes> chunks;  // the bodies returned view them: kept alive for the whole test
  const auto body_of = [&](std::string_view id, std::uint32_t kind, std::uint32_t version) {
    auto chunk = untold::encode_plugin_chunk(id, kind, version, payload);
    REQUIRE(chunk.has_value());
    chunks.push_back(std::move(*chunk));
    return untold::plugin_chunk_body(chunks.back(), expected, untold::errc::integrity_layout, 7, 0x8001);
  };
  const auto body = body_of("com.example.physics", 42, 3);
  REQUIRE(body.has_value());
  CHECK(same_bytes(*body, payload));
  // A wrong identity: the caller's rule, the field, the value found, the row.
  const auto mismatch = [&](const untold::result<untold::byte_span>& r, const char* field, std::uint64_t value) {
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == untold::errc::integrity_layout);
    CHECK(r.error().context.field == std::string(field));
    CHECK(r.error().context.value == value);
    CHECK(r.error().context.chunk_index == 7);
    CHECK(r.error().context.chunk_type == 0x8001);
  };
  mismatch(body_of("com.example.other", 42, 3), "pluginId", 17);
  mismatch(body_of("com.example.physics", 41, 3), "chunkKind", 41);
  mismatch(body_of("com.example.physics", 42, 4), "chunkVersion", 4);
  // A broken envelope: parse_plugin_chunk's R-EXT-RANGES, with the row.
  const auto broken =
      untold::plugin_chunk_body(untold::byte_span(payload), expected, untold::errc::integrity_layout, 7, 0x8001);
  REQUIRE_FALSE(broken.has_value());
  CHECK(broken.error().code == untold::errc::extension_range);
  CHECK(broken.error().context.field == std::string("magic"));
  CHECK(broken.error().context.chunk_index == 7);
  CHECK(broken.error().context.chunk_type == 0x8001);
}

TEST_CASE("ext: unknown plugin kinds pass through untouched, and survive a rewrite") {
  const bytes f = test::write_ext_scene();
  const untold::asset a = open_ok(f);
  const auto raw = a.raw_chunks();
  REQUIRE(raw.size() == 2);
  untold::builder copy;
  for (const std::uint32_t row : raw) copy.add_raw_chunk(a.chunks()[row].chunk_type, a.payload(row));
  auto g = copy.finish({.block_digests = false});  // the raw chunks alone
  REQUIRE_MESSAGE(g.has_value(), g.error().describe());
  const untold::asset b = open_ok(*g);
  const auto plugins = untold::plugin_chunks(b);
  REQUIRE(plugins.size() == 2);
  CHECK(plugins[1].plugin_id == "org.example.unknown");
  CHECK(plugins[1].kind == 0xDEAD);
  CHECK(plugins[1].chunk_version == 9);
  CHECK(same_bytes(plugins[1].payload, bytes(37, std::byte{0x42})));
  for (std::size_t i = 0; i < 2; ++i) CHECK(same_bytes(b.payload(b.raw_chunks()[i]), a.payload(raw[i])));
}

TEST_CASE("ext: R-EXT-RANGES plugin envelope") {
  const bytes original = test::write_ext_scene();
  const std::size_t row = test::chunk_row(original, kPhysics);
  const std::size_t at = test::chunk_payload_offset(original, kPhysics);
  const auto expect_plugin = [&](const bytes& f, const char* field) {
    const verdict v = judge(f);
    CHECK(v.rule == "R-EXT-RANGES");
    CHECK(v.field == field);
    CHECK(v.chunk_type == kPhysics);
    auto a = untold::open(f);
    REQUIRE_FALSE(a.has_value());
    CHECK(a.error().context.chunk_index == row);
  };
  SUBCASE("magic") {
    bytes f = original;
    f[at] = std::byte{'X'};
    expect_plugin(f, "magic");
  }
  SUBCASE("version") {
    bytes f = original;
    f[at + 4] = std::byte{2};
    expect_plugin(f, "version");
  }
  SUBCASE("plugin id past the payload") {
    bytes f = original;
    untold::store_le_unchecked<std::uint16_t>(f.data() + at + 6, 19 + 4 + 1);
    expect_plugin(f, "pluginIdLength");
  }
  SUBCASE("blank id") {
    bytes f = original;
    for (std::size_t i = 0; i < 19; ++i) f[at + 16 + i] = std::byte{' '};
    expect_plugin(f, "pluginId");
  }
  SUBCASE("empty id") {
    bytes f = original;
    untold::store_le_unchecked<std::uint16_t>(f.data() + at + 6, 0);
    expect_plugin(f, "pluginId");
  }
  SUBCASE("NUL in the id") {
    bytes f = original;
    f[at + 16 + 3] = std::byte{0};
    expect_plugin(f, "pluginId");
  }
  SUBCASE("invalid UTF-8 in the id") {
    bytes f = original;
    f[at + 16] = std::byte{0xC0};
    f[at + 17] = std::byte{0x80};
    expect_plugin(f, "pluginId");
  }
  SUBCASE("payload shorter than the envelope") {
    bytes f = original;
    const std::size_t r = row_at(f, kPhysics);
    put_u64(f, r + 16, 12);
    put_u64(f, r + 24, 12);
    expect_plugin(f, "magic");
  }
  SUBCASE("empty plugin chunk") {
    bytes f = original;
    const std::size_t r = row_at(f, kPhysics);
    put_u64(f, r + 16, 0);
    put_u64(f, r + 24, 0);
    expect_plugin(f, "magic");
  }
  SUBCASE("byte-range loading checks the envelope when the chunk loads") {
    bytes f = original;
    f[at] = std::byte{'X'};
    untold::memory_range_source src(f);
    auto streamed = untold::streamed_asset::open(src);
    REQUIRE(streamed.has_value());
    const auto status = streamed->load_chunk(static_cast<std::uint32_t>(row));
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().rule_id() == "R-EXT-RANGES");
    CHECK(std::string(status.error().context.field) == "magic");
  }
}

// ---- crafted rejections: R-EXT-RANGES -----------------------------------------------

TEST_CASE("ext: the unpatched extension scene is accepted, deep checks included") {
  const bytes f = test::write_ext_scene();
  CHECK(rejection(f) == "accepted");
  CHECK(rejection(f, {.deep_checks = true}) == "accepted");
}

TEST_CASE("ext: R-EXT-RANGES skeleton joint ranges") {
  const bytes original = test::write_ext_scene();
  const auto skeleton = [&](const bytes& f, std::size_t row) { return rec(f, kSkeleton, row, kSkeletonSize); };
  SUBCASE("range past the joint table") {
    bytes f = original;
    put_u32(f, skeleton(f, 1) + 12, 3);  // 3 + 3 > 5 joints
    expect_ext(f, "jointRecordCount", kSkeleton, 1);
  }
  SUBCASE("first past the joint table") {
    bytes f = original;
    put_u32(f, skeleton(f, 0) + 8, 6);
    expect_ext(f, "firstJointRecordIndex", kSkeleton, 0);
  }
  SUBCASE("first + count wraps u32") {
    bytes f = original;
    put_u32(f, skeleton(f, 1) + 8, 2);
    put_u32(f, skeleton(f, 1) + 12, 0xFFFFFFFFu);
    expect_ext(f, "jointRecordCount", kSkeleton, 1);
  }
  SUBCASE("two skeletons overlap partially (issue 18: the format allows it)") {
    bytes f = original;
    put_u32(f, skeleton(f, 1) + 8, 2);  // [2, 4) overlaps [0, 3): row 2 is a joint of both
    const untold::asset a = open_ok(f);
    const auto prop = untold::resolve_skeleton(a, 1);
    REQUIRE(prop.has_value());
    REQUIRE(prop->joints.size() == 2);
    CHECK(a.string(prop->joints[0].joint_path_offset) == "root/hips");  // row 2, the rig's hips too
    CHECK(a.string(prop->joints[1].joint_path_offset) == "prop/base");
    // In the prop's frame, row 3's parent 0 would still be fine; a parent
    // outside the prop's two joints is not.
    put_u32(f, rec(f, kJoint, 3, kJointSize), 2);
    expect_ext(f, "parentJointIndex", kJoint, 3);
  }
  SUBCASE("a cycle that only exists in the overlapping skeleton's frame") {
    bytes f = original;
    // prop = rows [1, 3): head (parent 0 = its own row 1 in this frame) is a self-loop there.
    put_u32(f, skeleton(f, 1) + 8, 1);
    put_u32(f, skeleton(f, 1) + 12, 2);
    expect_ext(f, "parentJointIndex", kJoint, 1);
  }
  SUBCASE("two skeletons sharing one identical range are fine") {
    bytes f = original;
    put_u32(f, skeleton(f, 1) + 8, 0);
    put_u32(f, skeleton(f, 1) + 12, 3);
    CHECK(rejection(f, {.deep_checks = true}) == "accepted");
  }
}

TEST_CASE("ext: overlapping skeletons stored children-first: the library's linear cycle-check budget, relaxed") {
  // One skeleton of N joints, all roots except row M, whose parent is K. K
  // more skeletons start inside (M - K, M] and cover K + 1 joints each: in
  // each one's frame row M's parent is a later joint (no parents-first
  // proof), so each is walked; together they need K x (K + 1) steps, more
  // than the budget of 2 N + 4096. Each frame is acyclic.
  constexpr std::uint32_t K = 200, M = 250, N = M + K + 1;
  std::vector<untold::skeleton_joint_desc> joints(N);
  joints[M].parent = K;
  untold::builder b;
  b.add_entity({.name = "e"});
  b.add_skeleton({.name = "all", .entity_id = 1000, .joints = joints});
  for (std::uint32_t i = 0; i < K; ++i) b.add_skeleton({.entity_id = 1001 + i});
  auto built = b.finish({.content_hash = false});
  REQUIRE_MESSAGE(built.has_value(), built.error().describe());
  bytes f = std::move(*built);
  for (std::uint32_t i = 0; i < K; ++i) {
    const std::size_t at = rec(f, kSkeleton, 1 + i, kSkeletonSize);
    put_u32(f, at + 8, M - K + 1 + i);  // first
    put_u32(f, at + 12, K + 1);         // count
  }
  REQUIRE(std::uint64_t{K} * (K + 1) > untold::detail::cycle_check_budget(N));
  const verdict strict = judge(f);
  CHECK(strict.rule == "R-EXT-RANGES");
  CHECK(strict.field == "firstJointRecordIndex");
  CHECK(strict.chunk_type == kSkeleton);
  CHECK(judge(f, {.relaxed_extension_ranges = true}).rule == "accepted");
  // The work stays linear either way.
  untold::detail::validation_work = 0;
  (void)untold::open(f, {.relaxed_extension_ranges = true});
  CHECK(untold::detail::validation_work < 40 * std::uint64_t{N} + 20 * untold::detail::cycle_check_budget(N));

  // With few enough such skeletons the walks fit the budget and the file is accepted strictly.
  for (std::uint32_t i = 10; i < K; ++i) put_u32(f, rec(f, kSkeleton, 1 + i, kSkeletonSize) + 12, 0);
  CHECK(judge(f).rule == "accepted");
}

TEST_CASE("ext: R-EXT-RANGES joint parents") {
  const bytes original = test::write_ext_scene();
  const auto joint = [&](const bytes& f, std::size_t row) { return rec(f, kJoint, row, kJointSize); };
  SUBCASE("parent outside its skeleton (a row of another skeleton)") {
    bytes f = original;
    put_u32(f, joint(f, 4), 3);  // the prop skeleton has 2 joints
    expect_ext(f, "parentJointIndex", kJoint, 4);
  }
  SUBCASE("two-joint cycle") {
    bytes f = original;
    put_u32(f, joint(f, 2), 1);  // hips -> head -> spine -> hips
    const verdict v = judge(f);
    CHECK(v.rule == "R-EXT-RANGES");
    CHECK(v.field == "parentJointIndex");
    CHECK(v.chunk_type == kJoint);
  }
  SUBCASE("self parent") {
    bytes f = original;
    put_u32(f, joint(f, 3), 0);
    expect_ext(f, "parentJointIndex", kJoint, 3);
  }
  SUBCASE("a joint no skeleton covers must still name a joint row") {
    bytes f = original;
    put_u32(f, rec(f, kSkeleton, 1, kSkeletonSize) + 12, 1);  // prop covers only row 3
    put_u32(f, joint(f, 4), 5);
    expect_ext(f, "parentJointIndex", kJoint, 4);
    put_u32(f, joint(f, 4), 1);  // a row, uninterpreted
    CHECK(rejection(f) == "accepted");
  }
}

TEST_CASE("ext: R-EXT-RANGES skins") {
  const bytes original = test::write_ext_scene();
  const auto skin = [&](const bytes& f) { return rec(f, kSkin, 0, kSkinSize); };
  SUBCASE("meshRecordIndex past the mesh table") {
    bytes f = original;
    put_u32(f, skin(f) + 4, 2);
    expect_ext(f, "meshRecordIndex", kSkin, 0);
  }
  SUBCASE("vertexCount differs from the mesh's (issue 18: the format allows it)") {
    bytes f = original;
    put_u32(f, skin(f) + 4, 0);  // the floor mesh has 4 vertices, the skin 9
    const untold::asset a = open_ok(f);
    const untold::skin_record s = a.table<untold::skin_record>()[0];
    CHECK(untold::view_joint_indices(a, s).size() == 9);  // what the file holds
    CHECK(untold::skinned_vertex_count(a, s) == 4);       // what skins the mesh
    put_u32(f, skin(f) + 20, 2);                          // fewer than the mesh's
    const untold::asset b = open_ok(f);
    CHECK(untold::view_joint_weights(b, b.table<untold::skin_record>()[0]).size() == 2);
    CHECK(untold::skinned_vertex_count(b, b.table<untold::skin_record>()[0]) == 2);
  }
  SUBCASE("a skin with vertexCount 0 on a mesh with vertices (issue 18)") {
    bytes f = original;
    put_u32(f, skin(f) + 20, 0);
    const untold::asset a = open_ok(f);
    const untold::skin_record s = a.table<untold::skin_record>()[0];
    CHECK(untold::view_joint_indices(a, s).empty());
    CHECK(untold::skinned_vertex_count(a, s) == 0);
    CHECK(untold::resolve_skin(a, 0)->joints.size() == 3);
  }
  SUBCASE("mapping range past the mapping table: the library's stricter rule, relaxed accepts it") {
    bytes f = original;
    put_u32(f, skin(f) + 12, 4);
    expect_ext(f, "jointCount", kSkin, 0);
    // Relaxed: the skin uses the 3 mappings in range; joint indices stay below them.
    const untold::asset a = open_ok(f, {.deep_checks = true, .relaxed_extension_ranges = true});
    CHECK(a.relaxed_extension_ranges());
    CHECK(untold::view_skin_mappings(a, a.table<untold::skin_record>()[0]).size() == 3);
    CHECK(untold::resolve_skin(a, 0)->skeleton_joints == std::vector<std::uint32_t>{2, 0, 1});
    put_u32(f, skin(f) + 16, 9);
    expect_ext(f, "firstJointMappingIndex", kSkin, 0);
    const untold::asset b = open_ok(f, {.relaxed_extension_ranges = true});
    CHECK(untold::view_skin_mappings(b, b.table<untold::skin_record>()[0]).empty());
  }
  SUBCASE("relaxed, a vertex joint index past the mappings in range is still a deep error") {
    bytes f = original;
    put_u32(f, skin(f) + 16, 1);  // mappings [1, 4) of 3: 2 in range
    CHECK(judge(f).rule == "R-EXT-RANGES");
    const verdict v = judge(f, {.deep_checks = true, .relaxed_extension_ranges = true});
    CHECK(v.rule == "R-EXT-RANGES");
    CHECK(v.field == "jointIndexData");  // vertices use joints 0..2
    CHECK(judge(f, {.relaxed_extension_ranges = true}).rule == "accepted");
  }
  SUBCASE("mapped joint outside the skin's skeleton") {
    bytes f = original;
    put_u32(f, rec(f, kMapping, 2, 4), 3);  // the rig skeleton has 3 joints
    expect_ext(f, "skeletonJointIndex", kMapping, 2);
  }
  SUBCASE("a skeleton id no skeleton carries leaves the mapping unchecked") {
    bytes f = original;
    put_u32(f, skin(f) + 8, 555);
    put_u32(f, rec(f, kMapping, 2, 4), 3);
    CHECK(rejection(f) == "accepted");
  }
  SUBCASE("joint index data range") {
    bytes f = original;
    put_u64(f, skin(f) + 24, 8);  // 8 + 9 * 8 > 72
    expect_ext(f, "jointIndexDataOffset", kSkin, 0);
    put_u64(f, skin(f) + 24, 0xFFFFFFFFFFFFFFF8ull);  // wraps
    expect_ext(f, "jointIndexDataOffset", kSkin, 0);
  }
  SUBCASE("joint weight data range") {
    bytes f = original;
    put_u64(f, skin(f) + 32, 16);  // 16 + 9 * 16 > 144
    expect_ext(f, "jointWeightDataOffset", kSkin, 0);
  }
  SUBCASE("joint data chunks missing") {
    bytes f = original;
    put_u32(f, row_at(f, kJointIndex), 1000);
    expect_ext(f, "jointIndexDataOffset", kSkin, 0);
    bytes g = original;
    put_u32(g, row_at(g, kJointWeight), 1000);
    expect_ext(g, "jointWeightDataOffset", kSkin, 0);
  }
  SUBCASE("a skin with no vertices needs no joint data") {
    bytes f = original;
    put_u32(f, row_at(f, kJointIndex), 1000);
    put_u32(f, row_at(f, kJointWeight), 1001);
    expect_ext(f, "jointIndexDataOffset", kSkin, 0);
    put_u32(f, skin(f) + 20, 0);
    put_u32(f, rec(f, 3, 1, 104) + 16, 0);  // the body mesh: 0 vertices, 0 vertex bytes
    put_u64(f, rec(f, 3, 1, 104) + 48, 0);
    CHECK(rejection(f) == "accepted");
  }
}

TEST_CASE("ext: R-EXT-RANGES animation ranges") {
  const bytes original = test::write_ext_scene();
  const auto clip = [&](const bytes& f, std::size_t row) { return rec(f, kClip, row, kClipSize); };
  const auto channel = [&](const bytes& f, std::size_t row) { return rec(f, kChannel, row, kChannelSize); };
  SUBCASE("clip channels") {
    bytes f = original;
    put_u32(f, clip(f, 0) + 12, 3);
    expect_ext(f, "channelRecordCount", kClip, 0);
    put_u32(f, clip(f, 0) + 8, 3);
    expect_ext(f, "firstChannelRecordIndex", kClip, 0);
  }
  SUBCASE("channel translation keys") {
    bytes f = original;
    put_u32(f, channel(f, 1) + 8, 2);  // 3 + 2 > 4 translation keys
    expect_ext(f, "translationCount", kChannel, 1);
    put_u32(f, channel(f, 1) + 4, 0xFFFFFFFFu);
    expect_ext(f, "firstTranslationIndex", kChannel, 1);
  }
  SUBCASE("channel rotation keys") {
    bytes f = original;
    put_u32(f, channel(f, 0) + 16, 5);
    expect_ext(f, "rotationCount", kChannel, 0);
    put_u32(f, channel(f, 0) + 12, 5);
    expect_ext(f, "firstRotationIndex", kChannel, 0);
  }
}

TEST_CASE("ext: R-EXT-RANGES light type and the color-management singleton") {
  const bytes original = test::write_ext_scene();
  for (const std::uint32_t type : {0u, 5u, 0xFFFFFFFFu}) {
    CAPTURE(type);
    bytes f = original;
    put_u32(f, rec(f, kLight, 1, kLightSize) + 8, type);
    expect_ext(f, "lightType", kLight, 1);
  }
  for (const std::uint32_t type : {1u, 2u, 3u, 4u}) {
    bytes f = original;
    put_u32(f, rec(f, kLight, 1, kLightSize) + 8, type);
    CHECK(rejection(f) == "accepted");
  }

  // Two color-management records: the table grows over the LUT chunk that
  // follows it (retyped and emptied), whose bytes become record 1.
  bytes f = original;
  const std::size_t color = row_at(f, kColor), lut = row_at(f, kLut);
  REQUIRE(get_u64(f, lut + 8) == get_u64(f, color + 8) + 32);
  put_u32(f, lut, 1000);  // an unknown core type
  put_u64(f, lut + 16, 0);
  put_u64(f, lut + 24, 0);
  put_u32(f, color + 32, 2);
  put_u64(f, color + 16, 64);
  put_u64(f, color + 24, 64);
  put_u32(f, rec(f, kColor, 1, kColorSize) + 4, untold::none);  // valid string refs in record 1
  put_u32(f, rec(f, kColor, 1, kColorSize) + 8, untold::none);
  const verdict v = judge(f);
  CHECK(v.rule == "R-EXT-RANGES");
  CHECK(v.field == "elementCount");
  CHECK(v.chunk_type == kColor);
}

TEST_CASE("ext: R-STRING covers every string of the extension tables") {
  const bytes original = test::write_ext_scene();
  const std::uint32_t past = static_cast<std::uint32_t>(get_u64(original, row_at(original, 1) + 24));
  struct field {
    std::uint32_t type;
    std::size_t size, offset;
    const char* name;
  };
  const field fields[] = {{kSkeleton, kSkeletonSize, 4, "nameOffset"},
                          {kJoint, kJointSize, 4, "jointPathOffset"},
                          {kClip, kClipSize, 0, "nameOffset"},
                          {kChannel, kChannelSize, 0, "jointPathOffset"},
                          {kLight, kLightSize, 4, "nameOffset"},
                          {kCamera, kCameraSize, 4, "nameOffset"},
                          {kColor, kColorSize, 4, "viewTransformNameOffset"},
                          {kColor, kColorSize, 8, "lookNameOffset"},
                          {kLut, kLutSize, 0, "lutUriOffset"}};
  for (const field& fd : fields) {
    CAPTURE(fd.name);
    CAPTURE(fd.type);
    bytes f = original;
    put_u32(f, rec(f, fd.type, 0, fd.size) + fd.offset, past);
    const verdict v = judge(f);
    CHECK(v.rule == "R-STRING");
    CHECK(v.field == fd.name);
    CHECK(v.chunk_type == fd.type);
    CHECK(v.record == 0);
  }
}

// ---- deep-only checks ----------------------------------------------------------------

TEST_CASE("ext: joint index values are a deep check") {
  bytes f = test::write_ext_scene();
  const std::size_t at = test::chunk_payload_offset(f, kJointIndex);
  untold::store_le_unchecked<std::uint16_t>(f.data() + at + 8 * 4 + 2, 3);  // vertex 4, slot 1; jointCount 3
  CHECK(rejection(f) == "accepted");
  auto a = untold::open(f, {.deep_checks = true});
  REQUIRE_FALSE(a.has_value());
  CHECK(a.error().rule_id() == "R-EXT-RANGES");
  CHECK(std::string(a.error().context.field) == "jointIndexData");
  CHECK(a.error().context.chunk_type == kSkin);
  CHECK(a.error().context.value == 4);
}

TEST_CASE("ext: keyframe times are a deep check") {
  const bytes original = test::write_ext_scene();
  const untold::open_options deep{.deep_checks = true};
  const auto key = [&](const bytes& f, std::uint32_t type, std::size_t row) { return rec(f, type, row, kKeySize); };
  SUBCASE("decreasing inside a channel") {
    bytes f = original;
    put_f32(f, key(f, kTranslation, 2), 0.25f);  // hips: 0, 0.5, 0.25
    CHECK(rejection(f) == "accepted");
    expect_ext(f, "time", kTranslation, 2, deep);
  }
  SUBCASE("not finite") {
    bytes f = original;
    put_f32(f, key(f, kRotation, 2), std::numeric_limits<float>::quiet_NaN());  // first key of spine
    CHECK(rejection(f) == "accepted");
    expect_ext(f, "time", kRotation, 2, deep);
    bytes g = original;
    put_f32(g, key(g, kRotation, 3), std::numeric_limits<float>::infinity());
    expect_ext(g, "time", kRotation, 3, deep);
  }
  SUBCASE("channels are independent: a later channel may start earlier") {
    // spine's translation key (t = 0) follows hips' last (t = 1) in the table.
    CHECK(rejection(original, deep) == "accepted");
  }
  SUBCASE("equal times are fine") {
    bytes f = original;
    put_f32(f, key(f, kTranslation, 1), 0.0f);
    CHECK(rejection(f, deep) == "accepted");
  }
}

TEST_CASE("ext: R-FINITE covers joint, light and camera transforms (deep)") {
  const bytes original = test::write_ext_scene();
  const untold::open_options deep{.deep_checks = true};
  const float inf = std::numeric_limits<float>::infinity();
  const struct {
    std::uint32_t type;
    std::size_t size, offset;
    const char* field;
  } cases[] = {{kJoint, kJointSize, 16 + 4 * 13, "bindTransform"},
               {kJoint, kJointSize, 80, "restTransform"},
               {kLight, kLightSize, 112 + 4, "localTransform"},
               {kCamera, kCameraSize, 80 + 60, "localTransform"}};
  for (const auto& c : cases) {
    CAPTURE(c.field);
    bytes f = original;
    put_f32(f, rec(f, c.type, 0, c.size) + c.offset, inf);
    CHECK(rejection(f) == "accepted");
    const verdict v = judge(f, deep);
    CHECK(v.rule == "R-FINITE");
    CHECK(v.field == c.field);
    CHECK(v.chunk_type == c.type);
  }
}

TEST_CASE("ext: R-EDGE-RANGE and R-INDEX-VALUE still hold for the extension scene's edges") {
  const bytes original = test::write_ext_scene();
  bytes f = original;
  put_u32(f, row_at(f, kEdgeData), 1000);
  CHECK(rejection(f) == "R-EDGE-RANGE");
  bytes g = original;
  g[test::chunk_payload_offset(g, kEdgeData)] = std::byte{4};  // the floor has 4 vertices
  CHECK(rejection(g) == "accepted");
  CHECK(rejection(g, {.deep_checks = true}) == "R-INDEX-VALUE");
}

// ---- writer errors ------------------------------------------------------------------------

TEST_CASE("ext: bad extension input to the writer is a returned error") {
  const test::ext_inputs in;
  const test::grid g = test::make_grid(3);
  const auto field_of = [](const untold::builder& b) {
    auto f = b.finish();
    return f.has_value() ? std::string("ok") : std::string(f.error().context.field);
  };
  const auto skinned = [&](untold::builder& b) {
    const auto e = b.add_entity({.name = "e"});
    const auto mesh = b.add_mesh({.entity = e, .vertices = g.vertices, .indices = g.indices});
    const auto skeleton = b.add_skeleton({.entity = e, .joints = in.rig_joints});
    return std::pair{mesh, skeleton};
  };
  SUBCASE("a valid skin is ok") {
    untold::builder b;
    const auto [mesh, skeleton] = skinned(b);
    b.add_skin({.mesh = mesh, .skeleton = skeleton, .joints = in.palette, .joint_indices = in.joint_indices,
                .joint_weights = in.joint_weights});
    CHECK(field_of(b) == "ok");
  }
  SUBCASE("dangling mesh and skeleton handles") {
    untold::builder b;
    const auto [mesh, skeleton] = skinned(b);
    b.add_skin({.mesh = mesh + 1, .skeleton = skeleton, .joints = in.palette, .joint_indices = in.joint_indices,
                .joint_weights = in.joint_weights});
    CHECK(field_of(b) == "mesh");
    untold::builder c;
    const auto [mesh2, skeleton2] = skinned(c);
    c.add_skin({.mesh = mesh2, .skeleton = skeleton2 + 1, .joints = in.palette, .joint_indices = in.joint_indices,
                .joint_weights = in.joint_weights});
    CHECK(field_of(c) == "skeleton");
  }
  SUBCASE("per-vertex data must match the mesh's vertex count") {
    untold::builder b;
    const auto [mesh, skeleton] = skinned(b);
    b.add_skin({.mesh = mesh, .skeleton = skeleton, .joints = in.palette,
                .joint_indices = std::span(in.joint_indices).first(8), .joint_weights = in.joint_weights});
    CHECK(field_of(b) == "jointIndices");
  }
  SUBCASE("joint index outside the skin's joints") {
    untold::builder b;
    const auto [mesh, skeleton] = skinned(b);
    b.add_skin({.mesh = mesh, .skeleton = skeleton, .joints = std::span(in.palette).first(1),
                .joint_indices = in.joint_indices, .joint_weights = in.joint_weights});
    CHECK(field_of(b) == "jointIndices");
  }
  SUBCASE("skin joint outside the skeleton") {
    untold::builder b;
    const auto [mesh, skeleton] = skinned(b);
    const std::vector<std::uint32_t> palette = {0, 1, 3};
    b.add_skin({.mesh = mesh, .skeleton = skeleton, .joints = palette, .joint_indices = in.joint_indices,
                .joint_weights = in.joint_weights});
    CHECK(field_of(b) == "joints");
  }
  SUBCASE("non-finite weight") {
    untold::builder b;
    const auto [mesh, skeleton] = skinned(b);
    auto weights = in.joint_weights;
    weights[2][1] = std::numeric_limits<float>::quiet_NaN();
    b.add_skin({.mesh = mesh, .skeleton = skeleton, .joints = in.palette, .joint_indices = in.joint_indices,
                .joint_weights = weights});
    CHECK(field_of(b) == "jointWeights");
  }
  SUBCASE("skeleton without an entity, with a dangling one, or sharing an id") {
    untold::builder b;
    b.add_skeleton({.name = "nobody"});
    CHECK(field_of(b) == "entity");
    untold::builder c;
    c.add_skeleton({.entity = 4});
    CHECK(field_of(c) == "entity");
    untold::builder d;
    d.add_skeleton({.entity_id = 5});
    d.add_skeleton({.entity_id = 5});
    CHECK(field_of(d) == "entity");
  }
  SUBCASE("joint parents: outside the skeleton, cycles, bad skeleton handle") {
    untold::builder b;
    const untold::skeleton_joint_desc outside[] = {{.parent = 1}};
    b.add_skeleton({.entity_id = 1, .joints = outside});
    CHECK(field_of(b) == "parent");
    untold::builder c;
    const untold::skeleton_joint_desc cycle[] = {{.parent = 1}, {.parent = 0}};
    c.add_skeleton({.entity_id = 1, .joints = cycle});
    CHECK(field_of(c) == "parent");
    untold::builder d;
    d.add_joint(0, {});
    CHECK(field_of(d) == "skeleton");
    untold::builder e;
    const auto s = e.add_skeleton({.entity_id = 1});
    const auto hips = e.add_joint(s, {.path = "hips"});
    CHECK(e.add_joint(s, {.path = "spine", .parent = hips}) == 1);
    CHECK(field_of(e) == "ok");
  }
  SUBCASE("keys out of order or not finite") {
    const untold::translation_keyframe_record backwards[] = {{1, 0, 0, 0, 0}, {0.5f, 0, 0, 0, 0}};
    const untold::animation_channel_desc channel[] = {{.joint_path = "a", .translations = backwards}};
    untold::builder b;
    b.add_animation_clip({.channels = channel});
    CHECK(field_of(b) == "translations");
    const untold::rotation_keyframe_record nan[] = {{0, 0, 0, std::numeric_limits<float>::quiet_NaN(), 1}};
    const untold::animation_channel_desc channel2[] = {{.joint_path = "a", .rotations = nan}};
    untold::builder c;
    c.add_animation_clip({.channels = channel2});
    CHECK(field_of(c) == "rotations");
  }
  SUBCASE("light type, dangling light and camera entities, dangling LUT texture") {
    untold::builder b;
    b.add_light({.light = {.light_type = 7}});
    CHECK(field_of(b) == "lightType");
    untold::builder c;
    c.add_light({.entity = 0});
    CHECK(field_of(c) == "entity");
    untold::builder d;
    d.add_camera({.entity = 2});
    CHECK(field_of(d) == "entity");
    untold::builder e;
    e.set_color_management({.lut_texture = 0});
    CHECK(field_of(e) == "lutTexture");
  }
  SUBCASE("plugin chunks: bad id, core type") {
    untold::builder b;
    b.add_plugin_chunk("  ", 1, 1, in.physics);
    CHECK(field_of(b) == "pluginId");
    untold::builder c;
    c.add_plugin_chunk("com.example", 1, 1, in.physics, 23);
    CHECK(field_of(c) == "chunkType");
  }
}
