// A file as the reference exporter's current version (UntoldEngine
// scripts/untoldexplorer.py, build_untold_file) writes it, laid out byte by
// byte here from that exporter's format description, independently of the
// library's codecs and builder: format version 4, its chunk order (string,
// entity, mesh, material, texture, skeleton, joint, skin, mapping, light,
// camera, vertex, index, edge, joint index, joint weight data, then muscle,
// morph target, morph target data and morph driver), empty tables written
// with size 0, a material with alpha mode blend in flags bits 0-1 and a
// transmission factor at offset 104, two morph targets (one with normal
// deltas) as float16 entries, a morph driver, a muscle, and the content hash
// over the payloads in chunk-type order. The library must read every field
// exactly, deep checks included.
#include "../support.hpp"

#include <untold/extensions.hpp>
#include <untold/hash.hpp>
#include <untold/scene.hpp>

#include <algorithm>
#include <string>

using test::bytes;

namespace {

/// Little-endian appends, as the exporter's BinaryWriter does.
struct binary_writer {
  bytes out;
  void u16(std::uint16_t v) {
    for (int i = 0; i < 2; ++i) out.push_back(std::byte((v >> (8 * i)) & 0xFF));
  }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(std::byte((v >> (8 * i)) & 0xFF));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(std::byte((v >> (8 * i)) & 0xFF));
  }
  void f32(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  void text(const std::string& s) {
    for (const char c : s) out.push_back(std::byte(static_cast<unsigned char>(c)));
    out.push_back(std::byte{0});
  }
  void box(float x0, float y0, float z0, float x1, float y1, float z1) {
    for (const float f : {x0, y0, z0, x1, y1, z1}) f32(f);
  }
  void identity() {
    for (int i = 0; i < 16; ++i) f32(i % 5 == 0 ? 1.0f : 0.0f);
  }
  void align16() {
    while (out.size() % 16 != 0) out.push_back(std::byte{0});
  }
};

constexpr std::uint32_t NONE = 0xFFFFFFFF;

// String table, in the order the exporter adds them (offsets in comments).
//   0 "default_glass"  14 "Head"  19 "Face"  24 "Armature"  33 "root"  38 "root/jaw"
//   47 "smile"  53 "blink"  59 "masseter"
struct strings {
  static constexpr std::uint32_t glass = 0, head = 14, face = 19, armature = 24, root = 33, jaw = 38, smile = 47,
                                 blink = 53, masseter = 59;
};

// binary16 bit patterns the exporter's numpy float16 cast produces.
constexpr std::uint16_t h_quarter = 0x3400, h_half = 0x3800, h_minus_half = 0xB800, h_one = 0x3C00,
                        h_minus_one = 0xBC00, h_eighth = 0x3000;

struct chunk {
  std::uint32_t type;
  bytes payload;
  std::uint32_t element_count;
};

bytes reference_exporter_file() {
  binary_writer strings_w;
  for (const char* s : {"default_glass", "Head", "Face", "Armature", "root", "root/jaw", "smile", "blink", "masseter"})
    strings_w.text(s);

  // Entities: 0 Head (the mesh), 1 Armature (the skeleton), both roots.
  binary_writer entities;
  for (std::uint32_t id = 0; id < 2; ++id) {
    entities.u32(id);
    entities.u32(NONE);
    entities.u32(id == 0 ? strings::head : strings::armature);
    entities.u32(0);            // firstMeshRecordIndex
    entities.u32(id == 0);      // meshRecordCount
    entities.u32(0);            // flags
    entities.box(0, 0, 0, id == 0 ? 1 : 0, id == 0 ? 1 : 0, 0);  // local
    entities.box(0, 0, 0, id == 0 ? 1 : 0, id == 0 ? 1 : 0, 0);  // world
    entities.identity();
  }

  // Mesh "Face": a quad, 4 vertices, 6 uint16 indices, no edges.
  binary_writer meshes;
  meshes.u32(0);                  // entityId
  meshes.u32(strings::face);
  meshes.u32(0);                  // materialIndex
  meshes.u32(1);                  // uint16
  meshes.u32(4);
  meshes.u32(6);
  meshes.u32(32);
  meshes.u32(0);                  // flags
  meshes.u64(0);                  // vertexDataOffset
  meshes.u64(0);                  // indexDataOffset
  meshes.u64(4 * 32);
  meshes.u64(6 * 2);
  meshes.u64(4 * 32 + 6 * 2);     // estimatedGPUBytes
  meshes.u64(0);                  // edge count << 32 | edge offset
  meshes.box(0, 0, 0, 1, 1, 0);

  // Material, version-4 layout (write_material_record, with the transmission
  // factor in the last word and the alpha mode in flags).
  binary_writer materials;
  materials.u32(strings::glass);
  materials.u32(2);               // flags: MATERIAL_ALPHA_MODE_BLEND
  for (const float f : {0.8f, 0.9f, 1.0f, 0.1f}) materials.f32(f);  // base colour, alpha = TRANSMISSION_OPACITY
  for (const float f : {0.0f, 0.0f, 0.0f}) materials.f32(f);
  materials.f32(1.0f);            // normalScale
  materials.f32(0.0f);            // metallic
  materials.f32(0.125f);          // roughness
  materials.f32(1.0f);            // occlusionStrength
  materials.f32(0.25f);           // alphaCutoff
  for (int i = 0; i < 6; ++i) materials.u32(NONE);
  materials.u32(NONE);            // heightTextureIndex
  materials.f32(0.05f);
  materials.f32(0.5f);
  materials.f32(0.0f);
  materials.f32(1.0f);
  materials.u32(0);               // packed channels r / r
  materials.f32(0.9f);            // offset 104: transmissionFactor

  // Skeleton "Armature" on entity 1: root, root/jaw.
  binary_writer skeletons;
  skeletons.u32(1);
  skeletons.u32(strings::armature);
  skeletons.u32(0);
  skeletons.u32(2);
  skeletons.u32(0);
  skeletons.u32(0);
  binary_writer joints;
  for (std::uint32_t j = 0; j < 2; ++j) {
    joints.u32(j == 0 ? NONE : 0);
    joints.u32(j == 0 ? strings::root : strings::jaw);
    joints.u32(0);
    joints.u32(0);
    joints.identity();            // bind
    joints.identity();            // rest
  }

  // Vertices (packed as the exporter does): positions of a unit quad,
  // normal +Z, tangent +X (w +1), UVs, white.
  binary_writer vertices;
  const float quad[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  for (const auto& p : quad) {
    vertices.f32(p[0]);
    vertices.f32(p[1]);
    vertices.f32(0);
    vertices.u32(0x1FF00000);
    vertices.u32(0x400001FF);
    vertices.u16(p[0] == 0 ? 0 : h_one);
    vertices.u16(p[1] == 0 ? 0 : h_one);
    vertices.u32(0);
    vertices.u32(0xFFFFFFFF);
  }
  binary_writer indices;
  for (const std::uint16_t i : {0, 1, 2, 1, 3, 2}) indices.u16(i);

  // Muscle (write_muscle_record, 128 B).
  binary_writer muscles;
  muscles.u32(1);                 // skeletonEntityId
  muscles.u32(strings::masseter);
  muscles.u32(1);                 // MUSCLE_FLAG_HAS_DRIVER
  muscles.u32(NONE);              // forward joint
  muscles.u32(NONE);              // forward tip
  muscles.u32(strings::root);     // origin joint
  muscles.u32(NONE);              // origin tip
  muscles.f32(0.25f);             // originFraction
  for (const float f : {0.0f, 0.5f, 0.125f}) muscles.f32(f);
  muscles.u32(strings::jaw);      // insertion joint
  muscles.u32(NONE);
  muscles.f32(0.75f);
  for (const float f : {0.0f, -0.25f, 0.0f}) muscles.f32(f);
  for (const float f : {0.045f, 0.012f, 0.25f, 2e-6f, 4e-6f, 0.0f, 6.0f, 0.03f, 0.03f}) muscles.f32(f);
  muscles.u32(7);                 // rings
  muscles.u32(8);                 // segments
  muscles.u32(strings::jaw);      // driver joint
  muscles.f32(0.17453292f);       // radians(10)
  muscles.f32(1.9198622f);        // radians(110)
  muscles.u32(0);

  // Morph targets (write_morph_target_record) and entries (16 B: u32 vertex, 3 + 3 float16).
  binary_writer targets;
  const struct {
    std::uint32_t name, flags, first, count;
  } target_rows[] = {{strings::smile, 1, 0, 2}, {strings::blink, 0, 2, 1}};
  for (const auto& t : target_rows) {
    targets.u32(0);               // meshRecordIndex
    targets.u32(t.name);
    targets.u32(t.flags);
    targets.u32(t.first);
    targets.u32(t.count);
    targets.f32(1.0f);            // positionScale
  }
  binary_writer entries;
  const struct {
    std::uint32_t vertex;
    std::uint16_t p[3], n[3];
  } entry_rows[] = {{1, {h_half, 0, 0}, {0, h_eighth, 0}},
                    {3, {0, h_minus_half, h_quarter}, {0, 0, h_minus_one}},
                    {2, {0, 0, h_minus_half}, {0, 0, 0}}};
  for (const auto& e : entry_rows) {
    entries.u32(e.vertex);
    for (const std::uint16_t h : e.p) entries.u16(h);
    for (const std::uint16_t h : e.n) entries.u16(h);
  }
  binary_writer drivers;  // write_morph_driver_record: target 1 (blink) from the jaw
  drivers.u32(1);
  drivers.u32(strings::jaw);
  drivers.u32(0);
  for (const float f : {0.0f, 0.0f, 0.38268343f, 0.9238795f}) drivers.f32(f);
  drivers.f32(0.5f);
  drivers.u32(0);

  const std::vector<chunk> chunks = {
      {1, strings_w.out, 0},  {2, entities.out, 2},  {3, meshes.out, 1},   {4, materials.out, 1},
      {5, {}, 0},             {8, skeletons.out, 1}, {9, joints.out, 2},   {10, {}, 0},
      {11, {}, 0},            {19, {}, 0},           {20, {}, 0},          {6, vertices.out, 0},
      {7, indices.out, 0},    {18, {}, 0},           {16, {}, 0},          {17, {}, 0},
      {27, muscles.out, 1},   {23, targets.out, 2},  {24, entries.out, 3}, {26, drivers.out, 1},
  };

  // Content hash: SHA-256 of the payloads in ascending chunk type (stable).
  std::vector<chunk> by_type = chunks;
  std::stable_sort(by_type.begin(), by_type.end(), [](const chunk& a, const chunk& b) { return a.type < b.type; });
  bytes hashed;
  for (const chunk& c : by_type) hashed.insert(hashed.end(), c.payload.begin(), c.payload.end());
  const auto digest = untold::sha256_of(hashed);
  REQUIRE(digest.has_value());

  binary_writer file;
  file.text("UNTOLD");
  file.out.push_back(std::byte{0});  // 8-byte magic "UNTOLD\0\0"
  file.u32(4);                       // formatVersion
  file.u32(1);                       // tile
  file.u32(0);
  file.u32(204);
  file.u32(static_cast<std::uint32_t>(chunks.size()));
  file.u32(1);                       // meshes
  file.u32(1);                       // materials
  file.u32(0);                       // textures
  file.u32(2);                       // entities
  file.u32(1);                       // vertexLayout
  file.u32(0);
  file.box(0, 0, 0, 1, 1, 0);
  file.identity();
  for (const std::uint8_t b : *digest) file.out.push_back(std::byte{b});
  for (int i = 0; i < 32; ++i) file.out.push_back(std::byte{0});
  REQUIRE(file.out.size() == 204);

  std::uint64_t offset = 204 + 40 * chunks.size();
  for (const chunk& c : chunks) {
    offset = (offset + 15) / 16 * 16;
    file.u32(c.type);
    file.u32(0);                     // uncompressed
    file.u64(offset);
    file.u64(c.payload.size());
    file.u64(c.payload.size());
    file.u32(c.element_count);
    file.u32(0);
    offset += c.payload.size();
  }
  for (const chunk& c : chunks) {
    file.align16();
    file.out.insert(file.out.end(), c.payload.begin(), c.payload.end());
  }
  return file.out;
}

}  // namespace

TEST_CASE("reference: a file laid out as the current reference exporter writes it reads field-exact") {
  const bytes f = reference_exporter_file();
  auto opened = untold::open(f, {.deep_checks = true});
  REQUIRE_MESSAGE(opened.has_value(), opened.error().describe());
  const untold::asset& a = *opened;
  CHECK(a.format_version() == 4);
  CHECK(a.raw_chunks().empty());  // every chunk the exporter writes is a table the library reads

  // Material: alpha mode in flags bits 0-1, transmission at offset 104.
  REQUIRE(a.materials().size() == 1);
  const untold::material_record m = a.materials()[0];
  CHECK(a.string(m.name_offset) == "default_glass");
  CHECK(m.flags == 2);
  CHECK(m.alpha_mode() == untold::alpha_mode::blend);
  CHECK(m.alpha_cutoff == 0.25f);
  CHECK(m.transmission_factor == 0.9f);
  CHECK(m.base_color_factor == untold::float4{0.8f, 0.9f, 1.0f, 0.1f});
  CHECK(m.roughness_factor == 0.125f);
  CHECK(m.metallic_factor == 0.0f);
  CHECK(m.height_texture == untold::none);
  CHECK(m.height_scale == 0.05f);
  CHECK(m.height_remap_max == 1.0f);

  // Morph targets and their entries.
  const auto targets = a.table<untold::morph_target_record>();
  REQUIRE(targets.size() == 2);
  CHECK(targets[0] == untold::morph_target_record{0, strings::smile, 1, 0, 2, 1.0f});
  CHECK(targets[1] == untold::morph_target_record{0, strings::blink, 0, 2, 1, 1.0f});
  CHECK(a.string(targets[0].name_offset) == "smile");
  CHECK(a.string(targets[1].name_offset) == "blink");
  const auto smile = untold::view_morph_entries(a, targets[0]);
  REQUIRE(smile.size() == 2);
  CHECK(smile[0].vertex_index == 1);
  CHECK(smile[0].position(targets[0].position_scale) == untold::float3{0.5f, 0, 0});
  CHECK(smile[0].normal() == untold::float3{0, 0.125f, 0});
  CHECK(smile[1].vertex_index == 3);
  CHECK(smile[1].position(1.0f) == untold::float3{0, -0.5f, 0.25f});
  CHECK(smile[1].normal() == untold::float3{0, 0, -1});
  const auto blink = untold::view_morph_entries(a, targets[1]);
  REQUIRE(blink.size() == 1);
  CHECK(blink[0].vertex_index == 2);
  CHECK(blink[0].position(1.0f) == untold::float3{0, 0, -0.5f});
  CHECK(blink[0].normal_delta == std::array<std::uint16_t, 3>{0, 0, 0});

  const auto drivers = a.table<untold::morph_driver_record>();
  REQUIRE(drivers.size() == 1);
  CHECK(drivers[0] == untold::morph_driver_record{1, strings::jaw, 0, {0, 0, 0.38268343f, 0.9238795f}, 0.5f, 0});
  CHECK(a.string(drivers[0].joint_path_offset) == "root/jaw");

  // Muscle, every field.
  const auto muscles = a.table<untold::muscle_record>();
  REQUIRE(muscles.size() == 1);
  const untold::muscle_record mu = muscles[0];
  CHECK(mu.skeleton_entity_id == 1);
  CHECK(untold::find_skeleton(a, mu.skeleton_entity_id).has_value());
  CHECK(a.string(mu.name_offset) == "masseter");
  CHECK(mu.flags == untold::muscle_flags::has_driver);
  CHECK(mu.forward_joint_offset == untold::none);
  CHECK(mu.forward_tip_joint_offset == untold::none);
  CHECK(a.string(mu.origin_joint_offset) == "root");
  CHECK(mu.origin_tip_joint_offset == untold::none);
  CHECK(mu.origin_fraction == 0.25f);
  CHECK(mu.origin_offset == untold::float3{0, 0.5f, 0.125f});
  CHECK(a.string(mu.insertion_joint_offset) == "root/jaw");
  CHECK(mu.insertion_fraction == 0.75f);
  CHECK(mu.insertion_offset == untold::float3{0, -0.25f, 0});
  CHECK(mu.belly_radius == 0.045f);
  CHECK(mu.tendon_radius == 0.012f);
  CHECK(mu.max_contraction == 0.25f);
  CHECK(mu.fiber_compliance == 2e-6f);
  CHECK(mu.cross_compliance == 4e-6f);
  CHECK(mu.volume_compliance == 0.0f);
  CHECK(mu.damping == 6.0f);
  CHECK(mu.bone_radius == 0.03f);
  CHECK(mu.skin_influence == 0.03f);
  CHECK(mu.rings == 7);
  CHECK(mu.segments == 8);
  CHECK(a.string(mu.driver_joint_offset) == "root/jaw");
  CHECK(mu.driver_start_angle == 0.17453292f);
  CHECK(mu.driver_full_angle == 1.9198622f);
  CHECK(mu.reserved == 0);

  // The rest of the scene.
  REQUIRE(a.meshes().size() == 1);
  CHECK(a.meshes()[0].index_count == 6);
  const auto skeleton = untold::resolve_skeleton(a, 0);
  REQUIRE(skeleton.has_value());
  REQUIRE(skeleton->joints.size() == 2);
  CHECK(a.string(skeleton->joints[1].joint_path_offset) == "root/jaw");
  CHECK(a.table<untold::skin_record>().empty());  // written empty, as the exporter does

  // Every chunk is named.
  for (const untold::chunk_entry& c : a.chunks()) CHECK(untold::chunk_type_name(c.chunk_type) != "unknown");
}

TEST_CASE("reference: the builder writes the same tables for the same content") {
  // The same material, targets, driver and muscle through the builder: the
  // tables' bytes equal the hand-laid ones (the file around them differs in
  // chunk order and empty tables, which the builder omits).
  const bytes reference = reference_exporter_file();
  auto ref = untold::open(reference);
  REQUIRE(ref.has_value());

  untold::builder b;
  b.add_string("default_glass");  // the exporter's string order
  const auto head = b.add_entity({.name = "Head"});
  b.add_string("Face");
  const auto armature = b.add_entity({.name = "Armature"});
  b.add_string("root");
  b.add_string("root/jaw");
  b.add_string("smile");
  b.add_string("blink");
  b.add_string("masseter");
  const auto material = b.add_material({.name = "default_glass", .base_color_factor = {0.8f, 0.9f, 1.0f, 0.1f},
                                        .metallic_factor = 0, .roughness_factor = 0.125f, .alpha_cutoff = 0.25f,
                                        .alpha_mode = untold::alpha_mode::blend, .transmission_factor = 0.9f});
  const std::vector<untold::float3> quad = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
  const bytes vertices = test::raw_vertices(quad);
  const std::vector<std::uint32_t> indices = {0, 1, 2, 1, 3, 2};
  const auto face =
      b.add_mesh({.entity = head, .name = "Face", .material = material, .vertices = vertices, .indices = indices});
  const std::vector<untold::morph_delta> smile = {{1, {0.5f, 0, 0}, {0, 0.125f, 0}}, {3, {0, -0.5f, 0.25f}, {0, 0, -1}}};
  const std::vector<untold::morph_delta> blink = {{2, {0, 0, -0.5f}, {0, 0, 0}}};
  b.add_morph_target(face, {.name = "smile", .deltas = smile, .normal_deltas = true});
  b.add_morph_target(face, {.name = "blink", .deltas = blink,
                            .driver = untold::morph_driver_desc{.joint_path = "root/jaw",
                                                                .pose_rotation = {0, 0, 0.38268343f, 0.9238795f}}});
  const std::vector<untold::skeleton_joint_desc> joints = {{.path = "root"}, {.path = "root/jaw", .parent = 0}};
  const auto skeleton = b.add_skeleton({.name = "Armature", .entity = armature, .joints = joints});
  b.add_muscle({.skeleton = skeleton, .name = "masseter", .origin_joint = "root", .insertion_joint = "root/jaw",
                .driver_joint = "root/jaw",
                .settings = {.origin_fraction = 0.25f, .origin_offset = {0, 0.5f, 0.125f}, .insertion_fraction = 0.75f,
                             .insertion_offset = {0, -0.25f, 0}, .belly_radius = 0.045f, .tendon_radius = 0.012f,
                             .bone_radius = 0.03f, .driver_start_angle = 0.17453292f,
                             .driver_full_angle = 1.9198622f}});
  auto built = b.finish();
  REQUIRE_MESSAGE(built.has_value(), built.error().describe());
  auto mine = untold::open(*built, {.deep_checks = true});
  REQUIRE_MESSAGE(mine.has_value(), mine.error().describe());
  for (const untold::chunk_type type :
       {untold::chunk_type::string_table, untold::chunk_type::material_table, untold::chunk_type::morph_target_table,
        untold::chunk_type::morph_target_data, untold::chunk_type::morph_driver_table,
        untold::chunk_type::muscle_table, untold::chunk_type::skeleton_table}) {
    CAPTURE(static_cast<std::uint32_t>(type));
    const untold::byte_span x = ref->payload(type), y = mine->payload(type);
    CHECK(std::equal(x.begin(), x.end(), y.begin(), y.end()));
  }
}
