// tools/pipeline/import_assimp.cpp - assimp -> neutral scene (see import_assimp.hpp).
#include "import_assimp.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>

#include <assimp/BaseImporter.h>
#include <assimp/DefaultIOSystem.h>
#include <assimp/Importer.hpp>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "image_info.hpp"
#include "inspect.hpp"
#include "vec3.hpp"

namespace fs = std::filesystem;

namespace untold::tools {

namespace {

using namespace untold::convert;

// ---- small helpers ------------------------------------------------------------------

std::string utf8(std::string_view s) { return sanitized_utf8(s); }
std::string utf8(const aiString& s) { return utf8(std::string_view(s.C_Str(), s.length)); }

std::string quoted(std::string_view kind, std::string_view name) {
  return std::string(kind) + " '" + std::string(name) + "'";
}

/// "#i", for things without a name (appended: "#" + std::to_string trips
/// GCC 12's -Wrestrict at -O3, a false positive).
std::string numbered(std::size_t i) { return std::string(1, '#').append(std::to_string(i)); }

/// assimp's aiMatrix4x4 is row-major; the model is column-major.
mat4 column_major(const aiMatrix4x4& m) {
  mat4 out{};
  for (unsigned r = 0; r < 4; ++r)
    for (unsigned c = 0; c < 4; ++c) out[c * 4 + r] = m[r][c];
  return out;
}

transform decompose_ai(const aiMatrix4x4& m, bool& lossy) {
  aiVector3D s, t;
  aiQuaternion q;
  m.Decompose(s, q, t);
  transform out;
  out.translation = {t.x, t.y, t.z};
  out.rotation = {q.x, q.y, q.z, q.w};
  out.scale = {s.x, s.y, s.z};
  // Shear (or a projective row) cannot be expressed as TRS: compare the recomposition.
  const mat4 back = out.matrix();
  const mat4 orig = column_major(m);
  float scale = 1.0f;
  for (float v : orig) scale = std::max(scale, std::fabs(v));
  lossy = false;
  for (std::size_t i = 0; i < 16; ++i)
    if (!(std::fabs(back[i] - orig[i]) <= 1e-4f * scale)) lossy = true;
  return out;
}

using namespace vec3;
v3 from(const aiVector3D& v) { return {v.x, v.y, v.z}; }

/// A raw assimp texel array (BGRA8) as an uncompressed, top-left origin 32-bit TGA.
std::vector<std::byte> texels_as_tga(const aiTexture& t) {
  std::vector<std::byte> out(18 + std::size_t{t.mWidth} * t.mHeight * 4);
  auto put = [&](std::size_t at, unsigned v) { out[at] = static_cast<std::byte>(v & 0xFFu); };
  put(2, 2);  // uncompressed true colour
  put(12, t.mWidth);
  put(13, t.mWidth >> 8);
  put(14, t.mHeight);
  put(15, t.mHeight >> 8);
  put(16, 32);
  put(17, 0x28);  // top-left origin, 8 alpha bits
  for (std::size_t i = 0; i < std::size_t{t.mWidth} * t.mHeight; ++i) {
    const aiTexel& p = t.pcData[i];
    put(18 + 4 * i + 0, p.b);
    put(18 + 4 * i + 1, p.g);
    put(18 + 4 * i + 2, p.r);
    put(18 + 4 * i + 3, p.a);
  }
  return out;
}

// ---- what assimp reads, for the dependency list ---------------------------------------

class recording_io final : public Assimp::DefaultIOSystem {
 public:
  explicit recording_io(std::vector<std::string>* opened) : opened_(opened) {}
  Assimp::IOStream* Open(const char* file, const char* mode) override {
    Assimp::IOStream* s = DefaultIOSystem::Open(file, mode);
    if (s != nullptr && file != nullptr) opened_->emplace_back(file);
    return s;
  }

 private:
  std::vector<std::string>* opened_;
};

// ---- the converter --------------------------------------------------------------------

class assimp_converter {
 public:
  assimp_converter(const aiScene& s, const fs::path& source, const model_import_options& o, model_import_result& r)
      : in_(s), source_(source), out_(r), sc_(r.scene), rep_(r.scene.report) {
    (void)o;  // generation and welding happen in assimp, before conversion
    source_dir_ = source.parent_path();
  }

  std::vector<char> had_normals, had_tangents;  // per mesh, before generation
  /// Per mesh and face: the face repeats an index in the source (before
  /// welding, which can make zero-area faces repeat one: those are kept).
  std::vector<std::vector<char>> repeated_in_source;

  void run() {
    sc_.name = utf8(fs::path(source_).stem().string());
    convert_nodes();
    convert_materials();
    convert_meshes();
    convert_skins();
    convert_animations();
    convert_lights();
    convert_cameras();
    report_scene_extras();
  }

 private:
  // -- nodes --

  void convert_nodes() {
    if (in_.mRootNode == nullptr) return;
    std::vector<std::pair<const aiNode*, std::uint32_t>> stack{{in_.mRootNode, no_ref}};
    std::uint64_t sheared = 0;
    while (!stack.empty()) {
      const auto [n, parent] = stack.back();
      stack.pop_back();
      const auto index = static_cast<std::uint32_t>(sc_.nodes.size());
      node out;
      out.name = utf8(n->mName);
      out.parent = parent;
      bool lossy = false;
      out.local = decompose_ai(n->mTransformation, lossy);
      if (lossy) ++sheared;
      for (unsigned k = 0; k < n->mNumMeshes; ++k) out.meshes.push_back(n->mMeshes[k]);
      sc_.nodes.push_back(std::move(out));
      ai_nodes_.push_back(n);
      world_.push_back(parent == no_ref ? n->mTransformation : world_[parent] * n->mTransformation);
      by_name_.emplace(sc_.nodes.back().name, index);  // first (preorder) wins
      for (unsigned c = n->mNumChildren; c-- > 0;) stack.emplace_back(n->mChildren[c], index);
    }
    rep_.changed("node transforms", "", "shear or projection cannot be expressed as translation/rotation/scale; decomposed",
                 sheared);
  }

  std::uint32_t node_named(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? no_ref : it->second;
  }

  // -- textures --

  void fill_embedded(const aiTexture& tex, texture& t) {
    if (tex.mHeight == 0) {
      const auto* p = reinterpret_cast<const std::byte*>(tex.pcData);
      t.embedded.assign(p, p + tex.mWidth);
      if (auto size = sniff_image_size(t.embedded)) {
        t.width = size->width;
        t.height = size->height;
      }
      t.format = format_from_extension(std::string(".") + tex.achFormatHint);
    } else {
      t.embedded = texels_as_tga(tex);
      t.width = tex.mWidth;
      t.height = tex.mHeight;
      t.format = texture_format::rgba8;
      rep_.info("embedded image", quoted("texture", utf8(tex.mFilename)), "raw texels carried as a 32-bit TGA");
    }
    t.mip_count = 1;
    const std::string original = utf8(tex.mFilename);
    t.name = !original.empty() && original.front() != '*' ? fs::path(original).stem().string() : "";
  }

  /// Resolves an image path relative to the source; t.uri relative to the source directory.
  void fill_external(std::string raw, texture& t) {
    std::replace(raw.begin(), raw.end(), '\\', '/');
    if (raw.rfind("file://", 0) == 0) raw.erase(0, 7);
    std::error_code ec;
    fs::path file = fs::path(raw).is_absolute() ? fs::path(raw) : source_dir_ / raw;
    if (!fs::is_regular_file(file, ec)) {
      const fs::path decoded = fs::path(raw).is_absolute() ? fs::path(percent_decoded(raw)) : source_dir_ / percent_decoded(raw);
      if (fs::is_regular_file(decoded, ec)) file = decoded;
    }
    file = file.lexically_normal();
    const fs::path rel = fs::path(raw).is_absolute() ? file : file.lexically_relative(source_dir_.lexically_normal());
    t.uri = utf8((rel.empty() ? file : rel).generic_string());
    t.name = utf8(file.stem().string());
    t.format = format_from_extension(file.extension().string());
    if (fs::is_regular_file(file, ec)) {
      out_.dependencies.push_back(file);
      if (auto size = sniff_image_size(file)) {
        t.width = size->width;
        t.height = size->height;
        t.mip_count = 1;
      }
    } else {
      rep_.dropped("image file", quoted("texture", t.uri), "not found next to the source");
    }
  }

  /// The scene texture an assimp texture path names, adding it on first use.
  std::uint32_t texture_for(const aiString& path) {
    const std::string raw(path.C_Str(), path.length);
    const auto [embedded, embedded_index] = in_.GetEmbeddedTextureAndIndex(raw.c_str());
    const std::string key = embedded != nullptr ? std::string(1, '*').append(std::to_string(embedded_index))
                                                : std::string("file:").append(raw);
    if (const auto it = texture_keys_.find(key); it != texture_keys_.end()) return it->second;
    texture t;
    if (embedded != nullptr) {
      fill_embedded(*embedded, t);
      if (t.name.empty()) t.name = "texture" + std::to_string(embedded_index);
    } else {
      fill_external(raw, t);
    }
    sc_.textures.push_back(std::move(t));
    const auto index = static_cast<std::uint32_t>(sc_.textures.size() - 1);
    texture_keys_.emplace(key, index);
    return index;
  }

  // -- materials --

  void convert_materials() {
    material_map_.assign(in_.mNumMaterials, no_ref);
    for (unsigned i = 0; i < in_.mNumMaterials; ++i) {
      material_map_[i] = static_cast<std::uint32_t>(sc_.materials.size());
      sc_.materials.push_back(convert_material(*in_.mMaterials[i], i));
    }
  }

  material convert_material(const aiMaterial& m, std::size_t index) {
    material out;
    aiString name;
    if (m.Get(AI_MATKEY_NAME, name) == AI_SUCCESS) out.name = utf8(name);
    const std::string where = quoted("material", out.name.empty() ? numbered(index) : out.name);

    aiColor4D color;
    float value = 0;
    int ivalue = 0;
    const bool pbr = m.Get(AI_MATKEY_BASE_COLOR, color) == AI_SUCCESS;
    if (pbr) {
      out.base_color = {color.r, color.g, color.b, color.a};
    } else {
      if (m.Get(AI_MATKEY_COLOR_DIFFUSE, color) == AI_SUCCESS) out.base_color = {color.r, color.g, color.b, 1.0f};
      if (m.Get(AI_MATKEY_OPACITY, value) == AI_SUCCESS) out.base_color[3] = value;
    }
    if (m.Get(AI_MATKEY_COLOR_EMISSIVE, color) == AI_SUCCESS) out.emissive = {color.r, color.g, color.b};
    if (m.Get(AI_MATKEY_EMISSIVE_INTENSITY, value) == AI_SUCCESS) out.emissive_strength = value;
    const bool has_metallic = m.Get(AI_MATKEY_METALLIC_FACTOR, value) == AI_SUCCESS;
    if (has_metallic) out.metallic = value;
    if (m.Get(AI_MATKEY_ROUGHNESS_FACTOR, value) == AI_SUCCESS) out.roughness = value;
    if (!pbr && !has_metallic) {
      // Phong/Lambert: a dielectric; roughness from the specular exponent.
      out.metallic = 0.0f;
      if (m.Get(AI_MATKEY_SHININESS, value) == AI_SUCCESS && value > 0) out.roughness = std::sqrt(2.0f / (value + 2.0f));
      rep_.changed("shading model", where, "classic (Phong) material converted to metallic-roughness");
    }
    // glTF's alpha mode, cutoff, normal scale and occlusion strength come from
    // the TinyGLTF importer; assimp's formats have only an opacity.
    if (out.base_color[3] < 1.0f) out.alpha = convert::alpha_mode::blend;
    if (m.Get(AI_MATKEY_TRANSMISSION_FACTOR, value) == AI_SUCCESS) out.transmission = value;
    if (m.Get(AI_MATKEY_TWOSIDED, ivalue) == AI_SUCCESS) out.double_sided = ivalue != 0;

    std::set<std::pair<int, unsigned>> used;  // (type, index) consumed
    auto slot = [&](std::initializer_list<aiTextureType> types, bool srgb) {
      texture_slot s;
      for (const aiTextureType type : types) {
        aiString path;
        if (m.GetTextureCount(type) == 0 || m.GetTexture(type, 0, &path) != AI_SUCCESS || path.length == 0) continue;
        if (s.used()) {
          // The same image under an alias type (glTF base colour is also DIFFUSE) is not a loss.
          const std::uint32_t other = texture_for(path);
          if (other == s.texture) used.insert({type, 0});
          continue;
        }
        used.insert({type, 0});
        s.texture = texture_for(path);
        if (m.Get(AI_MATKEY_UVWSRC(type, 0), ivalue) == AI_SUCCESS && ivalue >= 0) s.uv_set = static_cast<std::uint32_t>(ivalue);
        // Sampler wrap (glTF wrapS/wrapT; decal = a border colour outside [0, 1], no repetition either).
        const auto wrap = [](int mode) {
          return mode == aiTextureMapMode_Mirror ? convert::wrap_mode::mirror
                 : mode == aiTextureMapMode_Clamp || mode == aiTextureMapMode_Decal ? convert::wrap_mode::clamp
                                                                                     : convert::wrap_mode::repeat;
        };
        if (m.Get(AI_MATKEY_MAPPINGMODE_U(type, 0), ivalue) == AI_SUCCESS) s.wrap[0] = wrap(ivalue);
        if (m.Get(AI_MATKEY_MAPPINGMODE_V(type, 0), ivalue) == AI_SUCCESS) s.wrap[1] = wrap(ivalue);
        aiUVTransform tr;
        if (m.Get(AI_MATKEY_UVTRANSFORM(type, 0), tr) == AI_SUCCESS) {
          s.has_transform = true;
          s.scale = {tr.mScaling.x, tr.mScaling.y};
          s.rotation = tr.mRotation;
          s.offset = {tr.mTranslation.x, tr.mTranslation.y};
        }
        if (srgb) sc_.textures[s.texture].srgb = true;
      }
      return s;
    };
    out.base_color_texture = slot({aiTextureType_BASE_COLOR, aiTextureType_DIFFUSE}, true);
    out.metallic_roughness_texture =
        slot({aiTextureType_UNKNOWN, aiTextureType_METALNESS, aiTextureType_DIFFUSE_ROUGHNESS}, false);
    out.normal_texture = slot({aiTextureType_NORMALS}, false);
    out.occlusion_texture = slot({aiTextureType_LIGHTMAP, aiTextureType_AMBIENT_OCCLUSION}, false);
    out.emissive_texture = slot({aiTextureType_EMISSIVE, aiTextureType_EMISSION_COLOR}, true);

    // Every other texture (types without a PBR slot, second layers) is a loss.
    for (int type = aiTextureType_NONE + 1; type <= AI_TEXTURE_TYPE_MAX; ++type) {
      const unsigned count = m.GetTextureCount(static_cast<aiTextureType>(type));
      for (unsigned k = 0; k < count; ++k) {
        if (used.count({type, k}) != 0) continue;
        rep_.dropped(std::string("texture slot ") + aiTextureTypeToString(static_cast<aiTextureType>(type)), where,
                     "no place for it in the metallic-roughness material");
      }
    }
    // Properties with no place in the model (clearcoat, sheen, transmission, ...).
    static const std::set<std::string> carried = {
        "?mat.name", "$clr.diffuse", "$clr.base", "$mat.metallicFactor", "$mat.roughnessFactor", "$mat.shininess",
        "$clr.emissive", "$mat.twosided", "$mat.opacity",
        "$mat.shadingm", "$mat.emissiveIntensity", "$mat.illum", "$clr.transparent", "$mat.refracti",
        "$mat.anisotropyFactor", "$mat.bumpscaling", "$mat.reflectivity", "$mat.shinpercent", "$mat.blend",
        "$mat.wireframe", "$mat.transmission.factor"};
    static const std::set<std::string> lossy_phong = {"$clr.specular", "$clr.ambient", "$clr.reflective"};
    std::set<std::string> reported;
    for (unsigned p = 0; p < m.mNumProperties; ++p) {
      const std::string key = m.mProperties[p]->mKey.C_Str();
      if (key.rfind("$tex.", 0) == 0 || carried.count(key) != 0 || !reported.insert(key).second) continue;
      if (lossy_phong.count(key) != 0) {
        if (!is_black(m, key)) rep_.dropped("material property " + key, where, "no place for it in the metallic-roughness material");
        continue;
      }
      rep_.dropped("material property " + key, where, "no place for it in the metallic-roughness material");
    }
    return out;
  }

  static bool is_black(const aiMaterial& m, const std::string& key) {
    aiColor3D c;
    if (m.Get(key.c_str(), 0, 0, c) != AI_SUCCESS) return true;
    return c.r == 0 && c.g == 0 && c.b == 0;
  }

  // -- meshes --

  void convert_meshes() {
    sc_.meshes.resize(in_.mNumMeshes);
    for (unsigned i = 0; i < in_.mNumMeshes; ++i) convert_mesh(*in_.mMeshes[i], i, sc_.meshes[i]);
  }

  void convert_mesh(const aiMesh& a, unsigned index, mesh& out) {
    out.name = utf8(a.mName);
    const std::string where = quoted("mesh", out.name.empty() ? numbered(index) : out.name);
    out.material = a.mMaterialIndex < material_map_.size() ? material_map_[a.mMaterialIndex] : no_ref;
    const std::size_t n = a.mNumVertices;
    const unsigned types = a.mPrimitiveTypes;
    if ((types & aiPrimitiveType_TRIANGLE) != 0) out.primitive = topology::triangle_list;
    else if ((types & aiPrimitiveType_LINE) != 0) out.primitive = topology::line_list;
    else if ((types & aiPrimitiveType_POINT) != 0) out.primitive = topology::point_list;
    const unsigned corners = out.primitive == topology::triangle_list ? 3 : out.primitive == topology::line_list ? 2 : 1;
    if (out.primitive != topology::triangle_list)
      rep_.info(out.primitive == topology::line_list ? "line primitives" : "point primitives", where,
                "carried as " + std::string(name(out.primitive)), a.mNumFaces);

    std::uint64_t repeated = 0, other = 0, welded_degenerate = 0, not_finite = 0;
    out.indices.reserve(std::size_t{a.mNumFaces} * corners);
    for (unsigned f = 0; f < a.mNumFaces; ++f) {
      const aiFace& face = a.mFaces[f];
      if (face.mNumIndices != corners) {
        ++other;
        continue;
      }
      bool bad = false;
      for (unsigned k = 0; k < corners; ++k) bad |= face.mIndices[k] >= n;
      if (bad) {
        ++other;
        continue;
      }
      bool finite_corners = true;
      for (unsigned k = 0; k < corners; ++k) finite_corners &= finite(from(a.mVertices[face.mIndices[k]]));
      if (!finite_corners) {
        ++not_finite;
        continue;
      }
      const bool repeats = corners == 3 && (face.mIndices[0] == face.mIndices[1] || face.mIndices[1] == face.mIndices[2] ||
                                            face.mIndices[0] == face.mIndices[2]);
      const bool source_repeats = index < repeated_in_source.size() && f < repeated_in_source[index].size()
                                      ? repeated_in_source[index][f] != 0
                                      : repeats;
      if (source_repeats) {
        ++repeated;  // zero-area triangles with distinct indices in the source are kept
        continue;
      }
      welded_degenerate += repeats ? 1 : 0;
      for (unsigned k = 0; k < corners; ++k) out.indices.push_back(face.mIndices[k]);
    }
    rep_.dropped("triangles with a repeated index", where, "degenerate: they cover no pixel", repeated);
    rep_.info("zero-area triangles", where, "distinct indices in the source, one vertex after welding: kept",
              welded_degenerate);
    rep_.dropped("faces", where, "primitive of another size in the mesh or an index past the vertices", other);
    rep_.dropped("faces with a non-finite position", where, "a corner's position is infinite or NaN", not_finite);
    if (out.indices.empty() && a.mNumFaces > 0) return;  // nothing kept: no vertices either (empty indices mean 0..n-1)

    out.positions.resize(n * 3);
    for (std::size_t v = 0; v < n; ++v) {
      // Non-finite positions are used by no kept face (dropped above): stored as the origin.
      const bool ok = finite(from(a.mVertices[v]));
      out.positions[3 * v + 0] = ok ? a.mVertices[v].x : 0.0f;
      out.positions[3 * v + 1] = ok ? a.mVertices[v].y : 0.0f;
      out.positions[3 * v + 2] = ok ? a.mVertices[v].z : 0.0f;
    }
    std::uint64_t bad_normals = 0, bad_tangents = 0;
    if (a.HasNormals()) {
      out.normals.resize(n * 3);
      for (std::size_t v = 0; v < n; ++v) {
        v3 nv = from(a.mNormals[v]);
        if (!usable(nv)) {
          nv = {0, 0, 1};
          ++bad_normals;
        } else {
          nv = mul(nv, 1.0f / std::sqrt(dot(nv, nv)));
        }
        out.normals[3 * v + 0] = nv.x;
        out.normals[3 * v + 1] = nv.y;
        out.normals[3 * v + 2] = nv.z;
      }
      if (index < had_normals.size() && !had_normals[index])
        rep_.changed("normals", where, "generated (smooth) because the source has none");
    }
    if (a.HasNormals() && a.HasTangentsAndBitangents()) {
      out.tangents.resize(n * 4);
      for (std::size_t v = 0; v < n; ++v) {
        const v3 nv{out.normals[3 * v], out.normals[3 * v + 1], out.normals[3 * v + 2]};
        const v3 t = from(a.mTangents[v]);
        v3 ortho = sub(t, mul(nv, dot(nv, t)));
        float w = 1.0f;
        if (usable(ortho)) {
          ortho = mul(ortho, 1.0f / std::sqrt(dot(ortho, ortho)));
          const v3 b = from(a.mBitangents[v]);
          w = finite(b) && dot(cross(nv, ortho), b) < 0.0f ? -1.0f : 1.0f;
        } else {
          ortho = any_perpendicular(nv);
          ++bad_tangents;
        }
        out.tangents[4 * v + 0] = ortho.x;
        out.tangents[4 * v + 1] = ortho.y;
        out.tangents[4 * v + 2] = ortho.z;
        out.tangents[4 * v + 3] = w;
      }
      if (index < had_tangents.size() && !had_tangents[index])
        rep_.changed("tangents", where, "generated from uv0 because the source has none");
    }
    rep_.changed("normals", where, "not finite or zero length; replaced by +Z", bad_normals);
    rep_.changed("tangents", where, "degenerate (no usable uv0 gradient); replaced by a perpendicular", bad_tangents);

    for (unsigned set = 0; set < AI_MAX_NUMBER_OF_TEXTURECOORDS; ++set) {
      if (!a.HasTextureCoords(set)) continue;
      std::vector<float> uv(n * 2);
      for (std::size_t v = 0; v < n; ++v) {
        uv[2 * v + 0] = a.mTextureCoords[set][v].x;
        uv[2 * v + 1] = a.mTextureCoords[set][v].y;
      }
      if (a.mNumUVComponents[set] > 2)
        rep_.dropped("uv w component", where + " uv set " + std::to_string(set), "the model keeps 2D texture coordinates");
      if (set == 0) out.uv0 = std::move(uv);
      else if (set == 1) out.uv1 = std::move(uv);
      else out.extra_uvs.push_back(std::move(uv));
    }
    for (unsigned set = 0; set < AI_MAX_NUMBER_OF_COLOR_SETS; ++set) {
      if (!a.HasVertexColors(set)) continue;
      if (set > 0) {
        rep_.dropped("vertex colour set " + std::to_string(set), where, "the model keeps the first colour set");
        continue;
      }
      out.colors.resize(n * 4);
      for (std::size_t v = 0; v < n; ++v) {
        const aiColor4D& c = a.mColors[0][v];
        out.colors[4 * v + 0] = c.r;
        out.colors[4 * v + 1] = c.g;
        out.colors[4 * v + 2] = c.b;
        out.colors[4 * v + 3] = c.a;
      }
    }
    for (unsigned k = 0; k < a.mNumAnimMeshes; ++k) {
      const aiAnimMesh& am = *a.mAnimMeshes[k];
      morph_target t;
      t.name = utf8(am.mName);
      t.default_weight = am.mWeight;
      if (am.mNumVertices != n) {
        rep_.dropped("morph target", where, "its vertex count differs from the mesh's");
        continue;
      }
      auto deltas = [&](const aiVector3D* target, const aiVector3D* base, std::vector<float>& d) {
        if (target == nullptr || base == nullptr) return;
        d.resize(n * 3);
        for (std::size_t v = 0; v < n; ++v) {
          d[3 * v + 0] = target[v].x - base[v].x;
          d[3 * v + 1] = target[v].y - base[v].y;
          d[3 * v + 2] = target[v].z - base[v].z;
        }
      };
      // assimp stores morph targets as absolute attributes; the model wants deltas.
      deltas(am.mVertices, a.mVertices, t.position_deltas);
      deltas(am.mNormals, a.mNormals, t.normal_deltas);
      deltas(am.mTangents, a.mTangents, t.tangent_deltas);
      if (am.HasTextureCoords(0) || am.HasVertexColors(0))
        rep_.dropped("morph target uv/colour deltas", where, "the model keeps position, normal and tangent deltas");
      out.morphs.push_back(std::move(t));
    }
  }

  // -- skins and skeletons --

  void convert_skins() {
    // Bones name nodes; meshes that share a bone share a skeleton (union-find over nodes).
    std::vector<std::uint32_t> root(sc_.nodes.size());
    std::iota(root.begin(), root.end(), 0u);
    auto find = [&](std::uint32_t x) {
      while (root[x] != x) x = root[x] = root[root[x]];
      return x;
    };
    std::vector<std::vector<std::uint32_t>> bone_nodes(in_.mNumMeshes);
    std::vector<char> is_bone(sc_.nodes.size(), 0);
    for (unsigned i = 0; i < in_.mNumMeshes; ++i) {
      const aiMesh& a = *in_.mMeshes[i];
      for (unsigned b = 0; b < a.mNumBones; ++b) {
        const std::uint32_t nd = node_named(utf8(a.mBones[b]->mName));
        bone_nodes[i].push_back(nd);
        if (nd == no_ref) continue;
        is_bone[nd] = 1;
        if (!bone_nodes[i].empty() && bone_nodes[i].front() != no_ref) root[find(nd)] = find(bone_nodes[i].front());
      }
    }
    // Skeletons in order of their first joint node; joints in node preorder (parents first).
    std::map<std::uint32_t, std::uint32_t> skeleton_of_root;
    std::vector<std::uint32_t> joint_index(sc_.nodes.size(), no_ref);
    std::vector<std::uint32_t> skeleton_of_node(sc_.nodes.size(), no_ref);
    for (std::uint32_t nd = 0; nd < sc_.nodes.size(); ++nd) {
      if (!is_bone[nd]) continue;
      const std::uint32_t r = find(nd);
      auto [it, fresh] = skeleton_of_root.emplace(r, static_cast<std::uint32_t>(sc_.skeletons.size()));
      if (fresh) {
        skeleton k;
        k.name = sc_.nodes[nd].name;
        k.node = sc_.nodes[nd].parent;
        sc_.skeletons.push_back(std::move(k));
      }
      skeleton& k = sc_.skeletons[it->second];
      joint j;
      j.name = sc_.nodes[nd].name;
      // Parent: the nearest ancestor that is a joint of this skeleton.
      std::uint32_t p = sc_.nodes[nd].parent;
      while (p != no_ref && !(is_bone[p] && find(p) == r)) p = sc_.nodes[p].parent;
      j.parent = p == no_ref ? no_ref : joint_index[p];
      if (p == sc_.nodes[nd].parent) {
        j.rest = sc_.nodes[nd].local;
      } else {
        aiMatrix4x4 rel = world_[nd];
        if (p != no_ref) {
          aiMatrix4x4 inv = world_[p];
          inv.Inverse();
          rel = inv * world_[nd];
          rep_.changed("joint rest pose", quoted("joint", j.name), "composed across nodes that are not joints");
        }
        bool lossy = false;
        j.rest = decompose_ai(rel, lossy);
      }
      joint_index[nd] = static_cast<std::uint32_t>(k.joints.size());
      skeleton_of_node[nd] = it->second;
      k.joints.push_back(std::move(j));
    }
    // Skins: one per distinct (skeleton, palette); inverse binds from the bones.
    std::map<std::pair<std::uint32_t, std::vector<std::uint32_t>>, std::uint32_t> skin_ids;
    std::vector<std::vector<char>> ibm_set(sc_.skeletons.size());
    for (std::size_t s = 0; s < sc_.skeletons.size(); ++s) ibm_set[s].assign(sc_.skeletons[s].joints.size(), 0);
    for (unsigned i = 0; i < in_.mNumMeshes; ++i) {
      const aiMesh& a = *in_.mMeshes[i];
      if (a.mNumBones == 0) continue;
      mesh& m = sc_.meshes[i];
      const std::string where = quoted("mesh", m.name.empty() ? numbered(i) : m.name);
      if (m.positions.empty()) {
        rep_.dropped("skinning", where, "the mesh keeps no faces");
        continue;
      }
      std::uint32_t sk = no_ref;
      for (std::uint32_t nd : bone_nodes[i])
        if (nd != no_ref) {
          sk = skeleton_of_node[nd];
          break;
        }
      if (sk == no_ref || a.mNumBones > 65535) {
        rep_.dropped("skinning", where, sk == no_ref ? "no bone names a node" : "more than 65535 bones");
        continue;
      }
      std::vector<std::uint32_t> palette;
      std::vector<std::uint32_t> bone_slot(a.mNumBones, no_ref);
      for (unsigned b = 0; b < a.mNumBones; ++b) {
        const std::uint32_t nd = bone_nodes[i][b];
        if (nd == no_ref) {
          rep_.dropped("bone", quoted("bone", utf8(a.mBones[b]->mName)), "names no node; its weights are dropped");
          continue;
        }
        const std::uint32_t j = joint_index[nd];
        const mat4 ibm = column_major(a.mBones[b]->mOffsetMatrix);
        mat4& stored = sc_.skeletons[sk].joints[j].inverse_bind;
        if (!ibm_set[sk][j]) {
          stored = ibm;
          ibm_set[sk][j] = 1;
        } else if (stored != ibm) {
          rep_.changed("inverse bind matrix", quoted("joint", sc_.skeletons[sk].joints[j].name),
                       "meshes disagree; the first one is kept");
        }
        bone_slot[b] = static_cast<std::uint32_t>(palette.size());
        palette.push_back(j);
      }
      auto [it, fresh] = skin_ids.emplace(std::make_pair(sk, palette), static_cast<std::uint32_t>(sc_.skins.size()));
      if (fresh) sc_.skins.push_back({.skeleton = sk, .joints = palette});
      m.skin = it->second;
      // Per-vertex influences: the 4 largest, normalised.
      const std::size_t n = a.mNumVertices;
      std::vector<vertex_influences> influences(n);
      std::uint64_t invalid = 0;
      for (unsigned b = 0; b < a.mNumBones; ++b) {
        if (bone_slot[b] == no_ref) continue;
        const aiBone& bone = *a.mBones[b];
        for (unsigned w = 0; w < bone.mNumWeights; ++w) {
          const aiVertexWeight& vw = bone.mWeights[w];
          if (vw.mVertexId >= n) continue;
          if (!(vw.mWeight > 0.0f) || !std::isfinite(vw.mWeight)) {
            invalid += vw.mWeight != 0.0f ? 1 : 0;
            continue;
          }
          influences[vw.mVertexId].emplace_back(vw.mWeight, static_cast<std::uint16_t>(bone_slot[b]));
        }
      }
      const influence_summary kept = keep_four_largest(influences, m);
      rep_.dropped("joint influences beyond the 4 largest", where,
                   "4 per vertex; the rest renormalised (" + std::to_string(kept.vertices_over) + " vertices)", kept.dropped);
      rep_.changed("weightless vertices", where, "bound rigidly to the first joint of the palette", kept.weightless);
      rep_.dropped("negative or non-finite joint weights", where, "ignored", invalid);
    }
  }

  // -- animations --

  void convert_animations() {
    std::vector<std::uint32_t> node_skeleton(sc_.nodes.size(), no_ref), node_joint(sc_.nodes.size(), no_ref);
    for (std::uint32_t s = 0; s < sc_.skeletons.size(); ++s)
      for (std::uint32_t j = 0; j < sc_.skeletons[s].joints.size(); ++j) {
        const std::uint32_t nd = node_named(sc_.skeletons[s].joints[j].name);
        if (nd != no_ref && node_skeleton[nd] == no_ref) {
          node_skeleton[nd] = s;
          node_joint[nd] = j;
        }
      }
    for (unsigned ai = 0; ai < in_.mNumAnimations; ++ai) {
      const aiAnimation& a = *in_.mAnimations[ai];
      animation out;
      out.name = utf8(a.mName);
      const std::string where = quoted("clip", out.name.empty() ? numbered(ai) : out.name);
      double tps = a.mTicksPerSecond;
      if (!(tps > 0)) {
        tps = 25.0;  // assimp's documented default when the file gives none
        rep_.info("ticks per second", where, "unspecified; 25 assumed");
      }
      std::uint64_t unbound = 0;
      auto target = [&](animation_channel& c, std::uint32_t nd) {
        c.node = nd;
        c.skeleton = node_skeleton[nd];
        c.joint = node_joint[nd];
      };
      for (unsigned ci = 0; ci < a.mNumChannels; ++ci) {
        const aiNodeAnim& ch = *a.mChannels[ci];
        const std::string nodename = utf8(ch.mNodeName);
        const std::uint32_t nd = node_named(nodename);
        if (nd == no_ref) {
          ++unbound;
          continue;
        }
        auto add = [&](anim_path path, unsigned count, auto&& key) {
          if (count == 0) return;
          animation_channel c;
          target(c, nd);
          c.path = path;
          for (unsigned k = 0; k < count; ++k) key(k, c);
          out.channels.push_back(std::move(c));
        };
        add(anim_path::translation, ch.mNumPositionKeys, [&](unsigned k, animation_channel& c) {
          const aiVectorKey& key = ch.mPositionKeys[k];
          c.times.push_back(static_cast<float>(key.mTime / tps));
          c.values.insert(c.values.end(), {key.mValue.x, key.mValue.y, key.mValue.z});
        });
        add(anim_path::rotation, ch.mNumRotationKeys, [&](unsigned k, animation_channel& c) {
          const aiQuatKey& key = ch.mRotationKeys[k];
          c.times.push_back(static_cast<float>(key.mTime / tps));
          c.values.insert(c.values.end(), {key.mValue.x, key.mValue.y, key.mValue.z, key.mValue.w});
        });
        add(anim_path::scale, ch.mNumScalingKeys, [&](unsigned k, animation_channel& c) {
          const aiVectorKey& key = ch.mScalingKeys[k];
          c.times.push_back(static_cast<float>(key.mTime / tps));
          c.values.insert(c.values.end(), {key.mValue.x, key.mValue.y, key.mValue.z});
        });
      }
      for (unsigned ci = 0; ci < a.mNumMorphMeshChannels; ++ci) {
        const aiMeshMorphAnim& ch = *a.mMorphMeshChannels[ci];
        const std::string nodename = utf8(ch.mName);
        const std::uint32_t nd = node_named(nodename);
        if (nd == no_ref || ch.mNumKeys == 0) {
          unbound += nd == no_ref ? 1 : 0;
          continue;
        }
        unsigned targets = 0;
        for (unsigned k = 0; k < ch.mNumKeys; ++k)
          for (unsigned v = 0; v < ch.mKeys[k].mNumValuesAndWeights; ++v)
            targets = std::max(targets, ch.mKeys[k].mValues[v] + 1);
        animation_channel c;
        target(c, nd);
        c.skeleton = no_ref;  // weights animate the node's mesh, never a joint
        c.joint = no_ref;
        c.path = anim_path::weights;
        for (unsigned k = 0; k < ch.mNumKeys; ++k) {
          c.times.push_back(static_cast<float>(ch.mKeys[k].mTime / tps));
          std::vector<float> w(targets, 0.0f);
          for (unsigned v = 0; v < ch.mKeys[k].mNumValuesAndWeights; ++v)
            w[ch.mKeys[k].mValues[v]] = static_cast<float>(ch.mKeys[k].mWeights[v]);
          c.values.insert(c.values.end(), w.begin(), w.end());
        }
        out.channels.push_back(std::move(c));
      }
      rep_.dropped("animation channels", where, "their target names no node", unbound);
      rep_.dropped("mesh (vertex) animation channels", where, "the model has no vertex animation", a.mNumMeshChannels);
      float duration = static_cast<float>(a.mDuration / tps);
      for (const auto& c : out.channels)
        if (!c.times.empty()) duration = std::max(duration, c.times.back());
      out.duration = std::isfinite(duration) ? duration : 0.0f;
      sc_.animations.push_back(std::move(out));
    }
  }

  // -- lights and cameras --

  void convert_lights() {
    for (unsigned i = 0; i < in_.mNumLights; ++i) {
      const aiLight& l = *in_.mLights[i];
      light out;
      out.name = utf8(l.mName);
      out.node = node_named(out.name);
      const std::string where = quoted("light", out.name);
      switch (l.mType) {
        case aiLightSource_DIRECTIONAL: out.kind = light_kind::directional; break;
        case aiLightSource_POINT: out.kind = light_kind::point; break;
        case aiLightSource_SPOT: out.kind = light_kind::spot; break;
        case aiLightSource_AREA: out.kind = light_kind::area; break;
        default:
          rep_.dropped("light", where, "ambient or undefined light type");
          continue;
      }
      // assimp folds intensity into the colour: split it at the largest channel.
      const float peak = std::max({l.mColorDiffuse.r, l.mColorDiffuse.g, l.mColorDiffuse.b});
      out.intensity = peak > 0 ? peak : 0.0f;
      out.color = peak > 0 ? std::array<float, 3>{l.mColorDiffuse.r / peak, l.mColorDiffuse.g / peak, l.mColorDiffuse.b / peak}
                           : std::array<float, 3>{1, 1, 1};
      // assimp's cone angles are full angles; the model's are half angles.
      out.inner_cone = l.mAngleInnerCone * 0.5f;
      out.outer_cone = l.mAngleOuterCone * 0.5f;
      out.area_size = {l.mSize.x, l.mSize.y};
      if (l.mAttenuationLinear != 0 || l.mAttenuationQuadratic != 0)
        rep_.changed("light attenuation", where, "replaced by the inverse-square falloff of glTF lights");
      if (from(l.mPosition).x != 0 || from(l.mPosition).y != 0 || from(l.mPosition).z != 0)
        rep_.dropped("light position offset", where, "lights sit at their node's origin");
      if (out.node == no_ref) rep_.changed("light", where, "no node of that name; the light is unplaced");
      sc_.lights.push_back(out);
    }
  }

  void convert_cameras() {
    for (unsigned i = 0; i < in_.mNumCameras; ++i) {
      const aiCamera& c = *in_.mCameras[i];
      camera out;
      out.name = utf8(c.mName);
      out.node = node_named(out.name);
      const std::string where = quoted("camera", out.name);
      out.orthographic = c.mOrthographicWidth > 0;
      out.aspect = c.mAspect;
      // assimp's field of view is horizontal; the model's is vertical.
      out.yfov = c.mAspect > 0 ? 2.0f * std::atan(std::tan(c.mHorizontalFOV * 0.5f) / c.mAspect) : c.mHorizontalFOV;
      out.znear = c.mClipPlaneNear;
      out.zfar = c.mClipPlaneFar;
      if (out.orthographic) rep_.dropped("orthographic extent", where, "the model's cameras carry no magnification");
      if (from(c.mPosition).x != 0 || from(c.mPosition).y != 0 || from(c.mPosition).z != 0 ||
          from(c.mLookAt).x != 0 || from(c.mLookAt).y != 0 || from(c.mLookAt).z != -1)
        rep_.dropped("camera position/look-at offset", where, "cameras look down -Z from their node's origin");
      if (out.node == no_ref) rep_.changed("camera", where, "no node of that name; the camera is unplaced");
      sc_.cameras.push_back(out);
    }
  }

  void report_scene_extras() {
    if (in_.mMetaData != nullptr && in_.mMetaData->mNumProperties > 0)
      rep_.info("scene metadata", "", "not carried", in_.mMetaData->mNumProperties);
  }

  const aiScene& in_;
  fs::path source_;
  fs::path source_dir_;
  model_import_result& out_;
  scene& sc_;
  conversion_report& rep_;
  std::vector<const aiNode*> ai_nodes_;
  std::vector<aiMatrix4x4> world_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
  std::map<std::string, std::uint32_t> texture_keys_;
  std::vector<std::uint32_t> material_map_;
};

}  // namespace

namespace {

/// E-FORMAT-UNKNOWN for a file no assimp importer recognises: the rule id,
/// the file's first bytes and, when the importer its extension names failed
/// on it, that importer's reason.
std::string unrecognised(const fs::path& path, const std::string& reason) {
  std::byte head[8]{};
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(head), sizeof head);
  const auto n = static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0));
  const error e = make_error(errc::format_unknown);
  return path.string() + ": cannot import: " + std::string(e.rule_id()) + " " + std::string(e.name()) +
         ": unrecognised file: the first bytes (" + first_bytes(byte_span(head, n)) +
         ") are the magic of no format this tool reads, and no assimp importer recognises its content" +
         (reason.empty() ? std::string() : " (the reader of its extension says: " + reason + ")");
}

/// Whether one of assimp's importers recognises the file's content
/// (BaseImporter::CanRead with the signature check).
bool recognised_by_content(const Assimp::Importer& importer, const fs::path& path) {
  for (std::size_t i = 0; i < importer.GetImporterCount(); ++i)
    if (importer.GetImporter(i)->CanRead(path.string(), importer.GetIOHandler(), true)) return true;
  return false;
}

}  // namespace

model_import_result import_assimp(const fs::path& path, const model_import_options& options) {
  model_import_result r;
  try {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      r.error = path.string() + ": no such file";
      return r;
    }
    if (fs::file_size(path, ec) == 0 && !ec) {
      r.error = path.string() + ": cannot import: " + make_error(errc::io_empty_file).describe();
      return r;
    }
    std::vector<std::string> opened;
    Assimp::Importer importer;
    importer.SetIOHandler(new recording_io(&opened));  // the importer owns it
    importer.SetPropertyFloat(AI_CONFIG_PP_GSN_MAX_SMOOTHING_ANGLE, options.smoothing_angle_degrees);
    importer.SetPropertyFloat(AI_CONFIG_PP_CT_MAX_SMOOTHING_ANGLE, 45.0f);
    // Not FindDegenerates: zero-area triangles with distinct indices are kept.
    unsigned flags = aiProcess_SortByPType | aiProcess_FlipUVs | aiProcess_ValidateDataStructure;
    if (options.triangulate) flags |= aiProcess_Triangulate;
    // assimp picks the importer its extension names (without looking at the
    // content), else the first whose CanRead accepts the content. A file
    // neither way is E-FORMAT-UNKNOWN, not assimp's "No suitable reader";
    // one that only its extension named and whose reader failed is too
    // (an empty or foreign .mdl is not a Quake model).
    const std::string extension = path.extension().string();
    const bool claimed = !extension.empty() && importer.IsExtensionSupported(extension);
    if (!claimed && !recognised_by_content(importer, path)) {
      r.error = unrecognised(path, "");
      return r;
    }
    const aiScene* scene = importer.ReadFile(path.string(), flags);
    if (scene == nullptr) {
      r.error = claimed && !recognised_by_content(importer, path) ? unrecognised(path, importer.GetErrorString())
                                                                  : path.string() + ": cannot import: " +
                                                                        importer.GetErrorString();
      return r;
    }
    std::vector<char> had_normals(scene->mNumMeshes), had_tangents(scene->mNumMeshes);
    std::vector<std::vector<char>> repeated(scene->mNumMeshes);
    for (unsigned i = 0; i < scene->mNumMeshes; ++i) {
      const aiMesh& m = *scene->mMeshes[i];
      had_normals[i] = m.HasNormals() ? 1 : 0;
      had_tangents[i] = m.HasTangentsAndBitangents() ? 1 : 0;
      repeated[i].resize(m.mNumFaces);
      for (unsigned f = 0; f < m.mNumFaces; ++f) {
        const aiFace& face = m.mFaces[f];
        repeated[i][f] = face.mNumIndices == 3 && (face.mIndices[0] == face.mIndices[1] ||
                                                   face.mIndices[1] == face.mIndices[2] ||
                                                   face.mIndices[0] == face.mIndices[2]);
      }
    }
    unsigned generate = 0;
    if (options.generate_normals) generate |= aiProcess_GenSmoothNormals;
    if (options.generate_tangents) generate |= aiProcess_CalcTangentSpace;
    // Welding after generation: assimp generates on unwelded ("verbose") meshes only.
    if (options.weld) generate |= aiProcess_JoinIdenticalVertices;
    if (generate != 0) {
      scene = importer.ApplyPostProcessing(generate);
      if (scene == nullptr) {
        r.error = path.string() + ": post-processing failed: " + importer.GetErrorString();
        return r;
      }
    }
    if (scene->mRootNode == nullptr) {
      r.error = path.string() + ": the scene has no nodes";
      return r;
    }
    assimp_converter c(*scene, path, options, r);
    c.had_normals = std::move(had_normals);
    c.had_tangents = std::move(had_tangents);
    c.repeated_in_source = std::move(repeated);
    c.run();
    if (auto s = convert::validate_model(r.scene); !s) {
      r.error = path.string() + ": the imported scene is inconsistent: " + s.error().describe();
      return r;
    }
    for (const std::string& f : opened) {
      const fs::path p = fs::absolute(fs::path(f), ec).lexically_normal();
      if (!ec && fs::is_regular_file(p, ec)) r.dependencies.push_back(p);
    }
    for (fs::path& d : r.dependencies) d = fs::absolute(d, ec).lexically_normal();
    std::sort(r.dependencies.begin(), r.dependencies.end());
    r.dependencies.erase(std::unique(r.dependencies.begin(), r.dependencies.end()), r.dependencies.end());
  } catch (const std::exception& e) {
    r = {};
    r.error = path.string() + ": cannot import: " + e.what();
  }
  return r;
}

}  // namespace untold::tools
