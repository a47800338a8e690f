// fuzz_roundtrip: a writer property. The input is a script of builder calls
// (entities, meshes with raw vertex bytes and indices, materials, textures,
// strings, the extension tables - skeletons and joints, skins, animation
// clips with keys, lights, cameras - raw and plugin chunks, compression
// policy, write options), read by input_script below. Properties:
//   - finish() is deterministic (twice the same bytes, or the same error);
//   - whatever finish() accepts, untold::open with deep checks accepts, and
//     it returns exactly the content the calls described;
//   - the file traverses cleanly (fuzz/traverse.hpp).
#include "traverse.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <deque>
#include <optional>

#include <untold/writer.hpp>

namespace {

using untold_fuzz::die;
using untold_fuzz::same_bits;

/// Reads the fuzz input as a stream of small decisions; past the end every
/// read is 0, so any input is a complete script.
class input_script {
 public:
  input_script(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint32_t u16() { return u8() | std::uint32_t{u8()} << 8; }
  std::uint32_t u32() { return u16() | u16() << 16; }
  std::uint32_t below(std::uint32_t bound) { return bound == 0 ? 0 : u8() % bound; }
  bool chance(std::uint32_t in_256) { return u8() < in_256; }

  /// Mostly ordinary floats, sometimes extreme or raw bits (NaN, inf, ...).
  float f32() {
    static constexpr std::array<float, 12> table = {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, -3.25f, 100.0f, 1e-3f,
                                                     1e30f, -1e30f, 3.4e38f, 1e-40f};
    const std::uint8_t pick = u8();
    if (pick < 224) return table[pick % table.size()] * static_cast<float>(1 + pick / 12 % 4);
    return std::bit_cast<float>(u32());
  }
  untold::mat4 transform() {
    untold::mat4 m = untold::identity_matrix;
    const std::uint8_t kind = u8() % 4;
    if (kind == 1) for (int i = 12; i < 15; ++i) m[i] = f32();
    if (kind == 2) for (float& v : m) v = f32();
    if (kind == 3) for (int i : {0, 5, 10}) m[i] = f32();
    return m;
  }
  /// A string that lives as long as the script: dictionary words, UTF-8,
  /// empty, or (rarely) raw bytes that may hold NULs or invalid UTF-8.
  std::string_view text() {
    static constexpr std::array<std::string_view, 10> words = {
        "", "root", "wall", "Textures/wall.png", "caf\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x99\x82",
        "a", "mesh", "lod0"};
    const std::uint8_t pick = u8();
    if (pick < 240) {
      std::string& s = strings_.emplace_back(words[pick % words.size()]);
      if (pick & 0x40) s += static_cast<char>('0' + pick % 7);
      return s;
    }
    std::string& s = strings_.emplace_back();
    for (std::uint32_t n = below(8); n > 0; --n) s += static_cast<char>(u8());
    return s;
  }
  std::vector<std::byte>& bytes(std::size_t n) {
    auto& b = blobs_.emplace_back(n);
    for (auto& x : b) x = std::byte{u8()};
    return b;
  }
  std::vector<std::uint32_t>& indices(std::size_t n, std::uint32_t vertex_count) {
    auto& v = index_lists_.emplace_back(n);
    for (auto& i : v) i = chance(250) ? below(vertex_count == 0 ? 1 : vertex_count) : u16();
    return v;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  std::deque<std::string> strings_;
  std::deque<std::vector<std::byte>> blobs_;
  std::deque<std::vector<std::uint32_t>> index_lists_;
};

struct expected_raw {
  std::uint32_t type;
  std::vector<std::byte> payload;  // as stored (plugin chunks with their envelope)
};

untold::chunk_compression pick_compression(input_script& in) {
  static constexpr std::array<untold::compression, 4> methods = {untold::compression::none, untold::compression::lz4,
                                                                  untold::compression::zstd, untold::compression::none};
  return {methods[in.below(4)], static_cast<int>(in.below(6))};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  input_script in(data, size);
  const auto type = static_cast<untold::file_type>(1 + in.below(5));
  untold::builder b{type};

  std::vector<untold::texture_desc> textures(in.below(4));
  for (auto& t : textures) {
    t = {.name = in.text(), .uri = in.text(), .format = static_cast<untold::texture_format>(in.below(11)),
         .flags = in.u8(), .width = in.u16(), .height = in.u16(), .mip_count = in.below(13)};
    b.add_texture(t);
  }
  const auto texture_handle = [&] { return in.chance(128) ? untold::none : in.below(static_cast<std::uint32_t>(textures.size()) + 1); };
  std::vector<untold::material_desc> materials(in.below(4));
  for (auto& m : materials) {
    m.name = in.text();
    m.flags = in.u8();
    for (float& f : m.base_color_factor) f = in.f32();
    if (in.chance(64)) for (float& f : m.emissive_factor) f = in.f32();
    m.roughness_factor = in.f32();
    m.base_color_texture = texture_handle();
    m.normal_texture = texture_handle();
    if (in.chance(40)) m.height_texture = texture_handle();
    if (in.chance(40)) m.height_scale = in.f32();
    if (in.chance(30)) m.height_remap_max = in.f32();
    m.roughness_channel = static_cast<untold::texture_channel>(in.below(4));
    m.metallic_channel = static_cast<untold::texture_channel>(in.below(4));
    b.add_material(m);
  }
  std::vector<untold::entity_desc> entities(in.below(6));
  for (std::uint32_t i = 0; i < entities.size(); ++i) {
    auto& e = entities[i];
    e.name = in.text();
    e.parent = in.chance(100) ? untold::none : in.below(i + 1);  // == i is an error
    e.local_transform = in.transform();
    e.flags = in.u8();
    if (in.chance(30)) e.entity_id = in.below(8);
    b.add_entity(e);
  }
  std::vector<untold::mesh_desc> meshes(in.below(6));
  for (auto& m : meshes) {
    m.entity = in.below(static_cast<std::uint32_t>(entities.size()) + 1);  // == size is an error
    m.name = in.text();
    m.material = in.chance(100) ? untold::none : in.below(static_cast<std::uint32_t>(materials.size()) + 1);
    const std::uint32_t vertex_count = in.below(12);
    auto& vertices = in.bytes(std::size_t{vertex_count} * 32);
    for (std::uint32_t v = 0; v < vertex_count; ++v)
      for (int axis = 0; axis < 3; ++axis) untold::store_le_unchecked<float>(vertices.data() + 32 * v + 4 * axis, in.f32());
    m.vertices = vertices;
    m.indices = in.indices(in.below(24), vertex_count);
    if (in.chance(60)) m.edge_indices = in.indices(in.below(6), vertex_count);
    const std::uint8_t index_type = in.below(4);
    if (index_type == 1) m.index_type = untold::index_type::uint16;
    if (index_type == 2) m.index_type = untold::index_type::uint32;
    m.flags = in.u8();
    b.add_mesh(m);
  }
  // ---- extension tables (handles may dangle, parents may cycle, keys may
  // go backwards, numbers may be non-finite: finish() must refuse those) ----
  std::deque<std::vector<untold::skeleton_joint_desc>> joint_lists;
  std::vector<std::uint32_t> skeleton_joints;  // joint count per skeleton handle
  for (std::uint32_t n = in.below(3); n > 0; --n) {
    auto& joints = joint_lists.emplace_back(in.below(6));
    for (std::uint32_t j = 0; j < joints.size(); ++j)
      joints[j] = {.path = in.text(),
                   .parent = in.chance(90) ? untold::none : in.below(static_cast<std::uint32_t>(joints.size()) + 1),
                   .bind_transform = in.transform(),
                   .rest_transform = in.transform(),
                   .flags = in.u8()};
    untold::skeleton_desc d{.name = in.text(), .joints = joints};
    if (in.chance(200)) d.entity = in.below(static_cast<std::uint32_t>(entities.size()) + 1);
    else d.entity_id = in.below(8);
    b.add_skeleton(d);
    skeleton_joints.push_back(static_cast<std::uint32_t>(joints.size()));
  }
  std::deque<std::vector<std::uint32_t>> skin_joints;
  std::deque<std::vector<std::array<std::uint16_t, 4>>> skin_indices;
  std::deque<std::vector<untold::float4>> skin_weights;
  std::uint32_t skin_count = 0;
  for (std::uint32_t n = skeleton_joints.empty() ? 0 : in.below(3); n > 0; --n, ++skin_count) {
    const std::uint32_t mesh = in.below(static_cast<std::uint32_t>(meshes.size()) + 1);
    const std::uint32_t skeleton = in.below(static_cast<std::uint32_t>(skeleton_joints.size()) + 1);
    const std::uint32_t joint_bound = skeleton < skeleton_joints.size() ? skeleton_joints[skeleton] + 1 : 2;
    auto& joints = skin_joints.emplace_back(in.below(4));
    for (auto& j : joints) j = in.below(joint_bound);
    const std::size_t vertex_count = mesh < meshes.size() ? meshes[mesh].vertices.size() / 32 : 0;
    const std::size_t per_vertex = in.chance(230) ? vertex_count : in.below(4);
    auto& indices = skin_indices.emplace_back(per_vertex);
    auto& weights = skin_weights.emplace_back(per_vertex);
    for (std::size_t v = 0; v < per_vertex; ++v) {
      for (auto& j : indices[v]) j = static_cast<std::uint16_t>(in.below(static_cast<std::uint32_t>(joints.size()) + 1));
      for (float& w : weights[v]) w = in.chance(240) ? 0.25f : in.f32();
    }
    b.add_skin({.mesh = mesh, .skeleton = skeleton, .joints = joints, .joint_indices = indices, .joint_weights = weights});
  }
  std::deque<std::vector<untold::translation_keyframe_record>> translation_keys;
  std::deque<std::vector<untold::rotation_keyframe_record>> rotation_keys;
  std::deque<std::vector<untold::animation_channel_desc>> channel_lists;
  std::uint32_t clip_count = 0, channel_count = 0;
  for (std::uint32_t n = in.below(3); n > 0; --n, ++clip_count) {
    auto& channels = channel_lists.emplace_back(in.below(4));
    channel_count += static_cast<std::uint32_t>(channels.size());
    for (auto& c : channels) {
      float time = 0;
      const auto next_time = [&] { return time = in.chance(240) ? time + 0.5f * static_cast<float>(in.below(3)) : in.f32(); };
      auto& translations = translation_keys.emplace_back(in.below(4));
      for (auto& k : translations) k = {.time = next_time(), .x = in.f32(), .y = in.f32(), .z = in.f32()};
      time = 0;
      auto& rotations = rotation_keys.emplace_back(in.below(4));
      for (auto& k : rotations) k = {.time = next_time(), .x = in.f32(), .y = in.f32(), .z = in.f32(), .w = in.f32()};
      c = {.joint_path = in.text(), .translations = translations, .rotations = rotations, .flags = in.u8()};
    }
    untold::animation_clip_desc d{.name = in.text(), .channels = channels, .flags = in.u8()};
    if (in.chance(40)) d.duration = in.f32();
    b.add_animation_clip(d);
  }
  std::vector<std::string_view> light_names, camera_names;
  for (std::uint32_t n = in.below(3); n > 0; --n) {
    untold::light_desc d{.name = in.text()};
    if (in.chance(128)) d.entity = in.below(static_cast<std::uint32_t>(entities.size()) + 1);
    else d.entity_id = in.chance(128) ? untold::none : in.below(8);
    d.light.light_type = in.below(6);  // 1..4 are known
    d.light.flags = in.u8();
    d.light.color = {in.f32(), in.f32(), in.f32()};
    d.light.intensity = in.f32();
    d.light.radius = in.f32();
    d.light.outer_cone = in.f32();
    d.light.local_transform = in.transform();
    b.add_light(d);
    light_names.push_back(d.name);
  }
  for (std::uint32_t n = in.below(3); n > 0; --n) {
    untold::camera_desc d{.name = in.text()};
    if (in.chance(128)) d.entity = in.below(static_cast<std::uint32_t>(entities.size()) + 1);
    else d.entity_id = in.chance(128) ? untold::none : in.below(8);
    d.camera.flags = in.u8();
    d.camera.fov_y_degrees = in.f32();
    d.camera.near_clip = in.f32();
    d.camera.far_clip = in.f32();
    d.camera.aspect = in.f32();
    d.camera.local_transform = in.transform();
    b.add_camera(d);
    camera_names.push_back(d.name);
  }

  std::vector<expected_raw> raws;
  for (std::uint32_t n = in.below(3); n > 0; --n) {
    auto& payload = in.bytes(in.below(40));
    if (in.chance(128)) {
      const std::uint32_t raw_type = 28 + in.u16() % 0x7FE3;  // 28..0x7FFE (23..27 are core tables now)
      b.add_raw_chunk(raw_type, payload, in.below(3));
      raws.push_back({raw_type, payload});
    } else {
      const std::uint32_t plugin_type = 0x8000 + in.u16();
      const std::string_view id = in.text();
      const std::uint32_t kind = in.u8(), version = in.u8();
      b.add_plugin_chunk(id, kind, version, payload, plugin_type);
      auto encoded = untold::encode_plugin_chunk(id, kind, version, payload);
      raws.push_back({plugin_type, encoded ? *encoded : std::vector<std::byte>{}});
    }
  }

  untold::write_options options;
  if (in.chance(40)) options.format_version = in.below(6);
  if (in.chance(40)) options.world_bounds = untold::aabb{{in.f32(), in.f32(), in.f32()}, {in.f32(), in.f32(), in.f32()}};
  if (in.chance(40)) options.root_transform = in.transform();
  options.flags = in.u8();
  options.content_hash = in.chance(200);
  options.compression.metadata = pick_compression(in);
  options.compression.data = pick_compression(in);
  for (std::uint32_t n = in.below(3); n > 0; --n)
    options.compression.overrides[1 + in.below(untold::max_known_chunk_type)] = pick_compression(in);

  // ---- deterministic ----
  const auto file = b.finish(options);
  const auto again = b.finish(options);
  if (static_cast<bool>(file) != static_cast<bool>(again)) die("finish is not deterministic (success)");
  if (!file) {
    if (again.error().code != file.error().code) die("finish is not deterministic (error)");
    const std::string_view id = file.error().rule_id();
    if (!(id.starts_with("R-") || id.starts_with("E-"))) die("writer error without a rule id");
    return 0;
  }
  if (!untold_fuzz::same_bytes(*file, *again)) die("finish is not deterministic (bytes)");

  // ---- accepted by the reader, deep checks included ----
  auto a = untold::open(*file, {.deep_checks = true});
  if (!a) die("the reader rejects what the writer wrote: " + a.error().describe());
  if (const std::string problem = untold_fuzz::traverse(*a, true); !problem.empty()) die(problem);

  // ---- the same content ----
  const auto& h = a->header();
  if (h.file_type != static_cast<std::uint32_t>(type) || h.flags != options.flags ||
      !same_bits(h.root_transform, options.root_transform) || h.format_version != options.format_version.value_or(untold::max_format_version))
    die("header differs");
  if (options.world_bounds && !same_bits(h.world_bounds, *options.world_bounds)) die("world bounds differ");
  if (untold::is_hashed(h) != options.content_hash) die("content hash presence differs");

  const auto stored_entities = a->entities();
  if (stored_entities.size() != entities.size()) die("entity count");
  for (std::uint32_t i = 0; i < entities.size(); ++i) {
    const auto e = stored_entities[i];
    const auto& d = entities[i];
    if (a->string(e.name_offset) != d.name || e.entity_id != d.entity_id.value_or(i) || e.flags != d.flags ||
        !same_bits(e.local_transform, d.local_transform))
      die("entity differs");
    const std::uint32_t parent_id =
        d.parent == untold::none ? untold::none : entities[d.parent].entity_id.value_or(d.parent);
    if (e.parent_entity_id != parent_id) die("entity parent differs");
  }

  // Meshes are stored grouped by entity, stable within an entity.
  std::vector<std::uint32_t> order(meshes.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return meshes[x].entity < meshes[y].entity; });
  const auto stored_meshes = a->meshes();
  if (stored_meshes.size() != meshes.size()) die("mesh count");
  for (std::uint32_t row = 0; row < order.size(); ++row) {
    const auto m = stored_meshes[row];
    const auto& d = meshes[order[row]];
    const std::uint32_t vertex_count = static_cast<std::uint32_t>(d.vertices.size() / 32);
    const auto want_type = d.index_type.value_or(vertex_count <= 65535 ? untold::index_type::uint16 : untold::index_type::uint32);
    if (a->string(m.mesh_name_offset) != d.name || m.material_index != d.material || m.flags != d.flags ||
        m.index_type != static_cast<std::uint32_t>(want_type) || m.entity_id != entities[d.entity].entity_id.value_or(d.entity) ||
        !untold_fuzz::same_bytes(a->vertices(m), d.vertices))
      die("mesh differs");
    const auto indices = untold::view_indices(*a, m);
    const auto edges = untold::view_edge_indices(*a, m);
    if (!std::equal(indices.begin(), indices.end(), d.indices.begin(), d.indices.end()) ||
        !std::equal(edges.begin(), edges.end(), d.edge_indices.begin(), d.edge_indices.end()))
      die("mesh indices differ");
    const auto owner = stored_entities[*a->entity_row(m.entity_id)];
    if (row < owner.first_mesh_record_index || row >= owner.first_mesh_record_index + owner.mesh_record_count)
      die("mesh outside its entity's mesh range");
  }

  const auto stored_materials = a->materials();
  if (stored_materials.size() != materials.size()) die("material count");
  for (std::uint32_t i = 0; i < materials.size(); ++i) {
    const auto m = stored_materials[i];
    const auto& d = materials[i];
    if (a->string(m.name_offset) != d.name || m.flags != d.flags || !same_bits(m.base_color_factor, d.base_color_factor) ||
        !same_bits(m.emissive_factor, d.emissive_factor) || !same_bits(m.roughness_factor, d.roughness_factor) ||
        m.base_color_texture != d.base_color_texture || m.normal_texture != d.normal_texture ||
        m.roughness_channel() != d.roughness_channel || m.metallic_channel() != d.metallic_channel)
      die("material differs");
    if (h.format_version >= 3 && (m.height_texture != d.height_texture || !same_bits(m.height_scale, d.height_scale)))
      die("material height fields differ");
    if (h.format_version >= 4 && !same_bits(m.height_remap_max, d.height_remap_max)) die("material remap differs");
  }
  const auto stored_textures = a->textures();
  if (stored_textures.size() != textures.size()) die("texture count");
  for (std::uint32_t i = 0; i < textures.size(); ++i) {
    const auto t = stored_textures[i];
    const auto& d = textures[i];
    if (a->string(t.name_offset) != d.name || a->string(t.uri_offset) != d.uri ||
        t.texture_format != static_cast<std::uint32_t>(d.format) || t.flags != d.flags || t.width != d.width ||
        t.height != d.height || t.mip_count != d.mip_count)
      die("texture differs");
  }
  // Extension tables: one record per call, names kept.
  std::size_t joint_count = 0;
  for (const std::uint32_t n : skeleton_joints) joint_count += n;
  if (a->table<untold::skeleton_record>().size() != skeleton_joints.size() ||
      a->table<untold::skeleton_joint_record>().size() != joint_count ||
      a->table<untold::skin_record>().size() != skin_count ||
      a->table<untold::animation_clip_record>().size() != clip_count ||
      a->table<untold::animation_channel_record>().size() != channel_count)
    die("extension table sizes differ");
  const auto lights = a->table<untold::light_record>();
  const auto cameras = a->table<untold::camera_record>();
  if (lights.size() != light_names.size() || cameras.size() != camera_names.size()) die("light or camera count");
  for (std::uint32_t i = 0; i < lights.size(); ++i)
    if (a->string(lights[i].name_offset) != light_names[i]) die("light name differs");
  for (std::uint32_t i = 0; i < cameras.size(); ++i)
    if (a->string(cameras[i].name_offset) != camera_names[i]) die("camera name differs");

  // The writer's own integrity chunk (a plugin chunk, written with block
  // digests: by default when the content hash is on) besides the raw chunks.
  std::vector<std::uint32_t> raw_rows;
  bool has_integrity_chunk = false;
  for (const std::uint32_t row : a->raw_chunks()) {
    if (a->chunks()[row].chunk_type == untold::integrity_chunk_type)
      has_integrity_chunk = true;
    else
      raw_rows.push_back(row);
  }
  if (has_integrity_chunk != options.writes_block_digests()) die("integrity chunk presence differs");
  if (raw_rows.size() != raws.size()) die("raw chunk count");
  for (std::size_t i = 0; i < raws.size(); ++i)
    if (a->chunks()[raw_rows[i]].chunk_type != raws[i].type || !untold_fuzz::same_bytes(a->payload(raw_rows[i]), raws[i].payload))
      die("raw chunk differs");
  return 0;
}
