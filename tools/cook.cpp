#include "cook.hpp"
#include "import_assimp.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

#include <assimp/GltfMaterial.h>
#include <assimp/Importer.hpp>
#include <assimp/ProgressHandler.hpp>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <meshoptimizer.h>

#include <untold/io.hpp>
#include <untold/validate.hpp>
#include <untold/vertex.hpp>

#include "image_info.hpp"

namespace fs = std::filesystem;

namespace untold::tools {

namespace {

// ---- small helpers ------------------------------------------------------------------

std::string utf8_name(std::string_view s) { return sanitized_utf8(s); }
std::string utf8_name(const aiString& s) { return utf8_name(std::string_view(s.C_Str(), s.length)); }

/// assimp's aiMatrix4x4 is row-major (a1..a4 is the first row); .untold is
/// column-major: element (row r, column c) at c * 4 + r.
mat4 column_major(const aiMatrix4x4& m) {
  mat4 out{};
  for (unsigned r = 0; r < 4; ++r)
    for (unsigned c = 0; c < 4; ++c) out[c * 4 + r] = m[r][c];
  return out;
}

struct vec3 {
  float x = 0, y = 0, z = 0;
};
vec3 sub(vec3 a, vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
vec3 scale(vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
float dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
vec3 cross(vec3 a, vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
bool usable(vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z) && dot(v, v) > 1e-12f; }
vec3 from(const aiVector3D& v) { return {v.x, v.y, v.z}; }

/// A unit tangent orthogonal to n (for meshes without UVs, or where
/// assimp's tangent is degenerate).
vec3 any_tangent(vec3 n) {
  const vec3 axis = std::fabs(n.x) < 0.9f ? vec3{1, 0, 0} : vec3{0, 1, 0};
  const vec3 t = sub(axis, scale(n, dot(n, axis)));
  return usable(t) ? t : vec3{1, 0, 0};
}

// ---- progress ------------------------------------------------------------------------

class import_progress final : public Assimp::ProgressHandler {
 public:
  explicit import_progress(std::function<void(std::string_view, float)> report) : report_(std::move(report)) {}
  bool Update(float percentage) override {
    if (report_ && percentage >= 0) report_("import", std::clamp(percentage, 0.0f, 1.0f));
    return true;  // never abort
  }

 private:
  std::function<void(std::string_view, float)> report_;
};

// ---- geometry ------------------------------------------------------------------------

struct prepared_mesh {
  std::string name;
  std::uint32_t material = none;
  std::vector<std::byte> vertices;  // PBR_STATIC_V1
  std::vector<float> positions;     // xyz per vertex, for LOD simplification
  std::vector<std::uint32_t> indices;
};

/// Reorders vertices by first use in `indices` (meshoptimizer's fetch
/// order) or keeps their order, dropping unreferenced vertices either way.
void compact_vertices(prepared_mesh& m, bool fetch_order) {
  const std::size_t count = m.positions.size() / 3;
  std::vector<unsigned int> remap(count, ~0u);
  std::size_t unique = 0;
  if (fetch_order) {
    unique = meshopt_optimizeVertexFetchRemap(remap.data(), m.indices.data(), m.indices.size(), count);
  } else {
    std::vector<char> used(count, 0);
    for (const std::uint32_t i : m.indices) used[i] = 1;
    for (std::size_t v = 0; v < count; ++v)
      if (used[v]) remap[v] = static_cast<unsigned int>(unique++);
  }
  if (unique == count && !fetch_order) return;
  meshopt_remapIndexBuffer(m.indices.data(), m.indices.data(), m.indices.size(), remap.data());
  std::vector<std::byte> vertices(unique * pbr_vertex_stride);
  std::vector<float> positions(unique * 3);
  // meshopt_remapVertexBuffer skips entries whose remap is ~0 (unreferenced).
  meshopt_remapVertexBuffer(vertices.data(), m.vertices.data(), count, pbr_vertex_stride, remap.data());
  meshopt_remapVertexBuffer(positions.data(), m.positions.data(), count, 3 * sizeof(float), remap.data());
  m.vertices = std::move(vertices);
  m.positions = std::move(positions);
}

void optimize_mesh(prepared_mesh& m, bool optimize) {
  const std::size_t count = m.positions.size() / 3;
  if (optimize && !m.indices.empty())
    meshopt_optimizeVertexCache(m.indices.data(), m.indices.data(), m.indices.size(), count);
  compact_vertices(m, optimize);
}

/// Encodes one triangle mesh of the (post-processed) scene.
std::optional<std::string> prepare_mesh(const aiMesh& mesh, std::uint32_t material_count, bool optimize,
                                        prepared_mesh& out) {
  out.name = utf8_name(mesh.mName);
  out.material = mesh.mMaterialIndex < material_count ? mesh.mMaterialIndex : none;
  const std::size_t n = mesh.mNumVertices;
  for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
    const aiFace& face = mesh.mFaces[f];
    if (face.mNumIndices != 3) continue;  // points and lines are not stored
    for (unsigned k = 0; k < 3; ++k) {
      if (face.mIndices[k] >= n) return "face " + std::to_string(f) + " indexes past the vertex array";
      out.indices.push_back(face.mIndices[k]);
    }
  }
  if (out.indices.empty()) return std::nullopt;

  out.positions.resize(n * 3);
  std::vector<float> normals, tangents, uv0, uv1, colors;
  if (mesh.HasNormals()) normals.resize(n * 3);
  tangents.resize(n * 4);
  if (mesh.HasTextureCoords(0)) uv0.resize(n * 2);
  if (mesh.HasTextureCoords(1)) uv1.resize(n * 2);
  if (mesh.HasVertexColors(0)) colors.resize(n * 4);
  for (std::size_t i = 0; i < n; ++i) {
    const aiVector3D& p = mesh.mVertices[i];
    out.positions[3 * i + 0] = p.x;
    out.positions[3 * i + 1] = p.y;
    out.positions[3 * i + 2] = p.z;
    const vec3 normal = mesh.HasNormals() ? from(mesh.mNormals[i]) : vec3{0, 0, 1};
    if (!normals.empty()) {
      normals[3 * i + 0] = normal.x;
      normals[3 * i + 1] = normal.y;
      normals[3 * i + 2] = normal.z;
    }
    // Tangent: assimp's, made orthogonal to the normal; handedness from the
    // bitangent. Meshes without UVs get any tangent orthogonal to the normal.
    const vec3 n_unit = usable(normal) ? scale(normal, 1.0f / std::sqrt(dot(normal, normal))) : vec3{0, 0, 1};
    vec3 tangent = any_tangent(n_unit);
    float handedness = 1.0f;
    if (mesh.HasTangentsAndBitangents()) {
      const vec3 t = from(mesh.mTangents[i]);
      const vec3 ortho = sub(t, scale(n_unit, dot(n_unit, t)));
      if (usable(ortho)) {
        tangent = ortho;
        const vec3 b = from(mesh.mBitangents[i]);
        handedness = dot(cross(n_unit, ortho), b) < 0.0f ? -1.0f : 1.0f;
      }
    }
    tangents[4 * i + 0] = tangent.x;
    tangents[4 * i + 1] = tangent.y;
    tangents[4 * i + 2] = tangent.z;
    tangents[4 * i + 3] = handedness;
    if (!uv0.empty()) {
      uv0[2 * i + 0] = mesh.mTextureCoords[0][i].x;
      uv0[2 * i + 1] = mesh.mTextureCoords[0][i].y;
    }
    if (!uv1.empty()) {
      uv1[2 * i + 0] = mesh.mTextureCoords[1][i].x;
      uv1[2 * i + 1] = mesh.mTextureCoords[1][i].y;
    }
    if (!colors.empty()) {
      const aiColor4D& c = mesh.mColors[0][i];
      colors[4 * i + 0] = c.r;
      colors[4 * i + 1] = c.g;
      colors[4 * i + 2] = c.b;
      colors[4 * i + 3] = c.a;
    }
  }
  pbr_vertex_input input;
  input.positions = out.positions;
  input.normals = normals;
  input.tangents = tangents;
  input.uv0 = uv0;
  input.uv1 = uv1;
  input.colors = colors;
  auto encoded = encode_pbr_vertices(input);
  if (!encoded) {
    const error& e = encoded.error();
    std::string what = e.context.field != nullptr ? e.context.field : "vertex data";
    if (what == "positions") what = "non-finite position";
    else if (what == "uv0" || what == "uv1") what = "texture coordinate (" + what + ") that is not finite or exceeds 65504";
    if (e.context.record_index != no_index) what += " at vertex " + std::to_string(e.context.record_index);
    return "cannot encode: " + what;
  }
  out.vertices = std::move(*encoded);
  optimize_mesh(out, optimize);
  return std::nullopt;
}

/// A simplified copy of `m` with about `fraction` of its triangles.
prepared_mesh simplify(const prepared_mesh& m, double fraction, bool optimize) {
  prepared_mesh lod;
  lod.name = m.name;
  lod.material = m.material;
  lod.vertices = m.vertices;
  lod.positions = m.positions;
  const std::size_t target = std::max<std::size_t>(3, static_cast<std::size_t>(m.indices.size() / 3 * fraction) * 3);
  lod.indices.resize(m.indices.size());
  const std::size_t kept =
      meshopt_simplify(lod.indices.data(), m.indices.data(), m.indices.size(), m.positions.data(),
                       m.positions.size() / 3, 3 * sizeof(float), target, 0.05f, 0, nullptr);
  lod.indices.resize(kept);
  optimize_mesh(lod, optimize);
  return lod;
}

// ---- materials and textures -----------------------------------------------------------

struct texture_entry {
  std::string key;  // source identity, for de-duplication
  std::string name;
  std::string uri;
  texture_format format = texture_format::unknown;
  std::uint32_t flags = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

struct material_entry {
  material_desc desc;  // texture fields hold indices into the texture list
  std::string name;
};

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

/// Writes raw aiTexel (BGRA) texels as an uncompressed 32-bit TGA.
bool write_tga(const fs::path& path, const aiTexture& t) {
  std::ofstream out(path, std::ios::binary);
  unsigned char header[18] = {};
  header[2] = 2;  // uncompressed true colour
  header[12] = static_cast<unsigned char>(t.mWidth & 0xFF);
  header[13] = static_cast<unsigned char>(t.mWidth >> 8);
  header[14] = static_cast<unsigned char>(t.mHeight & 0xFF);
  header[15] = static_cast<unsigned char>(t.mHeight >> 8);
  header[16] = 32;
  header[17] = 0x28;  // top-left origin, 8 alpha bits
  out.write(reinterpret_cast<const char*>(header), sizeof header);
  for (std::size_t i = 0; i < std::size_t{t.mWidth} * t.mHeight; ++i) {
    const aiTexel& p = t.pcData[i];
    const char bgra[4] = {static_cast<char>(p.b), static_cast<char>(p.g), static_cast<char>(p.r), static_cast<char>(p.a)};
    out.write(bgra, 4);
  }
  return static_cast<bool>(out);
}

class scene_converter {
 public:
  scene_converter(const aiScene& scene, const cook_options& options, cook_report& report)
      : scene_(scene), options_(options), report_(report) {
    input_dir_ = fs::absolute(options.input).parent_path().lexically_normal();
    output_dir_ = fs::absolute(options.output).parent_path().lexically_normal();
    output_stem_ = options.output.stem().string();
  }

  /// Converts the materials that node-referenced triangle meshes use (call
  /// after prepare_meshes); unused ones, and their images, are left out.
  std::optional<std::string> convert_materials() {
    std::vector<char> used(scene_.mNumMaterials, 0);
    std::vector<const aiNode*> stack{scene_.mRootNode};
    while (!stack.empty()) {
      const aiNode* node = stack.back();
      stack.pop_back();
      for (unsigned k = 0; k < node->mNumMeshes; ++k) {
        const unsigned index = node->mMeshes[k];
        if (index < meshes_.size() && !meshes_[index].indices.empty() && meshes_[index].material != none)
          used[meshes_[index].material] = 1;
      }
      stack.insert(stack.end(), node->mChildren, node->mChildren + node->mNumChildren);
    }
    material_row_.assign(scene_.mNumMaterials, none);
    for (unsigned i = 0; i < scene_.mNumMaterials; ++i) {
      if (!used[i]) continue;
      auto m = convert_material(*scene_.mMaterials[i]);
      if (!m) return "material " + std::to_string(i) + ": " + *error_;
      material_row_[i] = static_cast<std::uint32_t>(materials_.size());
      materials_.push_back(std::move(*m));
    }
    return std::nullopt;
  }

  std::optional<std::string> prepare_meshes() {
    meshes_.resize(scene_.mNumMeshes);
    for (unsigned i = 0; i < scene_.mNumMeshes; ++i) {
      if (options_.progress) options_.progress("meshes", static_cast<float>(i) / static_cast<float>(scene_.mNumMeshes));
      const aiMesh& mesh = *scene_.mMeshes[i];
      if (auto e = prepare_mesh(mesh, scene_.mNumMaterials, options_.optimize, meshes_[i]))
        return "mesh " + std::to_string(i) + " '" + utf8_name(mesh.mName) + "': " + *e;
    }
    if (options_.progress) options_.progress("meshes", 1.0f);
    return std::nullopt;
  }

  /// Builds a file from the node tree with the given meshes (level 0 or a LOD).
  result<std::vector<std::byte>> build(file_type type, const std::vector<prepared_mesh>& meshes, cook_report* stats) {
    builder b{type};
    for (const texture_entry& t : textures_)
      b.add_texture({.name = t.name, .uri = t.uri, .format = t.format, .flags = t.flags, .width = t.width,
                     .height = t.height, .mip_count = t.width != 0 ? 1u : 0u});
    for (const material_entry& m : materials_) {
      material_desc d = m.desc;
      d.name = m.name;
      b.add_material(d);
    }
    // Preorder walk with an explicit stack: entity handles follow the walk,
    // and the builder stores meshes grouped by entity in that order.
    std::vector<std::pair<const aiNode*, std::uint32_t>> stack;
    if (scene_.mRootNode != nullptr) stack.emplace_back(scene_.mRootNode, none);
    std::uint32_t entity_count = 0, mesh_count = 0;
    std::uint64_t vertex_count = 0, triangle_count = 0;
    while (!stack.empty()) {
      const auto [node, parent] = stack.back();
      stack.pop_back();
      const std::string name = utf8_name(node->mName);
      const std::uint32_t entity =
          b.add_entity({.name = name, .parent = parent, .local_transform = column_major(node->mTransformation)});
      ++entity_count;
      for (unsigned k = 0; k < node->mNumMeshes; ++k) {
        const unsigned index = node->mMeshes[k];
        if (index >= meshes.size() || meshes[index].indices.empty()) continue;
        const prepared_mesh& m = meshes[index];
        const std::uint32_t material = m.material == none ? none : material_row_[m.material];
        b.add_mesh({.entity = entity, .name = m.name, .material = material, .vertices = m.vertices,
                    .indices = m.indices});
        ++mesh_count;
        vertex_count += m.vertices.size() / pbr_vertex_stride;
        triangle_count += m.indices.size() / 3;
      }
      for (unsigned c = node->mNumChildren; c-- > 0;) stack.emplace_back(node->mChildren[c], entity);
    }
    if (stats != nullptr) {
      stats->entities = entity_count;
      stats->meshes = mesh_count;
      stats->materials = static_cast<std::uint32_t>(materials_.size());
      stats->textures = static_cast<std::uint32_t>(textures_.size());
      stats->vertices = vertex_count;
      stats->triangles = triangle_count;
    }
    write_options w;
    w.compression = options_.compression;
    return b.finish(w);
  }

  [[nodiscard]] const std::vector<prepared_mesh>& meshes() const noexcept { return meshes_; }

 private:
  std::optional<material_entry> convert_material(const aiMaterial& mat) {
    material_entry m;
    material_desc& d = m.desc;
    aiString name;
    if (mat.Get(AI_MATKEY_NAME, name) == AI_SUCCESS) m.name = utf8_name(name);

    aiColor4D color;
    float value = 0;
    const bool pbr = mat.Get(AI_MATKEY_BASE_COLOR, color) == AI_SUCCESS;
    if (pbr) {
      d.base_color_factor = {color.r, color.g, color.b, color.a};
    } else if (mat.Get(AI_MATKEY_COLOR_DIFFUSE, color) == AI_SUCCESS) {
      d.base_color_factor = {color.r, color.g, color.b, 1.0f};
      if (mat.Get(AI_MATKEY_OPACITY, value) == AI_SUCCESS) d.base_color_factor[3] = value;
    }
    if (mat.Get(AI_MATKEY_COLOR_EMISSIVE, color) == AI_SUCCESS) {
      float strength = 1.0f;
      (void)mat.Get(AI_MATKEY_EMISSIVE_INTENSITY, strength);
      d.emissive_factor = {color.r * strength, color.g * strength, color.b * strength};
    }
    // glTF materials carry metallic/roughness; classic (Phong) ones become a
    // dielectric with roughness from the specular exponent.
    if (mat.Get(AI_MATKEY_METALLIC_FACTOR, value) == AI_SUCCESS) d.metallic_factor = value;
    else d.metallic_factor = 0.0f;
    if (mat.Get(AI_MATKEY_ROUGHNESS_FACTOR, value) == AI_SUCCESS) d.roughness_factor = value;
    else if (mat.Get(AI_MATKEY_SHININESS, value) == AI_SUCCESS && value > 0) d.roughness_factor = std::sqrt(2.0f / (value + 2.0f));
    if (mat.Get(AI_MATKEY_GLTF_TEXTURE_SCALE(aiTextureType_NORMALS, 0), value) == AI_SUCCESS) d.normal_scale = value;
    if (mat.Get(AI_MATKEY_GLTF_TEXTURE_STRENGTH(aiTextureType_LIGHTMAP, 0), value) == AI_SUCCESS) d.occlusion_strength = value;
    if (mat.Get(AI_MATKEY_GLTF_ALPHACUTOFF, value) == AI_SUCCESS) d.alpha_cutoff = value;
    for (float& f : d.base_color_factor) f = std::isfinite(f) ? f : 1.0f;

    const auto texture = [&](std::initializer_list<aiTextureType> types, std::uint32_t flags) -> std::optional<std::uint32_t> {
      for (const aiTextureType type : types) {
        aiString path;
        if (mat.GetTextureCount(type) == 0 || mat.GetTexture(type, 0, &path) != AI_SUCCESS || path.length == 0) continue;
        return texture_for(path, flags);
      }
      return none;
    };
    using namespace untold::texture_flags;
    const auto base = texture({aiTextureType_BASE_COLOR, aiTextureType_DIFFUSE}, srgb);
    const auto normal = texture({aiTextureType_NORMALS}, normal_map);
    const auto emissive = texture({aiTextureType_EMISSIVE}, texture_flags::emissive | srgb);
    const auto occlusion = texture({aiTextureType_LIGHTMAP, aiTextureType_AMBIENT_OCCLUSION}, texture_flags::occlusion);
    // glTF's metallicRoughness image: assimp reports it as METALNESS and
    // DIFFUSE_ROUGHNESS (and as UNKNOWN); roughness is in G, metallic in B.
    auto metallic = texture({aiTextureType_METALNESS}, 0);
    auto roughness = texture({aiTextureType_DIFFUSE_ROUGHNESS}, 0);
    const auto packed = texture({aiTextureType_UNKNOWN}, 0);
    if (!base || !normal || !emissive || !occlusion || !metallic || !roughness || !packed) return std::nullopt;
    if (*metallic == none) metallic = packed;
    if (*roughness == none) roughness = packed;
    d.base_color_texture = *base;
    d.normal_texture = *normal;
    d.emissive_texture = *emissive;
    d.occlusion_texture = *occlusion;
    d.metallic_texture = *metallic;
    d.roughness_texture = *roughness;
    if (*metallic != none && *metallic == *roughness) {
      d.roughness_channel = texture_channel::g;
      d.metallic_channel = texture_channel::b;
    }
    return m;
  }

  /// The texture list index for an assimp texture path (embedded "*N" or a
  /// file), adding it on first use; nullopt (error_ set) on a write failure.
  std::optional<std::uint32_t> texture_for(const aiString& path, std::uint32_t flags) {
    const std::string raw(path.C_Str(), path.length);
    texture_entry t;
    if (const aiTexture* embedded = scene_.GetEmbeddedTexture(raw.c_str())) {
      auto e = embedded_texture(*embedded, t);
      if (e) {
        error_ = *e;
        return std::nullopt;
      }
    } else {
      external_texture(raw, t);
    }
    for (std::uint32_t i = 0; i < textures_.size(); ++i) {
      if (textures_[i].key == t.key) {
        textures_[i].flags |= flags;
        return i;
      }
    }
    t.flags = flags;
    textures_.push_back(std::move(t));
    return static_cast<std::uint32_t>(textures_.size() - 1);
  }

  /// Embedded images have no file of their own: they are always written next
  /// to the output, as OUTSTEM_texN.EXT.
  std::optional<std::string> embedded_texture(const aiTexture& tex, texture_entry& t) {
    std::uint32_t index = 0;
    for (; index < scene_.mNumTextures; ++index)
      if (scene_.mTextures[index] == &tex) break;
    t.key = "embedded:" + std::to_string(index);
    for (const texture_entry& existing : textures_)
      if (existing.key == t.key) return std::nullopt;  // already written
    const bool compressed = tex.mHeight == 0;
    std::string ext = compressed ? utf8_name(std::string_view(tex.achFormatHint)) : "tga";
    if (ext.empty() || ext.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") != std::string::npos) ext = "bin";
    if (ext == "jpeg") ext = "jpg";
    const std::string file = output_stem_ + "_tex" + std::to_string(index) + "." + ext;
    const fs::path dest = output_dir_ / file;
    bool ok = false;
    if (compressed) {
      std::ofstream out(dest, std::ios::binary);
      out.write(reinterpret_cast<const char*>(tex.pcData), static_cast<std::streamsize>(tex.mWidth));
      ok = static_cast<bool>(out);
      if (auto size = sniff_image_size(std::as_bytes(std::span(reinterpret_cast<const char*>(tex.pcData), tex.mWidth)))) {
        t.width = size->width;
        t.height = size->height;
      }
    } else {
      ok = write_tga(dest, tex);
      t.width = tex.mWidth;
      t.height = tex.mHeight;
    }
    if (!ok) return "cannot write embedded image " + dest.string();
    report_.written.push_back(dest);
    const std::string original = utf8_name(std::string_view(tex.mFilename.C_Str(), tex.mFilename.length));
    t.name = !original.empty() && original.front() != '*' ? fs::path(original).stem().string()
                                                          : "texture" + std::to_string(index);
    t.uri = file;
    t.format = format_from_extension(ext);
    return std::nullopt;
  }

  void external_texture(std::string raw, texture_entry& t) {
    std::replace(raw.begin(), raw.end(), '\\', '/');
    if (raw.rfind("file://", 0) == 0) raw.erase(0, 7);
    fs::path source = fs::path(raw).is_absolute() ? fs::path(raw) : input_dir_ / raw;
    if (!fs::exists(source)) {
      const fs::path decoded = input_dir_ / percent_decode(raw);
      if (fs::exists(decoded)) source = decoded;
    }
    source = source.lexically_normal();
    t.key = source.generic_string();
    t.name = utf8_name(source.stem().string());
    t.format = format_from_extension(source.extension().string());
    for (const texture_entry& existing : textures_)
      if (existing.key == t.key) return;  // resolved already
    const bool exists = fs::is_regular_file(source);
    if (exists) {
      if (auto size = sniff_image_size(source)) {
        t.width = size->width;
        t.height = size->height;
      }
    }
    if (!exists) report_.warnings.push_back("texture '" + raw + "' not found (looked for " + source.string() + ")");
    if (options_.copy_textures) {
      std::string file = source.filename().string();
      // Different images with one file name get _1, _2, ... suffixes.
      for (int n = 1; std::any_of(textures_.begin(), textures_.end(), [&](const texture_entry& e) { return e.uri == file; }); ++n)
        file = source.stem().string() + "_" + std::to_string(n) + source.extension().string();
      const fs::path dest = output_dir_ / file;
      std::error_code ec;
      if (exists && !fs::equivalent(source, dest, ec)) {
        fs::copy_file(source, dest, fs::copy_options::overwrite_existing, ec);
        if (ec) report_.warnings.push_back("cannot copy " + source.string() + ": " + ec.message());
        else report_.written.push_back(dest);
      }
      t.uri = utf8_name(file);
      return;
    }
    const fs::path relative = source.lexically_relative(output_dir_);
    if (relative.empty()) {
      report_.warnings.push_back("texture " + source.string() + " has no path relative to the output; stored as is");
      t.uri = utf8_name(source.generic_string());
    } else {
      t.uri = utf8_name(relative.generic_string());
    }
  }

  const aiScene& scene_;
  const cook_options& options_;
  cook_report& report_;
  fs::path input_dir_, output_dir_;
  std::string output_stem_;
  std::vector<texture_entry> textures_;
  std::vector<material_entry> materials_;
  std::vector<std::uint32_t> material_row_;  // scene material -> row in materials_ (or none)
  std::vector<prepared_mesh> meshes_;  // one per scene mesh; material = scene index
  std::optional<std::string> error_;
};

fs::path lod_path(const fs::path& output, std::uint32_t level) {
  fs::path p = output;
  p.replace_filename(output.stem().string() + ".lod" + std::to_string(level) + output.extension().string());
  return p;
}

std::optional<std::string> write_output(const fs::path& path, const result<std::vector<std::byte>>& bytes,
                                        cook_report& report) {
  if (!bytes) return "cannot write " + path.string() + ": " + bytes.error().describe();
  errno = 0;
  if (auto s = write_file(path, *bytes); !s) {
    report.io_failure = true;
    // The system's reason when there is one (write_file keeps errno from the failing call).
    const int os_error = errno;
    return "cannot write '" + path.string() + "': " + (os_error != 0 ? std::strerror(os_error) : s.error().describe());
  }
  report.written.push_back(path);
  return std::nullopt;
}

}  // namespace

const aiScene* import_scene(Assimp::Importer& importer, const fs::path& path) {
  importer.SetPropertyBool(AI_CONFIG_PP_FD_REMOVE, true);
  importer.SetPropertyFloat(AI_CONFIG_PP_GSN_MAX_SMOOTHING_ANGLE, 80.0f);
  constexpr unsigned int flags = aiProcess_Triangulate | aiProcess_SortByPType | aiProcess_FindDegenerates |
                                 aiProcess_FindInvalidData | aiProcess_GenSmoothNormals | aiProcess_CalcTangentSpace |
                                 aiProcess_JoinIdenticalVertices | aiProcess_FlipUVs | aiProcess_ValidateDataStructure;
  return importer.ReadFile(path.string(), flags);
}

cook_report cook(const cook_options& options) {
  cook_report report;
  const auto fail = [&](std::string message) {
    report.error = std::move(message);
    return report;
  };
  std::error_code ec;
  if (!fs::is_regular_file(options.input, ec)) return fail(options.input.string() + ": no such file");
  if (options.output.empty()) return fail("no output path");
  const fs::path out_dir = fs::absolute(options.output).parent_path();
  fs::create_directories(out_dir, ec);
  if (ec) {
    report.io_failure = true;
    return fail("cannot create " + out_dir.string() + ": " + ec.message());
  }

  Assimp::Importer importer;
  if (options.progress) importer.SetProgressHandler(new import_progress(options.progress));  // the importer owns it
  const aiScene* scene = import_scene(importer, options.input);
  if (scene == nullptr) return fail(options.input.string() + ": cannot import: " + importer.GetErrorString());
  if (scene->mRootNode == nullptr) return fail(options.input.string() + ": the scene has no nodes");

  scene_converter converter(*scene, options, report);
  if (auto e = converter.prepare_meshes()) return fail(options.input.string() + ": " + *e);
  if (auto e = converter.convert_materials()) return fail(options.input.string() + ": " + *e);

  if (options.progress) options.progress("write", 0.0f);
  const auto bytes = converter.build(file_type::tile, converter.meshes(), &report);
  if (auto e = write_output(options.output, bytes, report)) return fail(*e);
  report.bytes = bytes->size();
  if (report.triangles == 0) report.warnings.push_back("the scene has no triangle geometry");
  if (options.progress) options.progress("write", 1.0f);

  for (std::uint32_t level = 1; level <= options.lod_count; ++level) {
    if (options.progress) options.progress("lod", static_cast<float>(level - 1) / static_cast<float>(options.lod_count));
    std::vector<prepared_mesh> lod;
    lod.reserve(converter.meshes().size());
    for (const prepared_mesh& m : converter.meshes())
      lod.push_back(m.indices.empty() ? prepared_mesh{} : simplify(m, std::ldexp(1.0, -static_cast<int>(level)), options.optimize));
    if (auto e = write_output(lod_path(options.output, level), converter.build(file_type::lod, lod, nullptr), report))
      return fail(*e);
  }
  if (options.progress && options.lod_count > 0) options.progress("lod", 1.0f);
  return report;
}

}  // namespace untold::tools
