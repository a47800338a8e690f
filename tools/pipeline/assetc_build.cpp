// tools/pipeline/assetc_build.cpp - the compiler behind `untold build` (see
// assetc_build.hpp, docs/assetc-build.md): sources -> neutral scene ->
// .hmesh/.hmat/.hanim/.ktx2, one global assets.hman, optional .hpack,
// incremental cache, parallel jobs, verification.
#include "assetc_build.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include <meshoptimizer.h>
#include <nlohmann/json.hpp>

#include <untold/assetc/assetc.hpp>
#include <untold/hash.hpp>
#include <untold/matrix.hpp>
#include <untold/vertex.hpp>

#include "assetc_ktx2.hpp"
#include "files.hpp"
#include "import_model.hpp"
#include "inspect.hpp"
#include "simplify.hpp"

namespace fs = std::filesystem;

namespace untold::tools {
namespace assetc_build {

namespace {

namespace ac = untold::assetc;
using convert::no_ref;

// ---- files and hashes ---------------------------------------------------------------

std::optional<std::vector<std::byte>> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return std::nullopt;
  in.seekg(0);
  std::vector<std::byte> out(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(out.data()), size)) return std::nullopt;
  return out;
}

/// Writes one output file (files.hpp: atomically), its directory made
/// first. Error text, or nullopt.
std::optional<std::string> write_bytes(const fs::path& p, byte_span bytes) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) return "cannot create " + quote_path(p.parent_path().string()) + ": " + ec.message();
  if (auto failed = write_output(p, bytes)) return std::move(failed->message);
  return std::nullopt;
}

/// Writes one output of an asset, `path` relative to the output directory,
/// and lists it; false with the asset failed (an I/O error) otherwise.
bool write_asset_output(const fs::path& output, const std::string& path, byte_span bytes, asset_result& r) {
  if (auto e = write_bytes(output / path, bytes)) {
    r.state = asset_result::status::failed;
    r.error = std::move(*e);
    r.io_error = true;
    return false;
  }
  r.outputs.push_back(path);
  return true;
}

std::string hex_digest(std::initializer_list<byte_span> parts) {
  untold::sha256 h;
  for (byte_span p : parts) h.update(p);
  auto d = h.finish();
  return d ? to_hex(*d) : std::string();
}
byte_span text_bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

std::string generic(const fs::path& p) { return p.generic_string(); }

/// "models/chair.glb" -> "models/chair" (case kept: the on-disk names).
std::string strip_ext(std::string_view rel) {
  const std::size_t slash = rel.rfind('/');
  const std::size_t dot = rel.rfind('.');
  if (dot != std::string_view::npos && (slash == std::string_view::npos || dot > slash + 1)) return std::string(rel.substr(0, dot));
  return std::string(rel);
}

enum class source_kind : std::uint8_t { none, mesh, image };
source_kind kind_of(const fs::path& p) {
  const std::string e = lower_extension(p);
  if (e == ".gltf" || e == ".glb" || e == ".obj") return source_kind::mesh;
  if (e == ".png" || e == ".jpg" || e == ".jpeg" || e == ".tga" || e == ".bmp") return source_kind::image;
  return source_kind::none;
}

// ---- one asset's output ---------------------------------------------------------------

struct manifest_item {
  std::uint64_t hash = 0;
  std::uint8_t colorspace = 0;
  std::string path;
};

struct job {
  std::string rel;  // source relative to the input
  fs::path path;    // absolute source
  source_kind kind = source_kind::none;
  settings s;
  // results
  asset_result result;
  std::vector<manifest_item> manifest;
  std::vector<std::pair<std::string, std::string>> deps;  // path, sha256 (besides the source)
  std::string key;
};

struct context {
  const build_options& options;
  fs::path output;
  std::unique_ptr<texture_encoder> raw_encoder, compress_encoder;
  bool fell_back = false;
};

// ---- geometry -------------------------------------------------------------------------

struct v3 {
  float x = 0, y = 0, z = 0;
};
v3 sub(v3 a, v3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
v3 mul(v3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
float dot(v3 a, v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
v3 normalised(v3 v, v3 fallback) {
  const float l = std::sqrt(dot(v, v));
  return std::isfinite(l) && l > 1e-20f ? mul(v, 1.0f / l) : fallback;
}
v3 any_tangent(v3 n) {
  const v3 axis = std::fabs(n.x) < 0.9f ? v3{1, 0, 0} : v3{0, 1, 0};
  return normalised(sub(axis, mul(n, dot(n, axis))), {1, 0, 0});
}


bool is_identity(const mat4& m) { return m == identity_matrix; }

/// One submesh on its way to the file: its own vertices, local indices.
struct sub_build {
  std::vector<float> pos, nrm, tan, uv;
  std::vector<std::uint32_t> idx;
  std::vector<ac::skin_vertex> skin;  // empty: static
  std::uint32_t source_material = no_ref;
  bool has_tangents = true;
  std::size_t vertex_count() const { return pos.size() / 3; }
};

/// Copies the referenced vertices of `m`, transformed by `world` (identity:
/// untouched); a mirroring transform flips the winding to stay CCW.
sub_build gather(const convert::mesh& m, const mat4& world, const convert::skin* skin) {
  sub_build b;
  b.source_material = m.material;
  const std::size_t n = m.vertex_count();
  std::vector<std::uint32_t> remap(n, no_ref);
  std::vector<std::uint32_t> order;
  for (std::uint32_t i : m.indices) {
    if (remap[i] == no_ref) {
      remap[i] = static_cast<std::uint32_t>(order.size());
      order.push_back(i);
    }
    b.idx.push_back(remap[i]);
  }
  const bool identity = is_identity(world);
  // Normals transform by the cofactor matrix (inverse transpose times det).
  const mat4& w = world;
  const float c00 = w[5] * w[10] - w[6] * w[9], c01 = w[6] * w[8] - w[4] * w[10], c02 = w[4] * w[9] - w[5] * w[8];
  const float c10 = w[2] * w[9] - w[1] * w[10], c11 = w[0] * w[10] - w[2] * w[8], c12 = w[1] * w[8] - w[0] * w[9];
  const float c20 = w[1] * w[6] - w[2] * w[5], c21 = w[2] * w[4] - w[0] * w[6], c22 = w[0] * w[5] - w[1] * w[4];
  const float det = w[0] * c00 + w[4] * c10 + w[8] * c20;
  const float sign = det < 0 ? -1.0f : 1.0f;
  b.has_tangents = !m.tangents.empty();
  for (std::uint32_t src : order) {
    v3 p{m.positions[3 * src], m.positions[3 * src + 1], m.positions[3 * src + 2]};
    v3 nn{0, 0, 1};
    if (!m.normals.empty()) nn = {m.normals[3 * src], m.normals[3 * src + 1], m.normals[3 * src + 2]};
    v3 t{0, 0, 0};
    float hand = 1;
    if (!m.tangents.empty()) {
      t = {m.tangents[4 * src], m.tangents[4 * src + 1], m.tangents[4 * src + 2]};
      hand = m.tangents[4 * src + 3] < 0 ? -1.0f : 1.0f;
    }
    if (!identity) {
      p = {w[0] * p.x + w[4] * p.y + w[8] * p.z + w[12], w[1] * p.x + w[5] * p.y + w[9] * p.z + w[13],
           w[2] * p.x + w[6] * p.y + w[10] * p.z + w[14]};
      nn = mul(v3{c00 * nn.x + c01 * nn.y + c02 * nn.z, c10 * nn.x + c11 * nn.y + c12 * nn.z,
                  c20 * nn.x + c21 * nn.y + c22 * nn.z},
               sign);
      t = {w[0] * t.x + w[4] * t.y + w[8] * t.z, w[1] * t.x + w[5] * t.y + w[9] * t.z, w[2] * t.x + w[6] * t.y + w[10] * t.z};
      hand *= sign;
    }
    nn = normalised(nn, {0, 0, 1});
    t = m.tangents.empty() ? any_tangent(nn) : normalised(sub(t, mul(nn, dot(nn, t))), any_tangent(nn));
    b.pos.insert(b.pos.end(), {p.x, p.y, p.z});
    b.nrm.insert(b.nrm.end(), {nn.x, nn.y, nn.z});
    b.tan.insert(b.tan.end(), {t.x, t.y, t.z, hand});
    if (!m.uv0.empty()) b.uv.insert(b.uv.end(), {m.uv0[2 * src], m.uv0[2 * src + 1]});
    else b.uv.insert(b.uv.end(), {0.0f, 0.0f});
    if (skin != nullptr) {
      ac::skin_vertex sv;
      for (std::size_t k = 0; k < 4; ++k) {
        const std::uint16_t palette = m.joints[src][k];
        sv.joints[k] = static_cast<std::uint16_t>(palette < skin->joints.size() ? skin->joints[palette] : 0);
        sv.weights[k] = m.weights[src][k];
      }
      b.skin.push_back(sv);
    }
  }
  if (det < 0)
    for (std::size_t i = 0; i + 2 < b.idx.size(); i += 3) std::swap(b.idx[i + 1], b.idx[i + 2]);
  return b;
}

/// Vertex cache then vertex fetch order (meshoptimizer).
void optimise(sub_build& b) {
  const std::size_t n = b.vertex_count();
  if (b.idx.empty()) return;
  meshopt_optimizeVertexCache(b.idx.data(), b.idx.data(), b.idx.size(), n);
  std::vector<unsigned int> remap(n);
  const std::size_t unique = meshopt_optimizeVertexFetchRemap(remap.data(), b.idx.data(), b.idx.size(), n);
  meshopt_remapIndexBuffer(b.idx.data(), b.idx.data(), b.idx.size(), remap.data());
  auto apply = [&](auto& stream, std::size_t components) {
    if (stream.empty()) return;
    using T = typename std::decay_t<decltype(stream)>::value_type;
    std::vector<T> out(unique * components);
    meshopt_remapVertexBuffer(out.data(), stream.data(), n, sizeof(T) * components, remap.data());
    stream = std::move(out);
  };
  apply(b.pos, 3);
  apply(b.nrm, 3);
  apply(b.tan, 4);
  apply(b.uv, 2);
  apply(b.skin, 1);
}

ac::mesh_bounds bounds_of(std::span<const float> pos) {
  ac::mesh_bounds bb;
  if (pos.empty()) return bb;
  bb.min = {pos[0], pos[1], pos[2]};
  bb.max = bb.min;
  for (std::size_t i = 0; i + 2 < pos.size(); i += 3)
    for (std::size_t c = 0; c < 3; ++c) {
      bb.min[c] = std::min(bb.min[c], pos[i + c]);
      bb.max[c] = std::max(bb.max[c], pos[i + c]);
    }
  for (std::size_t c = 0; c < 3; ++c) bb.center[c] = 0.5f * (bb.min[c] + bb.max[c]);
  float r2 = 0;
  for (std::size_t i = 0; i + 2 < pos.size(); i += 3) {
    const float dx = pos[i] - bb.center[0], dy = pos[i + 1] - bb.center[1], dz = pos[i + 2] - bb.center[2];
    r2 = std::max(r2, dx * dx + dy * dy + dz * dz);
  }
  bb.radius = std::sqrt(r2);
  return bb;
}

std::string describe(const error& e) { return e.describe(); }

// ---- mesh sources ---------------------------------------------------------------------

struct texture_use {
  bool srgb = false;
  texture_mode mode = texture_mode::color;
  bool first = true;
};

void compile_mesh(context& ctx, job& j) {
  asset_result& r = j.result;
  convert::conversion_report& rep = r.report;
  model_import_options io;
  auto imported = import_model(j.path, io);
  if (!imported) {
    r.state = asset_result::status::failed;
    // The source is named by the caller already.
    const std::string prefix = j.path.string() + ": ";
    r.error = imported.error.rfind(prefix, 0) == 0 ? imported.error.substr(prefix.size()) : imported.error;
    return;
  }
  const convert::scene& sc = imported.scene;
  rep.append(sc.report);
  std::error_code ec;
  for (const fs::path& d : imported.dependencies) {
    if (fs::equivalent(d, j.path, ec)) continue;
    auto bytes = read_bytes(d);
    if (!bytes) continue;
    const fs::path rel = d.lexically_relative(fs::absolute(ctx.options.input).lexically_normal());
    j.deps.emplace_back(rel.empty() || generic(rel).rfind("..", 0) == 0 ? generic(d) : generic(rel), hex_digest({*bytes}));
  }

  const std::string stem = strip_ext(j.rel);
  const std::string source_ref = ac::source_ref(j.rel);

  // Skeleton of the first skin; its other skins (same skeleton) are fine too.
  const std::uint32_t skeleton = sc.skins.empty() ? no_ref : sc.skins[0].skeleton;
  std::set<std::uint32_t> other_skeletons;
  for (const convert::skin& s : sc.skins)
    if (s.skeleton != skeleton) other_skeletons.insert(s.skeleton);
  rep.dropped("skeletons beyond the first skin's", "", "a .hmesh holds one skeleton; their meshes are static (bind pose)",
              other_skeletons.size());

  // Which meshes become submeshes, with which transform.
  std::vector<sub_build> subs;
  std::uint64_t non_triangle = 0, unplaced = 0, skinned_instances = 0, morphs = 0, uv1 = 0, colours = 0, empty = 0;
  std::vector<char> placed(sc.meshes.size(), 0), skinned_done(sc.meshes.size(), 0);
  auto add_sub = [&](std::uint32_t mi, const mat4& world) {
    const convert::mesh& m = sc.meshes[mi];
    if (m.primitive != convert::topology::triangle_list) {
      non_triangle += m.indices.size() / (m.primitive == convert::topology::line_list ? 2 : 1);
      return;
    }
    if (m.indices.empty()) {
      ++empty;
      return;
    }
    const bool skinned = m.skin != no_ref && sc.skins[m.skin].skeleton == skeleton && !m.joints.empty();
    if (skinned && skinned_done[mi]) {
      ++skinned_instances;
      return;
    }
    skinned_done[mi] = skinned ? 1 : 0;
    if (!m.morphs.empty()) morphs += m.morphs.size();
    if (!m.uv1.empty() || !m.extra_uvs.empty()) ++uv1;
    if (!m.colors.empty()) ++colours;
    // Skinned meshes are never baked (glTF ignores a skinned node's transform).
    subs.push_back(gather(m, skinned ? identity_matrix : world, skinned ? &sc.skins[m.skin] : nullptr));
  };
  std::vector<mat4> world(sc.nodes.size(), identity_matrix);
  for (std::size_t n = 0; n < sc.nodes.size(); ++n) {
    const mat4 local = sc.nodes[n].local.matrix();
    world[n] = sc.nodes[n].parent == no_ref ? local : untold::multiply(world[sc.nodes[n].parent], local);
  }
  if (j.s.mesh_merge) {
    bool baked = false;
    for (std::size_t n = 0; n < sc.nodes.size(); ++n)
      for (std::uint32_t mi : sc.nodes[n].meshes) {
        placed[mi] = 1;
        baked |= !is_identity(world[n]);
        add_sub(mi, world[n]);
      }
    for (std::size_t mi = 0; mi < sc.meshes.size(); ++mi) unplaced += placed[mi] ? 0 : 1;
    rep.changed("node transforms", "", "baked into world-space vertices (mesh.merge: true)", baked ? 1 : 0);
  } else {
    for (std::uint32_t mi = 0; mi < sc.meshes.size(); ++mi) add_sub(mi, identity_matrix);
    bool any = false;
    for (const convert::node& n : sc.nodes) any |= !is_identity(n.local.matrix());
    rep.dropped("node transforms", "", "mesh.merge: false keeps geometry source-local; the hierarchy is not stored",
                any ? 1 : 0);
  }
  rep.dropped("line/point primitives", "", "a .hmesh holds triangles only", non_triangle);
  rep.dropped("meshes placed by no node", "", "mesh.merge: true emits what the node graph draws", unplaced);
  rep.dropped("further instances of a skinned mesh", "", "skinned meshes are emitted once, unbaked", skinned_instances);
  rep.dropped("morph targets", "", "a .hmesh has no morph data", morphs);
  rep.dropped("uv sets beyond uv0", "", "GpuVertex carries uv0 only (meshes)", uv1);
  rep.dropped("vertex colours", "", "GpuVertex has no colour (meshes)", colours);
  rep.info("meshes without triangles", "", "nothing to emit", empty);
  rep.dropped("lights", "", "a .hmesh has no lights", sc.lights.size());
  rep.dropped("cameras", "", "a .hmesh has no cameras", sc.cameras.size());

  const bool any_skin = std::any_of(subs.begin(), subs.end(), [](const sub_build& b) { return !b.skin.empty(); });
  std::uint64_t rigid = 0;
  for (sub_build& b : subs) {
    if (any_skin && b.skin.empty()) {
      rigid += b.vertex_count();
      b.skin.assign(b.vertex_count(), ac::skin_vertex{{0, 0, 0, 0}, {1, 0, 0, 0}});
    }
    optimise(b);
  }
  rep.changed("static vertices in a skinned mesh", "", "bound rigidly to joint 0 (SKIN covers every vertex)", rigid);

  // Materials: dense first-use slots, refs by the seed's naming rule.
  std::vector<std::uint32_t> source_material;
  for (const sub_build& b : subs) source_material.push_back(b.source_material);
  const ac::material_slots slots = ac::dense_material_slots(source_material);
  std::vector<std::string_view> names;
  for (const convert::material& m : sc.materials) names.push_back(m.name);
  const std::vector<std::uint64_t> mtrl = ac::material_hashes(source_ref, names, slots.used);

  // Textures: every image a used material references, colour space by first use.
  std::map<std::uint32_t, texture_use> uses;
  for (std::uint32_t mi : slots.used) {
    const convert::material& m = sc.materials[mi];
    const std::pair<const convert::texture_slot*, texture_mode> refs[] = {
        {&m.base_color_texture, texture_mode::color}, {&m.metallic_roughness_texture, texture_mode::linear_color},
        {&m.normal_texture, texture_mode::normal},     {&m.occlusion_texture, texture_mode::linear_color},
        {&m.emissive_texture, texture_mode::color}};
    for (const auto& [slot, mode] : refs) {
      if (!slot->used()) continue;
      texture_use& u = uses[slot->texture];
      const bool srgb = mode == texture_mode::color;
      if (u.first) {
        u = {srgb, mode, false};
      } else if (u.srgb != srgb) {
        rep.changed("texture colour space", "image " + std::to_string(slot->texture),
                    "used as sRGB and as linear data; the first use wins");
      }
    }
  }
  std::set<std::uint32_t> written_textures;
  const texture_encoder& encoder = j.s.texture_compress ? *ctx.compress_encoder : *ctx.raw_encoder;
  for (const auto& [ti, use] : uses) {
    const convert::texture& t = sc.textures[ti];
    const std::string where = "image " + std::to_string(ti) + (t.name.empty() ? "" : " '" + t.name + "'");
    std::vector<std::byte> file_bytes;
    if (!t.embedded.empty()) {
      file_bytes = t.embedded;
    } else {
      const fs::path f = texture_file(j.path, t);
      auto bytes = f.empty() ? std::nullopt : read_bytes(f);
      if (!bytes) {
        rep.dropped("texture", where, "its image cannot be read; the material slot is left empty");
        continue;
      }
      file_bytes = std::move(*bytes);
    }
    rgba8_image image;
    if (auto e = decode_image(file_bytes, image)) {
      rep.dropped("texture", where, *e + "; the material slot is left empty");
      continue;
    }
    std::vector<std::byte> ktx;
    if (auto e = encoder.encode(image, use.srgb, use.mode, ktx)) {
      rep.dropped("texture", where, "encode failed: " + *e);
      continue;
    }
    const std::string path = stem + "/tex_" + std::to_string(ti) + ".ktx2";
    if (!write_asset_output(ctx.output, path, ktx, r)) return;
    j.manifest.push_back({ac::hash_ref(ac::texture_ref(source_ref, ti)), static_cast<std::uint8_t>(use.srgb ? 1 : 0), path});
    written_textures.insert(ti);
    ++r.textures;
  }

  // .hmat rows in slot order.
  std::vector<ac::material> rows;
  for (std::uint32_t mi : slots.used) {
    const convert::material& m = sc.materials[mi];
    const std::string where = "material '" + m.name + "'";
    ac::material row;
    row.base_color = m.base_color;
    row.emissive = {m.emissive[0] * m.emissive_strength, m.emissive[1] * m.emissive_strength,
                    m.emissive[2] * m.emissive_strength};
    if (m.emissive_strength != 1.0f)
      rep.changed("emissive strength", where, "folded into the emissive factor");
    row.metallic = m.metallic;
    row.roughness = m.roughness;
    row.normal_scale = m.normal_scale;
    row.occlusion_strength = m.occlusion_strength;
    row.alpha_cutoff = m.alpha_cutoff;
    const auto alpha = m.alpha == convert::alpha_mode::mask    ? ac::alpha_mode::mask
                       : m.alpha == convert::alpha_mode::blend ? ac::alpha_mode::blend
                                                               : ac::alpha_mode::opaque;
    row.flags = ac::material::make_flags(m.double_sided, alpha);
    auto ref = [&](const convert::texture_slot& s, const char* slot_name) -> std::uint64_t {
      if (!s.used() || written_textures.count(s.texture) == 0) return 0;
      if (s.uv_set != 0)
        rep.dropped(std::string("uv set ") + std::to_string(s.uv_set) + " of " + slot_name, where,
                    "GpuVertex carries uv0 only; the texture is sampled with uv0");
      if (s.has_transform && (s.offset != std::array<float, 2>{0, 0} || s.scale != std::array<float, 2>{1, 1} || s.rotation != 0))
        rep.dropped(std::string("KHR_texture_transform of ") + slot_name, where, "a .hmat row has no uv transform");
      return ac::hash_ref(ac::texture_ref(source_ref, s.texture));
    };
    row.base_color_tex = ref(m.base_color_texture, "baseColor");
    row.metallic_roughness_tex = ref(m.metallic_roughness_texture, "metallicRoughness");
    row.normal_tex = ref(m.normal_texture, "normal");
    row.occlusion_tex = ref(m.occlusion_texture, "occlusion");
    row.emissive_tex = ref(m.emissive_texture, "emissive");
    if (!m.other_textures.empty())
      rep.dropped("non-PBR texture slots", where, "a .hmat row has five PBR slots", m.other_textures.size());
    rows.push_back(row);
  }

  // Geometry arrays.
  std::vector<std::byte> vertices;
  std::vector<std::uint32_t> indices, mlvr, lodi;
  std::vector<ac::meshlet> meshlets;
  std::vector<ac::meshlet_triangle> mltr;
  std::vector<ac::meshlet_bound> mlbn;
  std::vector<ac::submesh> submeshes;
  std::vector<ac::skin_vertex> skin;
  std::vector<ac::mesh_lod> lods;
  std::vector<float> all_positions;
  bool all_tangents = !subs.empty();
  for (std::size_t si = 0; si < subs.size(); ++si) {
    const sub_build& b = subs[si];
    const auto base = static_cast<std::uint32_t>(vertices.size() / gpu_vertex_stride);
    gpu_vertex_input in;
    in.positions = b.pos;
    in.normals = b.nrm;
    in.tangents = b.tan;
    in.uvs = b.uv;
    auto encoded = encode_gpu_vertices(in);
    if (!encoded) {
      r.state = asset_result::status::failed;
      const error& e = encoded.error();
      const std::string field = e.context.field != nullptr ? e.context.field : "";
      r.error = "submesh " + std::to_string(si) + ": " +
                (field == "positions" ? std::string("a position is not finite")
                 : field == "uvs"     ? std::string("a texture coordinate is not finite")
                                      : describe(e)) +
                (e.context.record_index != no_index ? " (vertex " + std::to_string(e.context.record_index) + ")" : "");
      return;
    }
    vertices.insert(vertices.end(), encoded->begin(), encoded->end());
    all_positions.insert(all_positions.end(), b.pos.begin(), b.pos.end());
    all_tangents &= b.has_tangents;
    skin.insert(skin.end(), b.skin.begin(), b.skin.end());

    ac::submesh sm;
    sm.first_index = static_cast<std::uint32_t>(indices.size());
    sm.index_count = static_cast<std::uint32_t>(b.idx.size());
    sm.base_vertex = base;
    sm.material_slot = slots.slot_of_submesh[si];
    sm.bounds = bounds_of(b.pos);
    for (std::uint32_t i : b.idx) indices.push_back(i + base);

    // Meshlets (LOD0 only).
    const std::size_t nv = b.vertex_count();
    meshlet_arrays ma;
    ma.meshlets = std::move(meshlets);
    ma.vertices = std::move(mlvr);
    ma.triangles = std::move(mltr);
    ma.bounds = std::move(mlbn);
    sm.first_meshlet = static_cast<std::uint32_t>(ma.meshlets.size());
    build_meshlets(b.idx, b.pos, base, ma);
    const std::size_t count = ma.meshlets.size() - sm.first_meshlet;
    sm.meshlet_count = static_cast<std::uint32_t>(count);
    meshlets = std::move(ma.meshlets);
    mlvr = std::move(ma.vertices);
    mltr = std::move(ma.triangles);
    mlbn = std::move(ma.bounds);
    r.meshlets += count;

    // LODs: the one policy of `cook` (simplify.hpp); assetc keeps a stalled
    // level as a row with index count 0.
    lod_options lod_policy;
    lod_policy.ratios.assign(lod_ratios.begin(), lod_ratios.end());
    for (const simplified_level& level : simplify_levels(b.idx, b.pos, nv, lod_policy)) {
      ac::mesh_lod lod;
      lod.first_index = static_cast<std::uint32_t>(lodi.size());
      lod.index_count = static_cast<std::uint32_t>(level.indices.size());
      for (const std::uint32_t i : level.indices) lodi.push_back(i + base);
      lods.push_back(lod);
    }
    submeshes.push_back(sm);
    r.triangles += b.idx.size() / 3;
    r.vertices += nv;
  }

  // Skeleton and clips.
  std::vector<ac::joint> joints;
  if (any_skin) {
    const convert::skeleton& k = sc.skeletons[skeleton];
    if (k.joints.size() > 65535) {
      r.state = asset_result::status::failed;
      r.error = "the skeleton has more than 65535 joints";
      return;
    }
    for (const convert::joint& jt : k.joints) {
      ac::joint out;
      out.inverse_bind = jt.inverse_bind;
      out.bind_translation = jt.rest.translation;
      out.bind_rotation = jt.rest.rotation;
      out.bind_scale = jt.rest.scale;
      out.parent = jt.parent == no_ref ? -1 : static_cast<std::int32_t>(jt.parent);
      joints.push_back(out);
    }
  }
  std::vector<std::vector<ac::anim_channel_input>> clip_channels;
  std::vector<ac::anim_clip_input> clips;
  std::uint64_t morph_channels = 0, node_channels = 0, empty_clips = 0;
  for (const convert::animation& a : sc.animations) {
    std::vector<ac::anim_channel_input> chans;
    for (const convert::animation_channel& c : a.channels) {
      if (c.path == convert::anim_path::weights) {
        ++morph_channels;
        continue;
      }
      if (!any_skin || c.skeleton != skeleton) {
        ++node_channels;
        continue;
      }
      ac::anim_channel_input in;
      in.joint = c.joint;
      in.path = c.path == convert::anim_path::translation ? ac::anim_path::translation
                : c.path == convert::anim_path::rotation  ? ac::anim_path::rotation
                                                          : ac::anim_path::scale;
      in.interp = c.interp == convert::interpolation::step ? ac::anim_interp::step : ac::anim_interp::linear;
      in.times = c.times;
      in.values = c.values;
      chans.push_back(in);
    }
    if (chans.empty()) {
      ++empty_clips;
      continue;
    }
    clip_channels.push_back(std::move(chans));
    clips.push_back({.name = a.name, .duration = a.duration, .channels = {}});
  }
  for (std::size_t i = 0; i < clips.size(); ++i) clips[i].channels = clip_channels[i];
  rep.dropped("morph weight channels", "", "a .hanim animates joints only", morph_channels);
  rep.dropped("channels on non-joint nodes", "", "a .hanim animates the skeleton's joints only", node_channels);
  rep.dropped("clips without joint channels", "", "nothing left for a .hanim", empty_clips);

  ac::hmesh_input in;
  in.vertices = vertices;
  in.indices = indices;
  in.flags = all_tangents ? ac::desc_flag_tangents : std::uint8_t{0};
  in.bounds = bounds_of(all_positions);
  in.meshlets = meshlets;
  in.meshlet_vertices = mlvr;
  in.meshlet_triangles = mltr;
  in.meshlet_bounds = mlbn;
  in.meshlet_max_vertices = meshlet_max_vertices;
  in.meshlet_max_triangles = meshlet_max_triangles;
  in.materials = mtrl;
  in.submeshes = submeshes;
  if (any_skin) {
    in.skin = skin;
    in.skeleton = joints;
  }
  in.lod_count = submeshes.empty() ? 0 : static_cast<std::uint32_t>(lod_ratios.size());
  if (in.lod_count != 0) {
    in.lod_indices = lodi;
    in.lods = lods;
  }
  auto hmesh = ac::write_hmesh(in);
  if (!hmesh) {
    r.state = asset_result::status::failed;
    r.error = "cannot write the .hmesh: " + describe(hmesh.error());
    return;
  }
  auto hmat = ac::write_hmat(rows);
  if (!hmat) {
    r.state = asset_result::status::failed;
    r.error = "cannot write the .hmat: " + describe(hmat.error());
    return;
  }
  std::vector<std::pair<std::string, std::vector<std::byte>>> files;
  files.emplace_back(stem + ".hmesh", std::move(*hmesh));
  files.emplace_back(stem + ".hmat", std::move(*hmat));
  if (!clips.empty()) {
    auto hanim = ac::write_hanim(clips);
    if (!hanim) {
      r.state = asset_result::status::failed;
      r.error = "cannot write the .hanim: " + describe(hanim.error());
      return;
    }
    files.emplace_back(stem + ".hanim", std::move(*hanim));
  }
  for (const auto& [path, bytes] : files) {
    if (!write_asset_output(ctx.output, path, bytes, r)) return;
  }
  std::sort(r.outputs.begin(), r.outputs.end());
  r.state = asset_result::status::compiled;
}

// ---- image sources --------------------------------------------------------------------

void compile_image(context& ctx, job& j, byte_span source_bytes) {
  asset_result& r = j.result;
  rgba8_image image;
  if (auto e = decode_image(source_bytes, image)) {
    r.state = asset_result::status::failed;
    r.error = *e;
    return;
  }
  // assetc's suffixes: *.n.png normal, *.ao/.h/.r.png grayscale (linear); else colour (sRGB).
  const std::string stem = strip_ext(j.rel);
  std::string sub = lower_extension(fs::path(stem));
  texture_mode mode = texture_mode::color;
  if (sub == ".n") mode = texture_mode::normal;
  else if (sub == ".ao" || sub == ".h" || sub == ".r") mode = texture_mode::grayscale;
  const texture_encoder& encoder = j.s.texture_compress ? *ctx.compress_encoder : *ctx.raw_encoder;
  std::vector<std::byte> ktx;
  if (auto e = encoder.encode(image, mode == texture_mode::color, mode, ktx)) {
    r.state = asset_result::status::failed;
    r.error = "encode failed: " + *e;
    return;
  }
  const std::string path = stem + ".ktx2";
  if (!write_asset_output(ctx.output, path, ktx, r)) return;
  r.textures = 1;
  r.state = asset_result::status::compiled;
}

// ---- the cache ------------------------------------------------------------------------

using json = nlohmann::json;

json report_json(const convert::conversion_report& rep) {
  json a = json::array();
  for (const auto& e : rep.entries)
    a.push_back({{"severity", std::string(convert::name(e.severity))},
                 {"what", e.what},
                 {"where", e.where},
                 {"reason", e.reason},
                 {"count", e.count}});
  return a;
}

void report_from_json(const json& a, convert::conversion_report& rep) {
  for (const auto& e : a) {
    const std::string sev = e.value("severity", "dropped");
    const auto count = e.value("count", std::uint64_t{1});
    if (sev == "changed") rep.changed(e.value("what", ""), e.value("where", ""), e.value("reason", ""), count);
    else if (sev == "info") rep.info(e.value("what", ""), e.value("where", ""), e.value("reason", ""), count);
    else rep.dropped(e.value("what", ""), e.value("where", ""), e.value("reason", ""), count);
  }
}

constexpr const char* cache_name = ".assetc-cache";

json load_cache(const fs::path& output) {
  std::ifstream in(output / cache_name, std::ios::binary);
  if (!in) return json::object();
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("compiler", 0u) != compiler_version) return json::object();
  return j.value("assets", json::object());
}

std::string key_of(const job& j, const context& ctx, byte_span source_bytes) {
  const texture_encoder& enc = j.s.texture_compress ? *ctx.compress_encoder : *ctx.raw_encoder;
  const std::string settings_text = "untold-build " + std::to_string(compiler_version) + " encoder " +
                                    std::string(enc.name()) + " " + std::to_string(enc.version()) + " merge " +
                                    (j.s.mesh_merge ? "1" : "0") + " compress " + (j.s.texture_compress ? "1" : "0") +
                                    " source " + j.rel + "\n";
  return hex_digest({text_bytes(settings_text), source_bytes});
}

/// True (and j's results filled from the cache) when nothing changed.
bool replay(const json& entry, job& j, const context& ctx, const std::string& key) {
  if (!entry.is_object() || entry.value("key", "") != key) return false;
  std::error_code ec;
  for (const auto& d : entry.value("deps", json::array())) {
    const std::string p = d.value("path", "");
    const fs::path file = fs::path(p).is_absolute() ? fs::path(p) : ctx.options.input / p;
    auto bytes = read_bytes(file);
    if (!bytes || hex_digest({*bytes}) != d.value("sha256", "")) return false;
  }
  std::vector<std::string> outputs;
  for (const auto& o : entry.value("outputs", json::array())) {
    outputs.push_back(o.get<std::string>());
    if (!fs::is_regular_file(ctx.output / outputs.back(), ec)) return false;
  }
  j.result.outputs = std::move(outputs);
  for (const auto& m : entry.value("manifest", json::array()))
    j.manifest.push_back({m.value("hash", std::uint64_t{0}), m.value("colorspace", std::uint8_t{0}), m.value("path", "")});
  for (const auto& d : entry.value("deps", json::array())) j.deps.emplace_back(d.value("path", ""), d.value("sha256", ""));
  report_from_json(entry.value("report", json::array()), j.result.report);
  j.result.triangles = entry.value("triangles", std::uint64_t{0});
  j.result.vertices = entry.value("vertices", std::uint64_t{0});
  j.result.meshlets = entry.value("meshlets", std::uint64_t{0});
  j.result.textures = entry.value("textures", std::uint64_t{0});
  j.result.state = asset_result::status::cached;
  return true;
}

json cache_entry(const job& j) {
  json deps = json::array();
  for (const auto& [p, h] : j.deps) deps.push_back({{"path", p}, {"sha256", h}});
  json manifest = json::array();
  for (const auto& m : j.manifest) manifest.push_back({{"hash", m.hash}, {"colorspace", m.colorspace}, {"path", m.path}});
  return {{"key", j.key},
          {"deps", deps},
          {"outputs", j.result.outputs},
          {"manifest", manifest},
          {"report", report_json(j.result.report)},
          {"triangles", j.result.triangles},
          {"vertices", j.result.vertices},
          {"meshlets", j.result.meshlets},
          {"textures", j.result.textures}};
}

void run_job(context& ctx, job& j, const json& cache) {
  j.result.source = j.rel;
  try {
    auto bytes = read_bytes(j.path);
    if (!bytes) {
      j.result.state = asset_result::status::failed;
      j.result.error = "cannot read " + j.path.string();
      j.result.io_error = true;
      return;
    }
    j.key = key_of(j, ctx, *bytes);
    if (ctx.options.use_cache && cache.contains(j.rel) && replay(cache[j.rel], j, ctx, j.key)) return;
    if (j.kind == source_kind::mesh) compile_mesh(ctx, j);
    else compile_image(ctx, j, *bytes);
  } catch (const std::exception& e) {
    // Allocation failures and library exceptions end this asset, not the build.
    j.result.state = asset_result::status::failed;
    j.result.error = e.what();
  }
}

// ---- verification ---------------------------------------------------------------------

/// Re-opens every output (deep); the cross-file check needs the manifest,
/// so it runs only when assets.hman was written.
void verify_outputs(const fs::path& output, const std::vector<std::string>& paths, bool cross_check, build_result& out) {
  std::map<std::string, std::vector<std::byte>> files;
  for (const std::string& p : paths) {
    auto bytes = read_bytes(output / p);
    if (!bytes) {
      out.errors.push_back("verify: cannot read " + p);
      out.io_error = true;
      continue;
    }
    files.emplace(p, std::move(*bytes));
  }
  ac::open_options deep;
  deep.deep_checks = true;
  for (const auto& [p, bytes] : files) {
    const std::string ext = lower_extension(fs::path(p));
    std::optional<std::string> problem;
    if (ext == ".hmesh") {
      if (auto r = ac::open_hmesh(bytes, deep); !r) problem = r.error().describe();
    } else if (ext == ".hmat") {
      if (auto r = ac::open_hmat(bytes, deep); !r) problem = r.error().describe();
    } else if (ext == ".hman") {
      if (auto r = ac::open_hman(bytes, deep); !r) problem = r.error().describe();
    } else if (ext == ".hanim") {
      if (auto r = ac::open_hanim(bytes, deep); !r) problem = r.error().describe();
    } else if (ext == ".ktx2") {
      problem = check_ktx2(bytes);
    }
    if (problem) out.errors.push_back("verify: " + p + ": " + *problem);
    ++out.verified_files;
  }
  if (!cross_check) return;
  const ac::check_report check = ac::check_files(
      paths,
      [&files](std::string_view p) -> std::optional<byte_span> {
        const auto it = files.find(std::string(p));
        if (it == files.end()) return std::nullopt;
        return byte_span(it->second);
      },
      deep);
  for (const auto& pr : check.problems) out.errors.push_back("check: " + pr.file + ": " + pr.err.describe());
}

}  // namespace

void build_meshlets(std::span<const std::uint32_t> idx, std::span<const float> pos, std::uint32_t base, meshlet_arrays& out) {
  const std::size_t nv = pos.size() / 3;
  if (idx.empty()) return;
  const std::size_t max_meshlets = meshopt_buildMeshletsBound(idx.size(), meshlet_max_vertices, meshlet_max_triangles);
  std::vector<meshopt_Meshlet> ml(max_meshlets);
  std::vector<unsigned int> mv(max_meshlets * meshlet_max_vertices);
  std::vector<unsigned char> mt(max_meshlets * meshlet_max_triangles * 3);
  const std::size_t count = meshopt_buildMeshlets(ml.data(), mv.data(), mt.data(), idx.data(), idx.size(), pos.data(), nv,
                                                  3 * sizeof(float), meshlet_max_vertices, meshlet_max_triangles,
                                                  meshlet_cone_weight);
  for (std::size_t k = 0; k < count; ++k) {
    const meshopt_Meshlet& m = ml[k];
    const meshopt_Bounds bd = meshopt_computeMeshletBounds(&mv[m.vertex_offset], &mt[m.triangle_offset], m.triangle_count,
                                                           pos.data(), nv, 3 * sizeof(float));
    ac::meshlet o;
    o.vertex_offset = static_cast<std::uint32_t>(out.vertices.size());
    o.vertex_count = m.vertex_count;
    o.triangle_offset = static_cast<std::uint32_t>(out.triangles.size());
    o.triangle_count = m.triangle_count;
    out.meshlets.push_back(o);
    for (unsigned v = 0; v < m.vertex_count; ++v) out.vertices.push_back(mv[m.vertex_offset + v] + base);
    // meshoptimizer pads each meshlet's triangles to 4 bytes; MLTR is dense.
    for (unsigned t = 0; t < m.triangle_count; ++t)
      out.triangles.push_back(
          {{mt[m.triangle_offset + 3 * t], mt[m.triangle_offset + 3 * t + 1], mt[m.triangle_offset + 3 * t + 2]}});
    ac::meshlet_bound mb;
    mb.center = {bd.center[0], bd.center[1], bd.center[2]};
    mb.radius = bd.radius;
    mb.cone_axis = {bd.cone_axis[0], bd.cone_axis[1], bd.cone_axis[2]};
    mb.cone_cutoff = bd.cone_cutoff;
    out.bounds.push_back(mb);
  }
}

int build_result::exit_code(bool strict) const noexcept {
  bool failed = !errors.empty(), io = io_error;
  for (const asset_result& a : assets) {
    failed |= a.state == asset_result::status::failed;
    io |= a.io_error;
  }
  if (io) return 3;
  if (failed) return 1;
  if (strict && lost_anything()) return 1;
  return 0;
}

namespace {
build_result build_unguarded(const build_options& options);
}

build_result build(const build_options& options) {
  try {
    return build_unguarded(options);
  } catch (const std::exception& e) {
    // Filesystem and allocation failures outside a job end the build, not the process.
    build_result out;
    out.errors.push_back(std::string("build: ") + e.what());
    out.io_error = true;
    return out;
  }
}

namespace {
build_result build_unguarded(const build_options& options) {
  build_result out;
  context ctx{options, options.output, nullptr, nullptr, false};
  ctx.raw_encoder = make_raw_ktx2_encoder();
  ctx.compress_encoder = make_texture_encoder(true, ctx.fell_back);
  out.encoder = std::string(ctx.compress_encoder->name());
  std::error_code ec;
  if (!fs::is_directory(options.input, ec)) {
    out.errors.push_back(options.input.string() + ": not a directory");
    out.io_error = true;
    return out;
  }
  fs::create_directories(options.output, ec);
  if (ec) {
    out.errors.push_back("cannot create " + options.output.string() + ": " + ec.message());
    out.io_error = true;
    return out;
  }

  // Sources, sorted by relative path; the output tree is skipped when it lies inside the input.
  const fs::path input_abs = fs::absolute(options.input).lexically_normal();
  const fs::path output_abs = fs::absolute(options.output).lexically_normal();
  std::vector<job> jobs;
  for (auto it = fs::recursive_directory_iterator(input_abs, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec) && fs::equivalent(it->path(), output_abs, type_ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(type_ec)) continue;
    const source_kind k = kind_of(it->path());
    if (k == source_kind::none) continue;
    job j;
    j.path = it->path();
    j.rel = generic(it->path().lexically_relative(input_abs));
    j.kind = k;
    j.s = resolve_settings(options.cfg, options.preset, j.rel);
    jobs.push_back(std::move(j));
  }
  std::sort(jobs.begin(), jobs.end(), [](const job& a, const job& b) { return a.rel < b.rel; });

  // Two sources with one output stem (chair.glb and chair.obj) would overwrite each other.
  std::map<std::string, std::string> stems;
  for (const job& j : jobs) {
    const std::string key = strip_ext(j.rel) + (j.kind == source_kind::mesh ? ".hmesh" : ".ktx2");
    const auto [it, fresh] = stems.emplace(key, j.rel);
    if (!fresh) out.errors.push_back("output collision: " + it->second + " and " + j.rel + " both write " + key);
  }
  if (!out.errors.empty()) return out;

  const json cache = options.use_cache ? load_cache(options.output) : json::object();
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex progress_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      run_job(ctx, jobs[i], cache);
      const std::size_t d = ++done;
      if (options.progress) {
        std::lock_guard lock(progress_mutex);
        options.progress(d, jobs.size(), jobs[i].rel);
      }
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(options.jobs, static_cast<unsigned>(std::max<std::size_t>(1, jobs.size()))));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  // One global manifest, collision-checked by write_hman.
  std::vector<ac::manifest_entry> entries;
  std::vector<std::string> all_outputs;
  for (const job& j : jobs) {
    for (const manifest_item& m : j.manifest)
      entries.push_back({m.hash, static_cast<std::uint8_t>(ac::manifest_kind::texture), m.colorspace, m.path});
    if (j.result.state == asset_result::status::compiled || j.result.state == asset_result::status::cached)
      all_outputs.insert(all_outputs.end(), j.result.outputs.begin(), j.result.outputs.end());
  }
  bool any_failed = false;
  for (const job& j : jobs) any_failed |= j.result.state == asset_result::status::failed;
  if (ctx.fell_back) {
    bool compressing = false;
    for (const job& j : jobs) compressing |= j.s.texture_compress && j.result.textures > 0;
    if (compressing)
      out.notes.push_back("texture.compress: true asks for UASTC, which needs the Basis Universal encoder (not packaged): "
                          "every texture was written as raw R8G8B8A8 + Zstandard KTX2 (pixel-exact)");
  }
  if (!any_failed) {
    auto hman = ac::write_hman(entries);
    if (!hman) {
      out.errors.push_back("assets.hman: " + hman.error().describe());
    } else if (auto e = write_bytes(options.output / "assets.hman", *hman)) {
      out.errors.push_back(*e);
      out.io_error = true;
    } else {
      out.manifest_entries = ac::open_hman(*hman) ? ac::open_hman(*hman)->size() : 0;
      all_outputs.push_back("assets.hman");
    }
  } else {
    out.errors.push_back("assets.hman not written: an asset failed, so the manifest would be incomplete");
  }
  std::sort(all_outputs.begin(), all_outputs.end());
  {
    const auto dup = std::adjacent_find(all_outputs.begin(), all_outputs.end());
    if (dup != all_outputs.end()) out.errors.push_back("output collision: two assets wrote " + *dup);
  }

  // The cache: every asset that succeeded.
  if (options.use_cache) {
    json assets = json::object();
    for (const job& j : jobs)
      if (j.result.state == asset_result::status::compiled || j.result.state == asset_result::status::cached)
        assets[j.rel] = cache_entry(j);
    const json doc = {{"compiler", compiler_version}, {"assets", assets}};
    const std::string text = doc.dump(1, ' ', false, json::error_handler_t::replace);
    if (auto e = write_bytes(options.output / cache_name, text_bytes(text))) out.notes.push_back("cache not saved: " + *e);
  }

  if (options.pack && out.errors.empty() && !any_failed) {
    std::vector<std::vector<std::byte>> contents;
    contents.reserve(all_outputs.size());
    std::vector<ac::pack_file> files;
    for (const std::string& p : all_outputs) {
      auto bytes = read_bytes(options.output / p);
      if (!bytes) {
        out.errors.push_back("pack: cannot read " + p);
        out.io_error = true;
        break;
      }
      contents.push_back(std::move(*bytes));
    }
    if (out.errors.empty()) {
      for (std::size_t i = 0; i < all_outputs.size(); ++i) files.push_back({all_outputs[i], contents[i], -1});
      auto pack = ac::write_hpack(files);
      fs::path target = output_abs;
      target = target.parent_path() / (target.filename().string() + ".hpack");
      if (!pack) {
        out.errors.push_back("pack: " + pack.error().describe());
      } else if (auto e = write_bytes(target, *pack)) {
        out.errors.push_back(*e);
        out.io_error = true;
      } else {
        out.pack_file = target;
        out.pack_bytes = pack->size();
        if (options.verify) {
          auto opened = ac::open_hpack(*pack, ac::open_options{.limits = {}, .deep_checks = true});
          if (!opened) out.errors.push_back("verify: " + target.filename().string() + ": " + opened.error().describe());
          else if (opened->entries().size() != all_outputs.size())
            out.errors.push_back("verify: the pack does not hold every output");
        }
      }
    }
  }

  if (options.verify) {
    const bool manifest = std::binary_search(all_outputs.begin(), all_outputs.end(), std::string("assets.hman"));
    verify_outputs(options.output, all_outputs, manifest && out.errors.empty(), out);
  }
  for (job& j : jobs) out.assets.push_back(std::move(j.result));
  return out;
}
}  // namespace

}  // namespace assetc_build

}  // namespace untold::tools
