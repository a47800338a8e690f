// bench/glb_writer.hpp - the same scene as a binary glTF 2.0 file (.glb), the
// input of the peer benchmarks (tinygltf, assimp).
//
// As an exporter writes it: one node per entity (matrix, children), one glTF
// mesh per entity that has meshes with one primitive per untold mesh,
// non-interleaved float32 POSITION (with min/max), NORMAL, TANGENT (w =
// handedness), TEXCOORD_0, uint16/uint32 indices exactly as in the .untold
// file, one bufferView per accessor (4-byte aligned), materials with
// pbrMetallicRoughness and normal textures, images by URI (not embedded, as
// the .untold file references textures by URI too).
#pragma once

#include "scene_generator.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace untold_bench {

namespace detail {

inline void append_number(std::string& out, double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  out.append(buf, r.ptr);
}

inline void append_floats(std::string& out, const float* v, std::size_t n) {
  out += '[';
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    append_number(out, v[i]);
  }
  out += ']';
}

/// Appends each piece to `out`: strings as they are, integers in decimal.
/// (Rather than "literal" + std::to_string(...), on which g++ 12's -Wrestrict misfires.)
template <class... Pieces>
void append(std::string& out, const Pieces&... pieces) {
  const auto one = [&out](const auto& piece) {
    if constexpr (std::is_integral_v<std::decay_t<decltype(piece)>>) {
      char buf[24];
      out.append(buf, std::to_chars(buf, buf + sizeof buf, piece).ptr);
    } else {
      out += piece;
    }
  };
  (one(pieces), ...);
}

inline void append_u32le(std::vector<std::byte>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFFu));
}

}  // namespace detail

/// The scene of `plan` as a .glb file.
[[nodiscard]] inline std::vector<std::byte> write_glb(const scene_plan& plan) {
  std::vector<std::byte> bin;
  std::string views, accessors;
  std::vector<std::string> primitives(plan.entities.size());  // per entity: its primitives' JSON
  std::uint32_t view_count = 0;

  // Appends `bytes` as a bufferView (4-byte aligned) and an accessor on it; returns the accessor index.
  const auto add_accessor = [&](const void* data, std::size_t bytes, std::uint32_t component_type,
                                std::size_t count, const char* type, std::uint32_t target, const float* min_max) {
    bin.resize((bin.size() + 3) & ~std::size_t{3});
    const std::size_t offset = bin.size();
    bin.resize(offset + bytes);
    std::memcpy(bin.data() + offset, data, bytes);
    detail::append(views, view_count ? "," : "", "{\"buffer\":0,\"byteOffset\":", offset, ",\"byteLength\":", bytes,
                   ",\"target\":", target, "}");
    detail::append(accessors, view_count ? "," : "", "{\"bufferView\":", view_count, ",\"componentType\":",
                   component_type, ",\"count\":", count, ",\"type\":\"", type, "\"");
    if (min_max) {
      accessors += ",\"min\":";
      detail::append_floats(accessors, min_max, 3);
      accessors += ",\"max\":";
      detail::append_floats(accessors, min_max + 3, 3);
    }
    accessors += '}';
    return view_count++;
  };

  for (std::uint32_t i = 0; i < plan.meshes.size(); ++i) {
    const mesh_plan& m = plan.meshes[i];
    const mesh_geometry g = make_geometry(plan, i);
    const std::size_t n = g.vertex_count();
    const float bounds[6] = {g.bounds.min[0], g.bounds.min[1], g.bounds.min[2],
                             g.bounds.max[0], g.bounds.max[1], g.bounds.max[2]};
    const std::uint32_t position = add_accessor(g.positions.data(), 12 * n, 5126, n, "VEC3", 34962, bounds);
    const std::uint32_t normal = add_accessor(g.normals.data(), 12 * n, 5126, n, "VEC3", 34962, nullptr);
    const std::uint32_t tangent = add_accessor(g.tangents.data(), 16 * n, 5126, n, "VEC4", 34962, nullptr);
    const std::uint32_t uv = add_accessor(g.uv0.data(), 8 * n, 5126, n, "VEC2", 34962, nullptr);
    std::uint32_t indices;
    if (m.index_type == untold::index_type::uint16) {
      const std::vector<std::uint16_t> narrow(g.indices.begin(), g.indices.end());
      indices = add_accessor(narrow.data(), 2 * narrow.size(), 5123, narrow.size(), "SCALAR", 34963, nullptr);
    } else {
      indices = add_accessor(g.indices.data(), 4 * g.indices.size(), 5125, g.indices.size(), "SCALAR", 34963, nullptr);
    }
    std::string& p = primitives[m.entity];
    detail::append(p, p.empty() ? "" : ",", "{\"attributes\":{\"POSITION\":", position, ",\"NORMAL\":", normal,
                   ",\"TANGENT\":", tangent, ",\"TEXCOORD_0\":", uv, "},\"indices\":", indices,
                   ",\"material\":", m.material, ",\"mode\":4}");
  }
  bin.resize((bin.size() + 3) & ~std::size_t{3});

  std::string json = "{\"asset\":{\"version\":\"2.0\",\"generator\":\"untold bench glb_writer\"},\"scene\":0,"
                     "\"scenes\":[{\"nodes\":[0]}],\"nodes\":[";
  std::vector<std::vector<std::uint32_t>> children(plan.entities.size());
  for (std::uint32_t e = 0; e < plan.entities.size(); ++e)
    if (plan.entities[e].parent != untold::none) children[plan.entities[e].parent].push_back(e);
  std::string meshes;
  std::uint32_t mesh_count = 0;
  for (std::uint32_t e = 0; e < plan.entities.size(); ++e) {
    detail::append(json, e ? "," : "", "{\"name\":\"", plan.entities[e].name, "\",\"matrix\":");
    detail::append_floats(json, plan.entities[e].local.data(), 16);
    for (std::size_t c = 0; c < children[e].size(); ++c)
      detail::append(json, c ? "," : ",\"children\":[", children[e][c], c + 1 == children[e].size() ? "]" : "");
    if (!primitives[e].empty()) {
      detail::append(json, ",\"mesh\":", mesh_count);
      detail::append(meshes, mesh_count++ ? "," : "", "{\"name\":\"", plan.entities[e].name, "\",\"primitives\":[",
                     primitives[e], "]}");
    }
    json += '}';
  }
  detail::append(json, "],\"meshes\":[", meshes, "],\"materials\":[");
  for (std::size_t k = 0; k < plan.materials.size(); ++k) {
    const material_plan& m = plan.materials[k];
    detail::append(json, k ? "," : "", "{\"name\":\"", m.name, "\",\"pbrMetallicRoughness\":{\"baseColorFactor\":");
    detail::append_floats(json, m.base_color.data(), 4);
    json += ",\"metallicFactor\":";
    detail::append_number(json, m.metallic);
    json += ",\"roughnessFactor\":";
    detail::append_number(json, m.roughness);
    detail::append(json, ",\"baseColorTexture\":{\"index\":", m.base_color_texture,
                   "},\"metallicRoughnessTexture\":{\"index\":", m.metallic_roughness_texture,
                   "}},\"normalTexture\":{\"index\":", m.normal_texture, "}}");
  }
  json += "],\"samplers\":[{\"magFilter\":9729,\"minFilter\":9987}],\"textures\":[";
  for (std::size_t t = 0; t < plan.textures.size(); ++t) detail::append(json, t ? "," : "", "{\"sampler\":0,\"source\":", t, "}");
  json += "],\"images\":[";
  for (std::size_t t = 0; t < plan.textures.size(); ++t)
    detail::append(json, t ? "," : "", "{\"name\":\"", plan.textures[t].name, "\",\"uri\":\"", plan.textures[t].uri, "\"}");
  detail::append(json, "],\"bufferViews\":[", views, "],\"accessors\":[", accessors,
                 "],\"buffers\":[{\"byteLength\":", bin.size(), "}]}");
  while (json.size() % 4) json += ' ';

  std::vector<std::byte> out;
  const std::size_t total = 12 + 8 + json.size() + 8 + bin.size();
  out.reserve(total);
  detail::append_u32le(out, 0x46546C67u);  // "glTF"
  detail::append_u32le(out, 2);
  detail::append_u32le(out, static_cast<std::uint32_t>(total));
  detail::append_u32le(out, static_cast<std::uint32_t>(json.size()));
  detail::append_u32le(out, 0x4E4F534Au);  // "JSON"
  const auto* j = reinterpret_cast<const std::byte*>(json.data());
  out.insert(out.end(), j, j + json.size());
  detail::append_u32le(out, static_cast<std::uint32_t>(bin.size()));
  detail::append_u32le(out, 0x004E4942u);  // "BIN\0"
  out.insert(out.end(), bin.begin(), bin.end());
  return out;
}

}  // namespace untold_bench
