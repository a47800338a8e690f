// fuzz/make_corpus.cpp - writes the seed inputs of every fuzz target into
// <out>/<target>/seed-*: small files made by the writer (every compression,
// raw and plugin chunks, edge indices, every material version, each file
// type), the golden file, a few foreign files from tests/data as
// arbitrary bytes, codec streams and vertex buffers.
//   untold_fuzz_corpus <out-dir>
// The committed corpus also keeps legacy-* files, which the writer made
// before a layout change and no longer writes (legacy-integrity-v2-*: an
// integrity chunk of version 2); they are kept by hand.
// Deterministic: the same library gives the same files.
#include <array>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <untold/untold.hpp>

#include "regressions.hpp"

namespace {

namespace fs = std::filesystem;
using bytes = std::vector<std::byte>;

fs::path out_dir;
bool failed = false;

/// Writes <out>/<target>/<name>, where name starts with seed- or regress-.
void save_as(const std::string& target, const std::string& name, const bytes& data) {
  const fs::path dir = out_dir / target;
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) {
    std::fprintf(stderr, "cannot write %s/%s\n", dir.string().c_str(), name.c_str());
    failed = true;
  }
}

void save(const std::string& target, const std::string& name, const bytes& data) { save_as(target, "seed-" + name, data); }

bytes read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes out(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) out[i] = static_cast<std::byte>(chars[i]);
  return out;
}

bytes must(untold::result<bytes> r, const char* what) {
  if (!r) {
    std::fprintf(stderr, "%s: %s\n", what, r.error().describe().c_str());
    failed = true;
    return {};
  }
  return std::move(*r);
}

/// A small PBR_STATIC_V1 quad at height z, through the library's encoder.
bytes quad(float z) {
  const std::array<float, 12> positions = {0, 0, z, 1, 0, z, 0, 1, z, 1, 1, z};
  const std::array<float, 8> uv = {0, 0, 1, 0, 0, 1, 1, 1};
  const std::array<float, 16> colors = {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0.5f};
  return must(untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions, .uv0 = uv, .colors = colors}),
              "encode");
}

struct scene_options {
  untold::file_type type = untold::file_type::tile;
  untold::write_options write{};
  bool edges = false;
  bool raw_chunks = false;
  bool height = false;
};

bytes scene(const scene_options& o) {
  static const bytes a = quad(0), b = quad(1);
  static const std::array<std::uint32_t, 6> tris = {0, 1, 2, 1, 3, 2};
  untold::builder w{o.type};
  const auto tex = w.add_texture({.name = "albedo", .uri = "Textures/a.png", .format = untold::texture_format::bc7,
                                  .flags = untold::texture_flags::srgb, .width = 64, .height = 64, .mip_count = 7});
  untold::material_desc m{.name = "wall", .base_color_texture = tex};
  if (o.height) {
    m.height_texture = tex;
    m.height_remap_max = 2.0f;
  }
  const auto mat = w.add_material(m);
  untold::mat4 moved = untold::identity_matrix;
  moved[12] = 2.0f;
  const auto root = w.add_entity({.name = "root"});
  const auto child = w.add_entity({.name = "caf\xC3\xA9", .parent = root, .local_transform = moved});
  w.add_mesh({.entity = child, .name = "quad", .material = mat, .vertices = a, .indices = tris,
              .edge_indices = o.edges ? std::span<const std::uint32_t>(tris).first(4) : std::span<const std::uint32_t>{}});
  w.add_mesh({.entity = root, .name = "quad2", .vertices = b, .indices = tris,
              .index_type = untold::index_type::uint32});
  if (o.raw_chunks) {
    const std::array<std::byte, 5> payload = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}, std::byte{5}};
    w.add_raw_chunk(100, payload, 1);
    w.add_plugin_chunk("com.example.fuzz", 7, 1, payload);
  }
  return must(w.finish(o.write), "finish");
}

/// Every engine extension table: a two-joint skeleton skinning a quad, an
/// animation clip with both kinds of keys, a light, a camera, colour
/// management, a LUT, morph targets with a driver, and a muscle.
bytes extensions_scene() {
  static const bytes q = quad(0);
  static const std::array<std::uint32_t, 6> tris = {0, 1, 2, 1, 3, 2};
  untold::builder w;
  const auto tex = w.add_texture({.name = "lut", .uri = "Luts/a.cube", .format = untold::texture_format::rgba8});
  const auto root = w.add_entity({.name = "root"});
  const auto mesh = w.add_mesh({.entity = root, .name = "body", .vertices = q, .indices = tris});
  const std::array<untold::skeleton_joint_desc, 2> joints = {untold::skeleton_joint_desc{.path = "hips"},
                                                             untold::skeleton_joint_desc{.path = "hips/spine", .parent = 0}};
  const auto skeleton = w.add_skeleton({.name = "rig", .entity = root, .joints = joints});
  const std::array<std::uint32_t, 2> palette = {0, 1};
  const std::array<std::array<std::uint16_t, 4>, 4> per_vertex = {{{0, 1, 0, 0}, {0, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 0, 0}}};
  const std::array<untold::float4, 4> weights = {{{0.5f, 0.5f, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, {0.25f, 0.75f, 0, 0}}};
  w.add_skin({.mesh = mesh, .skeleton = skeleton, .joints = palette, .joint_indices = per_vertex, .joint_weights = weights});
  const std::array<untold::translation_keyframe_record, 2> moves = {{{.time = 0}, {.time = 1, .x = 2}}};
  const std::array<untold::rotation_keyframe_record, 1> turns = {{{.time = 0.5f}}};
  const std::array<untold::animation_channel_desc, 1> channels = {{{.joint_path = "hips", .translations = moves, .rotations = turns}}};
  w.add_animation_clip({.name = "walk", .channels = channels});
  w.add_light({.name = "sun", .entity = root, .light = {.light_type = 1}});
  w.add_camera({.name = "eye", .entity = root});
  w.set_color_management({.view_transform = "AgX", .look = "base", .lut_texture = tex});
  w.add_color_grade_lut({.uri = "Luts/b.cube", .lut_size = 33});
  // Chunks 23, 24, 26, 27: two morph targets (one driven), a muscle.
  const std::array<untold::float3, 4> smile = {{{0, 0, 0}, {0.5f, 0, 0}, {0, 0.25f, 0}, {0, 0, 0}}};
  const std::array<untold::morph_delta, 1> blink = {{{.vertex = 3, .position = {0, 0, -1}, .normal = {0, 1, 0}}}};
  w.add_morph_target(mesh, {.name = "smile", .positions = smile});
  w.add_morph_target(mesh, {.name = "blink", .deltas = blink, .normal_deltas = true,
                            .driver = untold::morph_driver_desc{.joint_path = "hips/spine"}});
  w.add_muscle({.skeleton = skeleton, .name = "m", .origin_joint = "hips", .insertion_joint = "hips/spine"});
  return must(w.finish({.content_hash = false}), "extensions");
}

untold::write_options compressed(untold::compression metadata, untold::compression data, bool hash = false) {
  untold::write_options w{.content_hash = hash};
  w.compression.metadata = {metadata, 0};
  w.compression.data = {data, 0};
  return w;
}

/// A fuzz_decompress input: method byte (bit 7 = "mutated" mode), 23-bit declared size, body.
bytes codec_input(std::uint8_t method, std::size_t declared, const bytes& body) {
  bytes out = {std::byte{method}, std::byte(declared & 0xFF), std::byte((declared >> 8) & 0xFF),
               std::byte((declared >> 16) & 0x7F)};
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: untold_fuzz_corpus <out-dir>\n");
    return 2;
  }
  out_dir = argv[1];
  using untold::compression;

  // Whole files: fuzz_open, fuzz_ranges and fuzz_structured (whose mutator
  // starts from valid files).
  const auto both = [](const std::string& name, const bytes& file) {
    save("fuzz_open", name, file);
    save("fuzz_ranges", name, file);
    save("fuzz_structured", name, file);
  };
  both("plain.untold", scene({.write = {.content_hash = false}}));
  both("hashed.untold", scene({}));
  both("digests-no-content-hash.untold", scene({.write = {.content_hash = false, .block_digests = true}}));
  both("lz4.untold", scene({.write = compressed(compression::lz4, compression::lz4)}));
  both("zstd.untold", scene({.write = compressed(compression::zstd, compression::zstd, true)}));
  both("mixed.untold", scene({.write = compressed(compression::zstd, compression::lz4)}));
  both("raw-chunks.untold", scene({.write = {.content_hash = false}, .edges = true, .raw_chunks = true}));
  both("v4-lod.untold", scene({.type = untold::file_type::lod, .write = {.content_hash = false}, .height = true}));
  both("animation.untold", must(untold::builder{untold::file_type::animation}.finish(), "animation"));
  both("extensions.untold", extensions_scene());
  both("golden.untold", read(fs::path(UNTOLD_TEST_DATA_DIR) / "minimal_v1.untold"));
  // Hand-made adversarial inputs (fuzz/regressions.hpp, SECURITY.md).
  namespace regress = untold_fuzz::regress;
  for (const auto& [name, file] : {std::pair{"total-limit-wrap", regress::total_limit_wrap()},
                                   std::pair{"lz4-declares-1gib", regress::declares_1gib(compression::lz4)},
                                   std::pair{"zstd-declares-1gib", regress::declares_1gib(compression::zstd)},
                                   std::pair{"overlapping-meshes", regress::overlapping_meshes(64)},
                                   std::pair{"overlapping-skins", regress::overlapping_skins(48)}}) {
    save_as("fuzz_open", std::string("regress-") + name, file);
    save_as("fuzz_ranges", std::string("regress-") + name, file);
  }
  {  // block digests intact, contentHash not: a lazy open and load_all accept it, integrity::full does not
    bytes file = scene({});
    file[untold::content_hash_field_offset] ^= std::byte{0x01};
    save_as("fuzz_ranges", "regress-digests-with-stale-content-hash", file);
  }
  const fs::path data = UNTOLD_TEST_DATA_DIR;
  for (const char* foreign : {"urho3d/Models/Box.mdl", "udm/models/cube.pmdl_b"})
    save("fuzz_open", fs::path(foreign).filename().string(), read(data / foreign));

  // Codec streams: fuzz_decompress.
  const bytes text = [] {
    bytes t;
    for (int i = 0; i < 600; ++i) t.push_back(static_cast<std::byte>("untold fuzz "[i % 12] + (i / 97)));
    return t;
  }();
  save("fuzz_decompress", "lz4", codec_input(1, text.size(), must(untold::compress(compression::lz4, 0, text), "lz4")));
  save("fuzz_decompress", "zstd", codec_input(2, text.size(), must(untold::compress(compression::zstd, 3, text), "zstd")));
  save("fuzz_decompress", "none", codec_input(0, 16, bytes(16, std::byte{7})));
  save("fuzz_decompress", "lz4-mutated", codec_input(0x81, 37, text));
  save("fuzz_decompress", "zstd-mutated", codec_input(0x82, 1234, text));

  // meshopt chunks: fuzz_mesh_codec (byte 0 method and mode, byte 1 element size).
  if (untold::compression_available(compression::meshopt_zstd)) {
    const bytes q = quad(0.0f);
    const std::uint32_t quad_indices[6] = {0, 1, 2, 2, 1, 3};
    bytes index_bytes(sizeof quad_indices);
    std::memcpy(index_bytes.data(), quad_indices, sizeof quad_indices);
    for (const auto& [name, method] :
         {std::pair{"meshopt", compression::meshopt}, std::pair{"meshopt-zstd", compression::meshopt_zstd}}) {
      const std::uint8_t bit = method == compression::meshopt ? 0 : 1;
      const untold::codec_input vertex_stream[] = {{q, 32, true}};
      bytes stored = {std::byte{bit}, std::byte{0}};
      const bytes packed = must(untold::compress_streams(method, 3, vertex_stream), name);
      stored.insert(stored.end(), packed.begin(), packed.end());
      save("fuzz_mesh_codec", std::string(name) + "-vertices", stored);
      const untold::codec_input index_stream[] = {{index_bytes, 4, false}};
      bytes stored_indices = {std::byte{bit}, std::byte{0}};
      const bytes packed_indices = must(untold::compress_streams(method, 3, index_stream), name);
      stored_indices.insert(stored_indices.end(), packed_indices.begin(), packed_indices.end());
      save("fuzz_mesh_codec", std::string(name) + "-indices", stored_indices);
      bytes encoded = {std::byte(0x80u | bit), std::byte{7}};
      encoded.insert(encoded.end(), q.begin(), q.end());
      save("fuzz_mesh_codec", std::string(name) + "-encode-vertices", encoded);
      bytes encoded_indices = {std::byte(0x82u | bit), std::byte{1}};
      encoded_indices.insert(encoded_indices.end(), index_bytes.begin(), index_bytes.end());
      encoded_indices.insert(encoded_indices.end(), index_bytes.begin(), index_bytes.end());
      save("fuzz_mesh_codec", std::string(name) + "-encode-indices", encoded_indices);
      // A fields stream (codec 6) with each field codec: vertex, raw, words.
      const untold::codec_field fields[] = {{12, untold::codec_stream_kind::vertex},
                                            {4, untold::codec_stream_kind::raw},
                                            {16, untold::codec_stream_kind::words}};
      std::vector<bytes> forms;
      std::size_t offset = 0;
      for (const untold::codec_field& f : fields) {
        forms.push_back(must(untold::encode_field(untold::gather_field(q, 32, offset, f.size), f.size, f.kind), name));
        offset += f.size;
      }
      bytes stream = untold::assemble_fields(fields, forms);
      if (method == compression::meshopt_zstd) stream = must(untold::compress(compression::zstd, 3, stream), name);
      bytes stored_fields(2 + 8 + 24);  // method byte, element byte, then a one-stream directory
      stored_fields[0] = std::byte{bit};
      std::byte* entry = stored_fields.data() + 2 + 8;
      untold::store_le_unchecked<std::uint32_t>(stored_fields.data() + 2, 1);
      untold::store_le_unchecked<std::uint32_t>(entry + 8, static_cast<std::uint32_t>(q.size() / 32));
      untold::store_le_unchecked<std::uint16_t>(entry + 12, 32);
      entry[14] = std::byte{6};
      untold::store_le_unchecked<std::uint64_t>(entry + 16, stream.size());
      stored_fields.insert(stored_fields.end(), stream.begin(), stream.end());
      save("fuzz_mesh_codec", std::string(name) + "-fields", stored_fields);
    }
  }

  // Vertex bytes: fuzz_vertex (first byte = misalignment).
  bytes vertices = {std::byte{3}};
  for (float z : {0.0f, -1.5f}) {
    const bytes q = quad(z);
    vertices.insert(vertices.end(), q.begin(), q.end());
  }
  save("fuzz_vertex", "quads", vertices);
  save("fuzz_vertex", "box.mdl", read(data / "urho3d/Models/Box.mdl"));

  // Builder scripts: fuzz_roundtrip reads any bytes as a script; a few
  // pseudo-random ones of growing length.
  std::uint32_t state = 0x2545F491u;
  for (const std::size_t length : {48u, 160u, 400u, 1200u}) {
    bytes script(length);
    for (auto& x : script) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<std::byte>(state >> 24);
    }
    save("fuzz_roundtrip", "script-" + std::to_string(length), script);
  }
  return failed ? 1 : 0;
}
