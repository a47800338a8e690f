// tools/pipeline/gltf_export.cpp - scene -> glTF 2.0 through TinyGLTF's model
// and serializer (docs/convert.md, "glTF writer", says why TinyGLTF).
#include "gltf_export.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>
#include <tiny_gltf.h>

#include <untold/detail/checks.hpp>
#include <untold/io.hpp>

#include "files.hpp"

namespace untold::tools {
namespace {

using convert::no_ref;

constexpr std::uint64_t max_glb_bytes = std::numeric_limits<std::uint32_t>::max();

// ---- the binary buffer ---------------------------------------------------------------

/// Bytes of every accessor and embedded image, each view 4-byte aligned.
class buffer_builder {
 public:
  buffer_builder(tinygltf::Model& model, untold::budget& budget) : model_(model), budget_(budget) {}

  /// A buffer view over `bytes` (target 0: none, e.g. animation data and images).
  /// Charged to the budget first: once it is exhausted nothing more is
  /// added and `outcome` holds R-LIMITS (the caller checks it after each stage).
  int add_view(const void* data, std::size_t size, int target) {
    if (!outcome) return 0;
    if (auto charged = budget_.charge_memory(size + 3, "glTF binary buffer", errc::limit_exceeded); !charged) {
      outcome = charged;
      return 0;
    }
    while (bytes_.size() % 4 != 0) bytes_.push_back(0);
    tinygltf::BufferView view;
    view.buffer = 0;
    view.byteOffset = bytes_.size();
    view.byteLength = size;
    view.target = target;
    const auto* p = static_cast<const unsigned char*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
    model_.bufferViews.push_back(std::move(view));
    return static_cast<int>(model_.bufferViews.size() - 1);
  }

  /// `values` with every NaN or infinity replaced by 0 (glTF accessors hold
  /// finite floats only), each one counted in non_finite.
  std::span<const float> finite(std::span<const float> values) {
    if (untold::detail::all_finite(values)) return values;
    scratch_.assign(values.begin(), values.end());
    for (float& f : scratch_)
      if (!untold::detail::is_finite(f)) f = 0, ++non_finite;
    return scratch_;
  }

  std::uint64_t non_finite = 0;
  status outcome{};

  /// A float accessor of `count` elements of `components` floats (type: TINYGLTF_TYPE_*).
  int add_floats(std::span<const float> given, int type, std::size_t components, int target, bool min_max) {
    const std::span<const float> values = finite(given);
    tinygltf::Accessor a;
    a.bufferView = add_view(values.data(), values.size_bytes(), target);
    a.componentType = TINYGLTF_COMPONENT_TYPE_FLOAT;
    a.count = values.size() / components;
    a.type = type;
    if (min_max) {
      a.minValues.assign(components, std::numeric_limits<double>::infinity());
      a.maxValues.assign(components, -std::numeric_limits<double>::infinity());
      for (std::size_t i = 0; i < values.size(); ++i) {
        a.minValues[i % components] = std::min<double>(a.minValues[i % components], values[i]);
        a.maxValues[i % components] = std::max<double>(a.maxValues[i % components], values[i]);
      }
    }
    model_.accessors.push_back(std::move(a));
    return static_cast<int>(model_.accessors.size() - 1);
  }

  /// An integer accessor (indices, joints) of `count` elements.
  template <class T>
  int add_integers(std::span<const T> values, int component_type, int type, std::size_t components, int target) {
    tinygltf::Accessor a;
    a.bufferView = add_view(values.data(), values.size_bytes(), target);
    a.componentType = component_type;
    a.count = values.size() / components;
    a.type = type;
    model_.accessors.push_back(std::move(a));
    return static_cast<int>(model_.accessors.size() - 1);
  }

  /// A VEC3 float accessor of `vertices` morph target deltas (`given`:
  /// dense, or empty for none): without a buffer view when every delta is
  /// zero (glTF reads such an accessor as zeros), sparse (the moved vertices'
  /// indices and deltas) when that is smaller than the dense array, else
  /// dense. A source with many targets that each move a few vertices of a
  /// large mesh (Urho3D morphs list their vertices) stays its own size.
  int add_deltas(std::span<const float> given, std::size_t vertices, bool min_max) {
    const std::span<const float> values = finite(given);
    std::vector<std::uint32_t> moved;
    for (std::size_t i = 0; i < values.size() / 3; ++i)
      if (values[3 * i] != 0 || values[3 * i + 1] != 0 || values[3 * i + 2] != 0)
        moved.push_back(static_cast<std::uint32_t>(i));
    const bool narrow = vertices <= 0xFFFF;
    // A sparse accessor also costs two buffer views and its "sparse" object in the JSON.
    constexpr std::size_t sparse_json_bytes = 256;
    const std::size_t sparse_bytes = moved.size() * ((narrow ? 2 : 4) + 12) + sparse_json_bytes;
    if (!moved.empty() && sparse_bytes >= values.size_bytes())
      return add_floats(values, TINYGLTF_TYPE_VEC3, 3, TINYGLTF_TARGET_ARRAY_BUFFER, min_max);
    tinygltf::Accessor a;
    a.componentType = TINYGLTF_COMPONENT_TYPE_FLOAT;
    a.count = vertices;
    a.type = TINYGLTF_TYPE_VEC3;
    std::vector<float> packed;
    if (!moved.empty()) {
      a.sparse.isSparse = true;
      a.sparse.count = static_cast<int>(moved.size());
      a.sparse.indices.byteOffset = 0;
      if (narrow) {
        const std::vector<std::uint16_t> indices(moved.begin(), moved.end());
        a.sparse.indices.bufferView = add_view(indices.data(), indices.size() * 2, 0);
        a.sparse.indices.componentType = TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT;
      } else {
        a.sparse.indices.bufferView = add_view(moved.data(), moved.size() * 4, 0);
        a.sparse.indices.componentType = TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT;
      }
      packed.reserve(3 * moved.size());
      for (std::uint32_t i : moved) packed.insert(packed.end(), values.begin() + 3 * i, values.begin() + 3 * i + 3);
      a.sparse.values.bufferView = add_view(packed.data(), packed.size() * sizeof(float), 0);
      a.sparse.values.byteOffset = 0;
    }
    if (min_max) {  // over the values the accessor reads: the listed deltas, and zero for the others
      const double start = moved.size() < vertices ? 0.0 : std::numeric_limits<double>::infinity();
      a.minValues.assign(3, start);
      a.maxValues.assign(3, moved.size() < vertices ? 0.0 : -start);
      for (std::size_t i = 0; i < packed.size(); ++i) {
        a.minValues[i % 3] = std::min<double>(a.minValues[i % 3], packed[i]);
        a.maxValues[i % 3] = std::max<double>(a.maxValues[i % 3], packed[i]);
      }
    }
    model_.accessors.push_back(std::move(a));
    return static_cast<int>(model_.accessors.size() - 1);
  }

  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  std::vector<unsigned char> take() { return std::move(bytes_); }

 private:
  tinygltf::Model& model_;
  untold::budget& budget_;
  std::vector<unsigned char> bytes_;
  std::vector<float> scratch_;
};

// ---- small value fixes, each counted for the report -----------------------------------

/// glTF requires unit quaternions (node rotations, rotation keys): normalises
/// `q` in place and says whether it changed beyond float rounding.
bool normalize_quaternion(float* q) {
  const double len = std::sqrt(double{q[0]} * q[0] + double{q[1]} * q[1] + double{q[2]} * q[2] + double{q[3]} * q[3]);
  if (!(len > 0) || !untold::detail::is_finite(len)) {
    q[0] = q[1] = q[2] = 0, q[3] = 1;
    return true;
  }
  if (std::abs(len - 1.0) <= 1e-6) return false;
  for (int i = 0; i < 4; ++i) q[i] = static_cast<float>(q[i] / len);
  return true;
}

/// The area-weighted normal of the triangles around each vertex of `m`
/// (triangle lists; (0, 0, 1) where a vertex has none): what replaces a
/// normal that has no direction.
std::vector<float> face_normals(const convert::mesh& m) {
  const std::size_t v = m.vertex_count();
  std::vector<double> sum(3 * v, 0.0);
  const std::size_t count = m.indices.empty() ? v : m.indices.size();
  const auto index = [&](std::size_t i) { return m.indices.empty() ? i : std::size_t{m.indices[i]}; };
  if (m.primitive == convert::topology::triangle_list)
    for (std::size_t t = 0; t + 3 <= count; t += 3) {
      const std::size_t a = index(t), b = index(t + 1), c = index(t + 2);
      const float* p = m.positions.data();
      const double e1[3] = {p[3 * b] - p[3 * a], p[3 * b + 1] - p[3 * a + 1], p[3 * b + 2] - p[3 * a + 2]};
      const double e2[3] = {p[3 * c] - p[3 * a], p[3 * c + 1] - p[3 * a + 1], p[3 * c + 2] - p[3 * a + 2]};
      const double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
      if (!untold::detail::is_finite(n[0]) || !untold::detail::is_finite(n[1]) || !untold::detail::is_finite(n[2])) continue;
      for (std::size_t k : {a, b, c})
        for (std::size_t d = 0; d < 3; ++d) sum[3 * k + d] += n[d];
    }
  std::vector<float> out(3 * v);
  for (std::size_t k = 0; k < v; ++k) {
    const double len = std::sqrt(sum[3 * k] * sum[3 * k] + sum[3 * k + 1] * sum[3 * k + 1] + sum[3 * k + 2] * sum[3 * k + 2]);
    for (std::size_t d = 0; d < 3; ++d)
      out[3 * k + d] = len > 0 && untold::detail::is_finite(len) ? static_cast<float>(sum[3 * k + d] / len) : (d == 2 ? 1.0f : 0.0f);
  }
  return out;
}

/// True when some normal of `normals` (xyz a vertex) is zero or not finite.
bool has_no_direction(const std::vector<float>& normals) {
  for (std::size_t k = 0; k + 3 <= normals.size(); k += 3) {
    const double len = std::sqrt(double{normals[k]} * normals[k] + double{normals[k + 1]} * normals[k + 1] +
                                 double{normals[k + 2]} * normals[k + 2]);
    if (!(len > 1e-12) || !untold::detail::is_finite(len)) return true;
  }
  return false;
}

/// glTF's NORMAL and TANGENT hold unit vectors (TANGENT's w is +1 or -1):
/// `stream` (3 or 4 floats a vertex) with each vector whose squared length
/// is off by more than 0.005 rescaled, and each one without a direction (zero, NaN, infinity) replaced
/// by `fallback`'s (a tangent: a unit vector perpendicular to the normal
/// `fallback` holds; `fallback` may be empty when no vector needs it).
/// Counts the rescaled and the replaced vectors.
std::vector<float> unit_vectors(const std::vector<float>& stream, std::size_t stride, const std::vector<float>& fallback,
                                std::uint64_t& rescaled, std::uint64_t& replaced) {
  std::vector<float> out = stream;
  for (std::size_t k = 0; k + stride <= out.size(); k += stride) {
    float* x = &out[k];
    const double len = std::sqrt(double{x[0]} * x[0] + double{x[1]} * x[1] + double{x[2]} * x[2]);
    if (!(len > 1e-12) || !untold::detail::is_finite(len)) {
      if (stride == 3) {
        std::copy_n(&fallback[k], 3, x);
      } else {  // perpendicular to the normal n: n x (1,0,0), or n x (0,1,0) when n is near X
        const float* n = &fallback[k / 4 * 3];
        const bool near_x = std::abs(n[0]) > 0.9f;
        const double t[3] = {near_x ? -n[2] : 0.0, near_x ? 0.0 : n[2], near_x ? n[0] : -n[1]};
        const double tl = std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
        for (int d = 0; d < 3; ++d) x[d] = tl > 0 ? static_cast<float>(t[d] / tl) : (d == 0 ? 1.0f : 0.0f);
      }
      ++replaced;
    } else if (std::abs(len * len - 1.0) > 0.005) {  // inside glTF-Validator's tolerance: kept as is
      for (int d = 0; d < 3; ++d) x[d] = static_cast<float>(x[d] / len);
      ++rescaled;
    }
    if (stride == 4 && x[3] != 1.0f && x[3] != -1.0f) {
      x[3] = x[3] < 0 ? -1.0f : 1.0f;
      ++rescaled;
    }
  }
  return out;
}

/// Clamps `v` into [lo, hi]; true when it was outside.
bool clamp_into(double& v, double lo, double hi) {
  const double c = std::clamp(v, lo, hi);
  const bool changed = c != v;
  v = c;
  return changed;
}

/// "image/png" or "image/jpeg" from the first bytes; empty for other formats.
std::string sniff_mime(std::span<const std::byte> bytes) {
  const auto at = [&](std::size_t i) { return std::to_integer<unsigned>(bytes[i]); };
  if (bytes.size() >= 8 && at(0) == 0x89 && at(1) == 'P' && at(2) == 'N' && at(3) == 'G') return "image/png";
  if (bytes.size() >= 3 && at(0) == 0xFF && at(1) == 0xD8 && at(2) == 0xFF) return "image/jpeg";
  return {};
}

// ---- the writer ----------------------------------------------------------------------

class exporter {
 public:
  exporter(const convert::scene& s, const std::string& output_name, const gltf_export_options& o)
      : scene_(s),
        options_(o),
        output_name_(output_name),
        own_budget_(o.limits, convert::payload_bytes(s)),
        budget_(untold::budget::own_or_shared(o.budget, own_budget_)),
        buffer_(model_, budget_) {
    stem_ = std::filesystem::path(output_name).stem().string();
  }

  result<gltf_output> run() {
    // The document's objects (TinyGLTF's structs, then its JSON tree and text
    // when serialised) are charged before any is made: a small source with
    // many small meshes (Urho3D geometries, ...) becomes a large document.
    const std::uint64_t objects = document_objects();
    UNTOLD_TRY(budget_.charge_memory(untold::budget::product(objects, memory_per_object), "glTF document",
                                     errc::limit_exceeded));
    UNTOLD_TRY(budget_.charge_output(untold::budget::product(objects, text_per_object), "glTF document",
                                     errc::limit_exceeded));
    model_.asset.version = "2.0";
    model_.asset.generator = "untold";
    for (void (exporter::*stage)() : {&exporter::images, &exporter::materials, &exporter::meshes, &exporter::nodes,
                                      &exporter::skins, &exporter::animations, &exporter::cameras_and_lights,
                                      &exporter::scene_roots}) {
      (this->*stage)();
      if (!buffer_.outcome) return buffer_.outcome.error();
    }
    // TinyGLTF writes a node with no property as `null`, which its own loader
    // (and the glTF schema) refuses: an unnamed leaf at the identity gets an
    // explicit zero translation, the same node.
    for (tinygltf::Node& n : model_.nodes)
      if (n.name.empty() && n.children.empty() && n.mesh < 0 && n.skin < 0 && n.camera < 0 && n.translation.empty() &&
          n.rotation.empty() && n.scale.empty() && n.matrix.empty() && n.weights.empty() && n.extensions.empty())
        n.translation = {0.0, 0.0, 0.0};
    convert::detail::report_dropped_extras(scene_, report_, "not written (the writer keeps morph target names only)");
    report_.changed("non-finite values", "", "glTF accessors hold finite floats only: NaN and infinity written as 0",
                    buffer_.non_finite + non_finite_json_);
    if (buffer_.size() > max_glb_bytes - 1024)
      return make_error(errc::limit_exceeded).at_field("gltf.buffer").with_value(buffer_.size()).with_limit(max_glb_bytes);
    if (buffer_.size() != 0) {
      tinygltf::Buffer b;
      b.data = buffer_.take();
      model_.buffers.push_back(std::move(b));
    }
    std::sort(extensions_used_.begin(), extensions_used_.end());
    extensions_used_.erase(std::unique(extensions_used_.begin(), extensions_used_.end()), extensions_used_.end());
    model_.extensionsUsed = extensions_used_;
    return serialize();
  }

 private:
  // -- the document's size, for the budget
  /// A glTF object's memory while written: TinyGLTF's struct and its node in
  /// the JSON tree TinyGLTF serialises through (measured: a 218 MB peak for
  /// a document of ~110,000 small accessors, views, meshes, primitives,
  /// materials and nodes, the importer's scene included: 2 KB each); and
  /// its text (about 100 bytes).
  static constexpr std::uint64_t memory_per_object = 2048, text_per_object = 128;

  /// An upper bound of the objects the document will hold: per mesh, the
  /// mesh, its primitive, an accessor and a view per stream and per morph
  /// target attribute (sparse: two views); per texture an image, texture and
  /// sampler; per joint a node; per channel a channel, sampler, two
  /// accessors and two views.
  [[nodiscard]] std::uint64_t document_objects() const noexcept {
    const auto sum = untold::budget::sum;
    const auto product = untold::budget::product;
    std::uint64_t n = sum(sum(scene_.nodes.size(), scene_.materials.size()), product(scene_.textures.size(), 3));
    n = sum(n, sum(scene_.skins.size(), sum(scene_.cameras.size(), scene_.lights.size())));
    for (const convert::mesh& m : scene_.meshes) {
      std::uint64_t streams = 1 + m.extra_uvs.size();  // positions, extra uv sets
      for (const std::vector<float>* stream : {&m.normals, &m.tangents, &m.uv0, &m.uv1, &m.colors})
        streams += stream->empty() ? 0 : 1;
      streams += (m.joints.empty() ? 0 : 2) + (m.indices.empty() ? 0 : 1);
      std::uint64_t attributes = 1;  // per target: each attribute any target moves
      for (const convert::morph_target& t : m.morphs)
        attributes = std::max<std::uint64_t>(attributes, (t.position_deltas.empty() ? 0u : 1u) +
                                                             (t.normal_deltas.empty() ? 0u : 1u) +
                                                             (t.tangent_deltas.empty() ? 0u : 1u));
      n = sum(n, sum(3 + 2 * streams, product(m.morphs.size(), 3 * attributes)));  // + a material copy (material_for)
    }
    for (const convert::skeleton& k : scene_.skeletons) n = sum(n, k.joints.size());
    for (const convert::animation& a : scene_.animations) n = sum(n, sum(1, product(a.channels.size(), 6)));
    return n;
  }

  // -- JSON numbers: NaN and infinity have no JSON form; counted with the accessors' ones
  double number(float v, double fallback) {
    if (untold::detail::is_finite(v)) return v;
    ++non_finite_json_;
    return fallback;
  }
  std::vector<double> doubles(std::span<const float> v, double fallback = 0) {
    std::vector<double> out;
    for (float f : v) out.push_back(number(f, fallback));
    return out;
  }

  // -- images, textures, samplers
  void images() {
    std::uint64_t dropped_images = 0, kept_uri = 0, read_images = 0;
    image_of_.assign(scene_.textures.size(), -1);
    for (std::size_t i = 0; i < scene_.textures.size(); ++i) {
      const convert::texture& t = scene_.textures[i];
      tinygltf::Image img;
      img.name = t.name;
      std::vector<std::byte> bytes = t.embedded;
      if (bytes.empty() && options_.embed_images && !options_.image_directory.empty() && !t.uri.empty() &&
          untold::detail::is_safe_relative_path(t.uri)) {
        auto file = mapped_file::open(options_.image_directory / t.uri, read_ahead::whole_file);
        if (file && !sniff_mime(file->bytes()).empty()) {
          bytes.assign(file->bytes().begin(), file->bytes().end());
          ++read_images;
        }
      }
      const std::string mime = sniff_mime(bytes);
      if (!bytes.empty() && !mime.empty()) {
        if (options_.embed_images) {
          img.bufferView = buffer_.add_view(bytes.data(), bytes.size(), 0);
          img.mimeType = mime;
        } else {
          gltf_file f{stem_ + "_image" + std::to_string(i) + (mime == "image/png" ? ".png" : ".jpg"), bytes};
          img.uri = f.name;
          side_files_.push_back(std::move(f));
        }
      } else if (!t.uri.empty()) {
        img.uri = t.uri;  // as given; a viewer resolves it against the output's folder
        if (!bytes.empty()) ++kept_uri;
      } else {
        ++dropped_images;
        continue;
      }
      model_.images.push_back(std::move(img));
      image_of_[i] = static_cast<int>(model_.images.size() - 1);
    }
    report_.dropped("textures", "", "no PNG/JPEG bytes and no URI: glTF images are PNG or JPEG files or bytes",
                    dropped_images);
    report_.changed("embedded images", "", "not PNG/JPEG (glTF's image formats): referenced by their URI instead",
                    kept_uri);
    report_.info("images read from files", "", "the PNG/JPEG files the textures name, embedded in the binary buffer",
                 read_images);
  }

  static int wrap_code(convert::wrap_mode w) {
    switch (w) {
      case convert::wrap_mode::repeat: return TINYGLTF_TEXTURE_WRAP_REPEAT;
      case convert::wrap_mode::clamp: return TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE;
      case convert::wrap_mode::mirror: return TINYGLTF_TEXTURE_WRAP_MIRRORED_REPEAT;
    }
    return TINYGLTF_TEXTURE_WRAP_REPEAT;
  }

  /// glTF's filter code, -1 (absent) for unset.
  static int filter_code(convert::texture_filter f) {
    switch (f) {
      case convert::texture_filter::unset: return -1;
      case convert::texture_filter::nearest: return TINYGLTF_TEXTURE_FILTER_NEAREST;
      case convert::texture_filter::linear: return TINYGLTF_TEXTURE_FILTER_LINEAR;
      case convert::texture_filter::nearest_mipmap_nearest: return TINYGLTF_TEXTURE_FILTER_NEAREST_MIPMAP_NEAREST;
      case convert::texture_filter::linear_mipmap_nearest: return TINYGLTF_TEXTURE_FILTER_LINEAR_MIPMAP_NEAREST;
      case convert::texture_filter::nearest_mipmap_linear: return TINYGLTF_TEXTURE_FILTER_NEAREST_MIPMAP_LINEAR;
      case convert::texture_filter::linear_mipmap_linear: return TINYGLTF_TEXTURE_FILTER_LINEAR_MIPMAP_LINEAR;
    }
    return -1;
  }

  /// The glTF texture for a slot (image + the slot's wrap modes and filters), made on first use; -1 when its image was dropped.
  int texture_for(const convert::texture_slot& slot) {
    const int image = image_of_[slot.texture];
    if (image < 0) return -1;
    const std::array<int, 4> state{wrap_code(slot.wrap[0]), wrap_code(slot.wrap[1]), filter_code(slot.mag_filter),
                                   filter_code(slot.min_filter)};
    auto [sampler, new_sampler] = samplers_.try_emplace(state, static_cast<int>(model_.samplers.size()));
    if (new_sampler) {
      tinygltf::Sampler s;
      s.wrapS = state[0];
      s.wrapT = state[1];
      s.magFilter = state[2];
      s.minFilter = state[3];
      model_.samplers.push_back(s);
    }
    auto [texture, new_texture] = textures_.try_emplace({image, sampler->second}, static_cast<int>(model_.textures.size()));
    if (new_texture) {
      tinygltf::Texture t;
      t.source = image;
      t.sampler = sampler->second;
      model_.textures.push_back(t);
    }
    return texture->second;
  }

  /// Fills a texture reference; false when the slot is unused or its image was dropped.
  template <class Info>
  bool slot(const convert::texture_slot& s, Info& info, std::uint64_t& lost) {
    if (!s.used()) return false;
    const int t = texture_for(s);
    if (t < 0) return ++lost, false;
    info.index = t;
    info.texCoord = static_cast<int>(s.uv_set);
    if (s.has_transform) {
      tinygltf::Value::Object x;
      const auto pair = [this](const std::array<float, 2>& v, double fallback) {
        return tinygltf::Value(tinygltf::Value::Array{tinygltf::Value(number(v[0], fallback)),
                                                      tinygltf::Value(number(v[1], fallback))});
      };
      x["offset"] = pair(s.offset, 0);
      x["scale"] = pair(s.scale, 1);
      x["rotation"] = tinygltf::Value(number(s.rotation, 0));
      info.extensions["KHR_texture_transform"] = tinygltf::Value(std::move(x));
      extensions_used_.push_back("KHR_texture_transform");
    }
    return true;
  }

  void materials() {
    std::uint64_t clamped = 0, lost_slots = 0, other_slots = 0;
    for (const convert::material& m : scene_.materials) {
      tinygltf::Material g;
      g.name = m.name;
      auto& pbr = g.pbrMetallicRoughness;
      pbr.baseColorFactor = doubles(m.base_color, 1);
      for (double& c : pbr.baseColorFactor) clamped += clamp_into(c, 0, 1);
      pbr.metallicFactor = number(m.metallic, 1);
      pbr.roughnessFactor = number(m.roughness, 1);
      clamped += clamp_into(pbr.metallicFactor, 0, 1) + clamp_into(pbr.roughnessFactor, 0, 1);
      slot(m.base_color_texture, pbr.baseColorTexture, lost_slots);
      slot(m.metallic_roughness_texture, pbr.metallicRoughnessTexture, lost_slots);
      if (slot(m.normal_texture, g.normalTexture, lost_slots)) g.normalTexture.scale = number(m.normal_scale, 1);
      if (slot(m.occlusion_texture, g.occlusionTexture, lost_slots)) {
        g.occlusionTexture.strength = number(m.occlusion_strength, 1);
        clamped += clamp_into(g.occlusionTexture.strength, 0, 1);
      }
      slot(m.emissive_texture, g.emissiveTexture, lost_slots);
      g.emissiveFactor = doubles(m.emissive);
      for (double& c : g.emissiveFactor) clamped += clamp_into(c, 0, 1);
      if (m.emissive_strength != 1 && m.emissive_strength >= 0 && untold::detail::is_finite(m.emissive_strength)) {
        g.extensions["KHR_materials_emissive_strength"] = tinygltf::Value(
            tinygltf::Value::Object{{"emissiveStrength", tinygltf::Value(double{m.emissive_strength})}});
        extensions_used_.push_back("KHR_materials_emissive_strength");
      }
      switch (m.alpha) {
        case convert::alpha_mode::opaque: g.alphaMode = "OPAQUE"; break;
        case convert::alpha_mode::mask:
          g.alphaMode = "MASK";
          g.alphaCutoff = number(m.alpha_cutoff, 0.5);
          clamped += clamp_into(g.alphaCutoff, 0, std::numeric_limits<double>::max());
          break;
        case convert::alpha_mode::blend: g.alphaMode = "BLEND"; break;
      }
      g.doubleSided = m.double_sided;
      if (m.transmission > 0) {
        double factor = number(m.transmission, 0);
        clamped += clamp_into(factor, 0, 1);
        g.extensions["KHR_materials_transmission"] =
            tinygltf::Value(tinygltf::Value::Object{{"transmissionFactor", tinygltf::Value(factor)}});
        extensions_used_.push_back("KHR_materials_transmission");
      }
      other_slots += m.other_textures.size();
      model_.materials.push_back(std::move(g));
    }
    report_.changed("material factors", "", "outside glTF's range [0, 1]: clamped", clamped);
    report_.dropped("texture slots", "", "the slot's texture has no image glTF can hold", lost_slots);
    report_.dropped("source-specific texture slots", "",
                    "no PBR meaning (Urho3D technique units, UDM properties); glTF has the five PBR slots only",
                    other_slots);
  }

  // -- meshes
  static int mode_of(convert::topology t) {
    switch (t) {
      case convert::topology::triangle_list: return TINYGLTF_MODE_TRIANGLES;
      case convert::topology::line_list: return TINYGLTF_MODE_LINE;
      case convert::topology::point_list: return TINYGLTF_MODE_POINTS;
      case convert::topology::triangle_strip: return TINYGLTF_MODE_TRIANGLE_STRIP;
      case convert::topology::line_strip: return TINYGLTF_MODE_LINE_STRIP;
      case convert::topology::triangle_fan: return TINYGLTF_MODE_TRIANGLE_FAN;
    }
    return TINYGLTF_MODE_TRIANGLES;
  }

  void meshes() {
    mesh_of_.assign(scene_.meshes.size(), -1);
    std::uint64_t empty = 0, lods = 0, renormalized = 0, rescaled_normals = 0, replaced_normals = 0,
                  rescaled_tangents = 0, replaced_tangents = 0, renumbered_uvs = 0, unbound_slots = 0;
    for (std::size_t i = 0; i < scene_.meshes.size(); ++i) {
      const convert::mesh& m = scene_.meshes[i];
      const std::size_t v = m.vertex_count();
      if (v == 0) {
        ++empty;
        continue;
      }
      tinygltf::Primitive p;
      p.mode = mode_of(m.primitive);
      auto& attr = p.attributes;
      attr["POSITION"] = buffer_.add_floats(m.positions, TINYGLTF_TYPE_VEC3, 3, TINYGLTF_TARGET_ARRAY_BUFFER, true);
      std::vector<float> normals;
      if (!m.normals.empty()) {
        const std::vector<float> fallback = has_no_direction(m.normals) ? face_normals(m) : std::vector<float>{};
        normals = unit_vectors(m.normals, 3, fallback, rescaled_normals, replaced_normals);
        attr["NORMAL"] = buffer_.add_floats(normals, TINYGLTF_TYPE_VEC3, 3, TINYGLTF_TARGET_ARRAY_BUFFER, false);
      }
      if (!m.tangents.empty()) {
        if (normals.empty()) normals = face_normals(m);
        attr["TANGENT"] = buffer_.add_floats(unit_vectors(m.tangents, 4, normals, rescaled_tangents, replaced_tangents),
                                             TINYGLTF_TYPE_VEC4, 4, TINYGLTF_TARGET_ARRAY_BUFFER, false);
      }
      std::vector<const std::vector<float>*> uvs{&m.uv0, &m.uv1};
      for (const auto& extra : m.extra_uvs) uvs.push_back(&extra);
      // TEXCOORD_n must be dense: a missing set before a present one shifts the later ones down.
      int uv_index = 0;
      for (const auto* uv : uvs)
        if (!uv->empty())
          attr["TEXCOORD_" + std::to_string(uv_index++)] =
              buffer_.add_floats(*uv, TINYGLTF_TYPE_VEC2, 2, TINYGLTF_TARGET_ARRAY_BUFFER, false);
      for (std::size_t k = 0; k < uvs.size(); ++k)
        if (uvs[k]->empty() && std::any_of(uvs.begin() + static_cast<std::ptrdiff_t>(k), uvs.end(),
                                           [](const auto* uv) { return !uv->empty(); })) {
          ++renumbered_uvs;  // a material's texCoord still names the scene's set
          break;
        }
      if (!m.colors.empty())
        attr["COLOR_0"] = buffer_.add_floats(m.colors, TINYGLTF_TYPE_VEC4, 4, TINYGLTF_TARGET_ARRAY_BUFFER, false);
      if (!m.joints.empty()) {
        std::vector<std::uint16_t> joints(4 * v);
        std::vector<float> weights(4 * v);
        for (std::size_t k = 0; k < v; ++k) {
          float sum = 0;
          for (std::size_t c = 0; c < 4; ++c) sum += m.weights[k][c];
          const bool fix = sum > 0 && std::abs(sum - 1.0f) > 2e-6f;
          renormalized += fix;
          for (std::size_t c = 0; c < 4; ++c) {
            const float w = fix ? m.weights[k][c] / sum : m.weights[k][c];
            // glTF: an unused slot has joint 0 and weight 0.
            joints[4 * k + c] = w > 0 ? m.joints[k][c] : 0;
            weights[4 * k + c] = w > 0 ? w : 0;
          }
        }
        attr["JOINTS_0"] = buffer_.add_integers<std::uint16_t>(joints, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT,
                                                               TINYGLTF_TYPE_VEC4, 4, TINYGLTF_TARGET_ARRAY_BUFFER);
        attr["WEIGHTS_0"] = buffer_.add_floats(weights, TINYGLTF_TYPE_VEC4, 4, TINYGLTF_TARGET_ARRAY_BUFFER, false);
      }
      if (!m.indices.empty()) {
        if (v < 0xFFFF) {  // 16-bit when no index reaches the primitive-restart value 65535
          std::vector<std::uint16_t> narrow(m.indices.begin(), m.indices.end());
          p.indices = buffer_.add_integers<std::uint16_t>(narrow, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT,
                                                          TINYGLTF_TYPE_SCALAR, 1, TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER);
        } else {
          p.indices = buffer_.add_integers<std::uint32_t>(m.indices, TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT,
                                                          TINYGLTF_TYPE_SCALAR, 1, TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER);
        }
      }
      if (m.material != no_ref) p.material = material_for(static_cast<int>(m.material), uv_index, unbound_slots);
      tinygltf::Mesh g;
      g.name = m.name;
      morphs(m, p, g);
      g.primitives.push_back(std::move(p));
      lods += m.lods.size();
      model_.meshes.push_back(std::move(g));
      mesh_of_[i] = static_cast<int>(model_.meshes.size() - 1);
    }
    report_.dropped("meshes without vertices", "", "a glTF accessor holds at least one element", empty);
    report_.dropped("LOD levels", "", "glTF 2.0 has no levels of detail (only LOD0 is written)", lods);
    report_.changed("skin weights", "", "glTF requires weights that sum to 1: renormalised", renormalized);
    report_.dropped("texture bindings", "",
                    "the mesh has no TEXCOORD_n the slot samples: drawn with a copy of its material without them",
                    unbound_slots);
    report_.changed("uv sets", "", "a missing set before a present one: later sets renumbered down (TEXCOORD_n "
                                   "is dense); texture slots keep the scene's set number", renumbered_uvs);
    report_.changed("normals", "", "glTF requires unit normals: rescaled to length 1", rescaled_normals);
    report_.changed("normals without a direction", "",
                    "zero or not finite: replaced by the vertex's face normal (glTF requires unit normals)",
                    replaced_normals);
    report_.changed("tangents", "", "glTF requires unit tangents with w = +-1: rescaled, w set to its sign",
                    rescaled_tangents);
    report_.changed("tangents without a direction", "",
                    "zero or not finite: replaced by a unit vector perpendicular to the normal", replaced_tangents);
  }

  /// glTF material `index`, or (made once) a copy of it without the texture
  /// slots that sample a TEXCOORD_n past the mesh's `uv_sets` (glTF: a
  /// primitive must have every set its material samples); each slot taken
  /// off a mesh is counted in `unbound`.
  int material_for(int index, int uv_sets, std::uint64_t& unbound) {
    const auto key = std::pair{index, uv_sets};
    const auto sampled_past = [uv_sets](const auto& slot) { return slot.index >= 0 && slot.texCoord >= uv_sets; };
    const auto count = [&](const tinygltf::Material& g) {
      return static_cast<std::uint64_t>(sampled_past(g.pbrMetallicRoughness.baseColorTexture)) +
             sampled_past(g.pbrMetallicRoughness.metallicRoughnessTexture) + sampled_past(g.normalTexture) +
             sampled_past(g.occlusionTexture) + sampled_past(g.emissiveTexture);
    };
    const std::uint64_t slots = count(model_.materials[static_cast<std::size_t>(index)]);
    if (slots == 0) return index;
    unbound += slots;
    if (const auto found = unbound_material_.find(key); found != unbound_material_.end()) return found->second;
    tinygltf::Material copy = model_.materials[static_cast<std::size_t>(index)];
    const auto unbind = [&](auto& slot) {
      if (sampled_past(slot)) slot = std::remove_reference_t<decltype(slot)>{};
    };
    unbind(copy.pbrMetallicRoughness.baseColorTexture);
    unbind(copy.pbrMetallicRoughness.metallicRoughnessTexture);
    unbind(copy.normalTexture);
    unbind(copy.occlusionTexture);
    unbind(copy.emissiveTexture);
    model_.materials.push_back(std::move(copy));
    const int made = static_cast<int>(model_.materials.size() - 1);
    unbound_material_.emplace(key, made);
    return made;
  }

  /// Morph targets: every target gets each attribute any target moves (zeros where it does not),
  /// as glTF viewers expect the same attributes in every target.
  void morphs(const convert::mesh& m, tinygltf::Primitive& p, tinygltf::Mesh& g) {
    if (m.morphs.empty()) return;
    const std::size_t v = m.vertex_count();
    bool any_position = false, any_normal = false, any_tangent = false;
    for (const convert::morph_target& t : m.morphs) {
      any_position |= !t.position_deltas.empty();
      any_normal |= !t.normal_deltas.empty();
      any_tangent |= !t.tangent_deltas.empty();
    }
    if (!any_position && !any_normal && !any_tangent) any_position = true;  // a target with no attribute is invalid
    tinygltf::Value::Array names;
    for (const convert::morph_target& t : m.morphs) {
      std::map<std::string, int> target;
      const auto add = [&](const char* name, const std::vector<float>& deltas, bool min_max) {
        target[name] = buffer_.add_deltas(deltas, v, min_max);
      };
      if (any_position) add("POSITION", t.position_deltas, true);
      if (any_normal && !m.normals.empty()) add("NORMAL", t.normal_deltas, false);
      if (any_tangent && !m.tangents.empty()) add("TANGENT", t.tangent_deltas, false);
      p.targets.push_back(std::move(target));
      names.push_back(tinygltf::Value(t.name));
      g.weights.push_back(t.default_weight);
    }
    g.extras = tinygltf::Value(tinygltf::Value::Object{{"targetNames", tinygltf::Value(std::move(names))}});
  }

  // -- nodes
  int add_node(tinygltf::Node n, int parent) {
    const int index = static_cast<int>(model_.nodes.size());
    model_.nodes.push_back(std::move(n));
    if (parent >= 0) model_.nodes[static_cast<std::size_t>(parent)].children.push_back(index);
    else extra_roots_.push_back(index);
    return index;
  }

  void set_trs(tinygltf::Node& n, const convert::transform& t, std::uint64_t& renormalized) {
    std::array<float, 4> q = t.rotation;
    renormalized += normalize_quaternion(q.data());
    if (t.translation != std::array<float, 3>{0, 0, 0}) n.translation = doubles(t.translation);
    if (q != std::array<float, 4>{0, 0, 0, 1}) n.rotation = doubles(q);
    if (t.scale != std::array<float, 3>{1, 1, 1}) n.scale = doubles(t.scale, 1);
  }

  /// Puts scene mesh `m` on glTF node `n` (its skin too).
  void attach_mesh(tinygltf::Node& n, std::uint32_t m) {
    n.mesh = mesh_of_[m];
    const convert::mesh& sm = scene_.meshes[m];
    if (sm.skin != no_ref && !sm.joints.empty()) n.skin = static_cast<int>(sm.skin);  // glTF: a skin needs JOINTS_0
  }

  void nodes() {
    std::uint64_t renormalized = 0, split = 0;
    const std::size_t count = scene_.nodes.size();
    model_.nodes.resize(count);
    mesh_nodes_.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const convert::node& sn = scene_.nodes[i];
      tinygltf::Node& n = model_.nodes[i];
      n.name = sn.name;
      set_trs(n, sn.local, renormalized);
      if (sn.parent != no_ref) model_.nodes[sn.parent].children.push_back(static_cast<int>(i));
    }
    for (std::size_t i = 0; i < count; ++i) {
      std::vector<std::uint32_t> drawn;
      for (std::uint32_t m : scene_.nodes[i].meshes)
        if (mesh_of_[m] >= 0) drawn.push_back(m);
      if (drawn.size() == 1) {
        attach_mesh(model_.nodes[i], drawn[0]);
        mesh_nodes_[i].emplace_back(static_cast<int>(i), drawn[0]);
        continue;
      }
      split += drawn.size();
      for (std::uint32_t m : drawn) {
        tinygltf::Node child;
        child.name = scene_.meshes[m].name.empty() ? scene_.nodes[i].name : scene_.meshes[m].name;
        attach_mesh(child, m);
        const int c = add_node(std::move(child), static_cast<int>(i));
        mesh_nodes_[i].emplace_back(c, m);
      }
    }
    // Skeletons: one node per joint, under the skeleton's node.
    joint_nodes_.resize(scene_.skeletons.size());
    std::uint64_t rooted = 0;
    for (std::size_t k = 0; k < scene_.skeletons.size(); ++k) {
      const convert::skeleton& sk = scene_.skeletons[k];
      int parent = sk.node == no_ref ? -1 : static_cast<int>(sk.node);
      std::size_t roots = 0;
      for (const convert::joint& j : sk.joints) roots += j.parent == no_ref;
      if (parent < 0 && roots > 1) {  // skin joints need one common root
        tinygltf::Node root;
        root.name = sk.name;
        parent = add_node(std::move(root), -1);
        ++rooted;
      }
      for (const convert::joint& j : sk.joints) {
        tinygltf::Node n;
        n.name = j.name;
        set_trs(n, j.rest, renormalized);
        joint_nodes_[k].push_back(add_node(std::move(n), j.parent == no_ref ? parent : joint_nodes_[k][j.parent]));
      }
    }
    report_.changed("node rotations", "", "not unit quaternions: normalised", renormalized);
    report_.info("meshes on shared nodes", "", "a glTF node draws one mesh: one child node per mesh", split);
    report_.info("skeletons without a node", "", "their root joints grouped under a new root node", rooted);
  }

  void skins() {
    for (const convert::skin& s : scene_.skins) {
      tinygltf::Skin g;
      const convert::skeleton& sk = scene_.skeletons[s.skeleton];
      g.name = sk.name;
      std::vector<float> matrices;
      matrices.reserve(16 * s.joints.size());
      for (std::uint32_t j : s.joints) {
        g.joints.push_back(joint_nodes_[s.skeleton][j]);
        const mat4& m = sk.joints[j].inverse_bind;
        matrices.insert(matrices.end(), m.begin(), m.end());
      }
      if (!matrices.empty())
        g.inverseBindMatrices = buffer_.add_floats(matrices, TINYGLTF_TYPE_MAT4, 16, 0, false);
      // skin.skeleton: the skeleton's root joint when it has one (joints come parents first), so that a reader
      // finds the joints no vertex is bound to (an animated root, helper bones) as part of the skeleton.
      std::size_t roots = 0;
      for (const convert::joint& j : sk.joints) roots += j.parent == no_ref;
      if (roots == 1 && !sk.joints.empty()) g.skeleton = joint_nodes_[s.skeleton][0];
      model_.skins.push_back(std::move(g));
    }
  }

  // -- animations
  static const char* interpolation_name(convert::interpolation i) {
    switch (i) {
      case convert::interpolation::step: return "STEP";
      case convert::interpolation::linear: return "LINEAR";
      case convert::interpolation::cubic_spline: return "CUBICSPLINE";
    }
    return "LINEAR";
  }

  static const char* path_name(convert::anim_path p) {
    switch (p) {
      case convert::anim_path::translation: return "translation";
      case convert::anim_path::rotation: return "rotation";
      case convert::anim_path::scale: return "scale";
      case convert::anim_path::weights: return "weights";
    }
    return "translation";
  }

  void animations() {
    std::uint64_t empty_channels = 0, repeated_keys = 0, renormalized = 0, no_target = 0, empty_clips = 0;
    for (const convert::animation& a : scene_.animations) {
      tinygltf::Animation g;
      g.name = a.name;
      for (const convert::animation_channel& c : a.channels) {
        if (c.times.empty()) {
          ++empty_channels;
          continue;
        }
        const bool cubic = c.interp == convert::interpolation::cubic_spline;
        const std::size_t per_key =
            c.path == convert::anim_path::weights ? c.values.size() / c.times.size()
                                                  : (c.path == convert::anim_path::rotation ? 4 : 3) * (cubic ? 3 : 1);
        // glTF key times strictly increase: a key at the time of the one before it is dropped.
        std::vector<float> times, values;
        for (std::size_t k = 0; k < c.times.size(); ++k) {
          if (!times.empty() && !(c.times[k] > times.back())) {
            ++repeated_keys;
            continue;
          }
          times.push_back(c.times[k]);
          values.insert(values.end(), c.values.begin() + static_cast<std::ptrdiff_t>(k * per_key),
                        c.values.begin() + static_cast<std::ptrdiff_t>((k + 1) * per_key));
        }
        if (c.path == convert::anim_path::rotation && !cubic)
          for (std::size_t k = 0; k + 4 <= values.size(); k += 4) renormalized += normalize_quaternion(&values[k]);
        std::vector<int> targets;
        if (c.skeleton != no_ref) {
          targets.push_back(joint_nodes_[c.skeleton][c.joint]);
        } else if (c.path != convert::anim_path::weights) {
          targets.push_back(static_cast<int>(c.node));
        } else {
          // Morph weights animate the glTF nodes of c.node whose mesh has that many targets.
          const std::size_t morphs = per_key / (cubic ? 3 : 1);
          for (const auto& [n, m] : mesh_nodes_[c.node])
            if (scene_.meshes[m].morphs.size() == morphs && morphs != 0) targets.push_back(n);
        }
        if (targets.empty()) {
          ++no_target;
          continue;
        }
        tinygltf::AnimationSampler s;
        s.input = buffer_.add_floats(times, TINYGLTF_TYPE_SCALAR, 1, 0, true);
        const int type = c.path == convert::anim_path::rotation ? TINYGLTF_TYPE_VEC4
                         : c.path == convert::anim_path::weights ? TINYGLTF_TYPE_SCALAR
                                                                  : TINYGLTF_TYPE_VEC3;
        const std::size_t components = type == TINYGLTF_TYPE_VEC4 ? 4 : type == TINYGLTF_TYPE_VEC3 ? 3 : 1;
        s.output = buffer_.add_floats(values, type, components, 0, false);
        s.interpolation = interpolation_name(c.interp);
        g.samplers.push_back(std::move(s));
        for (int t : targets) {
          tinygltf::AnimationChannel ch;
          ch.sampler = static_cast<int>(g.samplers.size() - 1);
          ch.target_node = t;
          ch.target_path = path_name(c.path);
          g.channels.push_back(std::move(ch));
        }
      }
      if (g.channels.empty()) {
        ++empty_clips;
        continue;
      }
      model_.animations.push_back(std::move(g));
    }
    report_.dropped("animation channels without keys", "", "a glTF sampler has at least one key", empty_channels);
    report_.dropped("keyframes at a repeated time", "", "glTF key times strictly increase", repeated_keys);
    report_.changed("rotation keys", "", "not unit quaternions: normalised", renormalized);
    report_.dropped("morph weight channels", "", "their node draws no mesh with that many morph targets", no_target);
    report_.dropped("animations without channels", "", "a glTF animation has at least one channel", empty_clips);
  }

  // -- cameras and lights
  /// The glTF node that holds a camera or light of scene node `n`: the node
  /// itself the first time, else a new child (a glTF node holds one of each).
  int holder(std::uint32_t n, bool camera, std::uint64_t& added) {
    if (n == no_ref) {
      ++added;
      return add_node(tinygltf::Node{}, -1);
    }
    tinygltf::Node& node = model_.nodes[n];
    const bool busy = camera ? node.camera >= 0 : node.extensions.count("KHR_lights_punctual") != 0;
    if (!busy) return static_cast<int>(n);
    ++added;
    tinygltf::Node child;
    child.name = node.name;
    return add_node(std::move(child), static_cast<int>(n));
  }

  void cameras_and_lights() {
    std::uint64_t added = 0, ortho = 0, fixed_planes = 0, area = 0, cones = 0;
    for (const convert::camera& c : scene_.cameras) {
      tinygltf::Camera g;
      g.name = c.name;
      double znear = c.znear > 0 ? c.znear : 0.01, zfar = c.zfar > znear ? c.zfar : znear * 1000;
      fixed_planes += znear != double{c.znear} || zfar != double{c.zfar};
      if (c.orthographic) {
        g.type = "orthographic";
        g.orthographic.xmag = g.orthographic.ymag = 1;  // the scene holds no orthographic size
        g.orthographic.znear = std::max(0.0, double{c.znear});
        g.orthographic.zfar = zfar;
        ++ortho;
      } else {
        g.type = "perspective";
        g.perspective.yfov = c.yfov > 0 ? c.yfov : 0.8;
        g.perspective.aspectRatio = c.aspect > 0 ? c.aspect : 0;
        g.perspective.znear = znear;
        g.perspective.zfar = zfar;
      }
      model_.cameras.push_back(std::move(g));
      const int n = holder(c.node, true, added);
      model_.nodes[static_cast<std::size_t>(n)].camera = static_cast<int>(model_.cameras.size() - 1);
    }
    for (const convert::light& l : scene_.lights) {
      tinygltf::Light g;
      g.name = l.name;
      g.color = doubles(l.color, 1);
      g.intensity = std::max(0.0, number(l.intensity, 1));
      g.range = std::max(0.0, number(l.range, 0));
      switch (l.kind) {
        case convert::light_kind::directional: g.type = "directional"; break;
        case convert::light_kind::point: g.type = "point"; break;
        case convert::light_kind::spot: {
          g.type = "spot";
          constexpr double half_pi = 1.5707963267948966;
          double outer = number(l.outer_cone, 0.7853981633974483), inner = number(l.inner_cone, 0);
          cones += clamp_into(outer, 1e-6, half_pi) + clamp_into(inner, 0, outer - 1e-6);
          g.spot.outerConeAngle = outer;
          g.spot.innerConeAngle = inner;
          break;
        }
        case convert::light_kind::area: ++area; continue;
      }
      model_.lights.push_back(std::move(g));
      const int n = holder(l.node, false, added);
      model_.nodes[static_cast<std::size_t>(n)].extensions["KHR_lights_punctual"] = tinygltf::Value(
          tinygltf::Value::Object{{"light", tinygltf::Value(static_cast<int>(model_.lights.size() - 1))}});
    }
    report_.dropped("area lights", "", "KHR_lights_punctual has directional, point and spot lights only", area);
    report_.changed("orthographic cameras", "", "the scene holds no orthographic size: xmag = ymag = 1", ortho);
    report_.changed("camera clip planes", "", "glTF needs 0 < znear < zfar: replaced", fixed_planes);
    report_.changed("spot light cones", "", "glTF needs 0 <= inner < outer <= pi/2: clamped", cones);
    report_.info("camera and light nodes", "", "added: a glTF node holds one camera and one light", added);
  }

  void scene_roots() {
    tinygltf::Scene sc;
    sc.name = scene_.name;
    for (std::size_t i = 0; i < scene_.nodes.size(); ++i)
      if (scene_.nodes[i].parent == no_ref) sc.nodes.push_back(static_cast<int>(i));
    sc.nodes.insert(sc.nodes.end(), extra_roots_.begin(), extra_roots_.end());
    model_.scenes.push_back(std::move(sc));
    model_.defaultScene = 0;
  }

  // -- bytes
  result<gltf_output> serialize() {
    tinygltf::TinyGLTF writer;
    writer.SetImageWriter(nullptr, nullptr);  // images are written here, never by TinyGLTF
    // The serialised stream and the output bytes each hold the binary buffer again.
    const std::size_t bin_length = model_.buffers.empty() ? 0 : model_.buffers[0].data.size();
    UNTOLD_TRY(budget_.charge_memory(untold::budget::product(bin_length, 2), "glTF serialisation", errc::limit_exceeded));
    UNTOLD_TRY(budget_.charge_output(bin_length, "glTF binary buffer", errc::limit_exceeded));
    std::ostringstream glb;
    if (!writer.WriteGltfSceneToStream(&model_, glb, false, true))
      return make_error(errc::invalid_argument).at_field("gltf.serialize");
    model_.buffers.clear();  // serialised: the buffer's bytes are in the stream now
    model_.buffers.shrink_to_fit();
    const std::string bytes = std::move(glb).str();
    gltf_output out;
    out.report = std::move(report_);
    const auto as_bytes = [](std::string_view s) {
      const auto* p = reinterpret_cast<const std::byte*>(s.data());
      return std::vector<std::byte>(p, p + s.size());
    };
    if (options_.container == gltf_container::glb) {
      out.files.push_back({output_name_, as_bytes(bytes)});
    } else {
      // The GLB's JSON chunk is the document; the .gltf names the BIN chunk's bytes <stem>.bin.
      std::uint32_t json_length = 0;
      std::memcpy(&json_length, bytes.data() + 12, 4);
      nlohmann::json doc = nlohmann::json::parse(bytes.substr(20, json_length));
      const std::size_t bin_start = 20 + std::size_t{json_length} + 8;
      if (bin_length != 0) doc["buffers"][0]["uri"] = stem_ + ".bin";
      std::string text = doc.dump(options_.pretty ? 2 : -1);
      if (options_.pretty) text += '\n';
      out.files.push_back({output_name_, as_bytes(text)});
      if (bin_length != 0)
        out.files.push_back({stem_ + ".bin", as_bytes(std::string_view(bytes).substr(bin_start, bin_length))});
    }
    for (gltf_file& f : side_files_) out.files.push_back(std::move(f));
    return out;
  }

  const convert::scene& scene_;
  const gltf_export_options& options_;
  std::string output_name_, stem_;
  untold::budget own_budget_;
  untold::budget& budget_;
  tinygltf::Model model_;
  buffer_builder buffer_;
  convert::conversion_report report_;
  std::vector<std::string> extensions_used_;
  std::uint64_t non_finite_json_ = 0;
  std::vector<gltf_file> side_files_;
  std::vector<int> image_of_;    // scene texture -> glTF image, -1 dropped
  std::vector<int> mesh_of_;     // scene mesh -> glTF mesh, -1 dropped
  std::vector<std::vector<std::pair<int, std::uint32_t>>> mesh_nodes_;  // scene node -> (glTF node, scene mesh)
  std::vector<std::vector<int>> joint_nodes_;  // skeleton -> joint -> glTF node
  std::vector<int> extra_roots_;
  std::map<std::array<int, 4>, int> samplers_;  // (wrapS, wrapT, magFilter, minFilter) -> sampler
  std::map<std::pair<int, int>, int> textures_;  // (image, sampler) -> texture
  std::map<std::pair<int, int>, int> unbound_material_;  // (material, uv sets) -> its copy without unsampleable slots
};

}  // namespace

result<gltf_output> gltf_serialize(const convert::scene& scene, const std::string& output_name,
                                   const gltf_export_options& options) {
  UNTOLD_TRY(convert::validate_model(scene));
  try {
    return exporter(scene, output_name, options).run();
  } catch (const std::bad_alloc&) {
    return make_error(errc::limit_exceeded).at_field("gltf.memory");
  } catch (const std::exception&) {  // nlohmann::json re-parsing TinyGLTF's own output: not expected
    return make_error(errc::invalid_argument).at_field("gltf.serialize");
  }
}

result<gltf_export_result> write_gltf(const convert::scene& scene, const std::filesystem::path& path,
                                      const gltf_export_options& options) {
  auto out = gltf_serialize(scene, path.filename().string(), options);
  if (!out) return out.error();
  gltf_export_result r;
  r.report = std::move(out->report);
  const std::filesystem::path dir = path.parent_path();
  for (std::size_t i = 0; i < out->files.size(); ++i) {
    const gltf_file& f = out->files[i];
    const std::filesystem::path target = i == 0 ? path : dir / f.name;  // the main file: as the caller named it
    if (auto failure = write_output(target, f.bytes)) return failure->cause.with_subject(f.name);
    r.files.push_back(target);
  }
  return r;
}

}  // namespace untold::tools
