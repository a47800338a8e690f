// tools/pipeline/import_gltf.cpp - glTF 2.0 -> neutral scene through TinyGLTF (see import_gltf.hpp).
#include "import_gltf.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>
#include <tiny_gltf.h>

#include <untold/convert/from_untold.hpp>
#include <untold/detail/checks.hpp>
#include <untold/matrix.hpp>

#include "image_info.hpp"
#include "vec3.hpp"

namespace fs = std::filesystem;

namespace untold::tools {

namespace {

using namespace untold::convert;

/// Why the file cannot be imported; caught in import_gltf.
struct refused {
  std::string why;
};

[[noreturn]] void refuse(std::string why) { throw refused{std::move(why)}; }

void require(status s) {
  if (!s) refuse(s.error().describe());
}

std::string quoted(std::string_view kind, std::string_view name, std::size_t index) {
  return std::string(kind) + " '" + (name.empty() ? "#" + std::to_string(index) : std::string(name)) + "'";
}

std::uint32_t u32_at(const std::vector<unsigned char>& b, std::size_t at) {
  return std::uint32_t{b[at]} | std::uint32_t{b[at + 1]} << 8 | std::uint32_t{b[at + 2]} << 16 |
         std::uint32_t{b[at + 3]} << 24;
}

/// A GLB's chunk layout, checked before TinyGLTF sees it (TinyGLTF 2.7
/// compares the BIN chunk's length without its 8-byte header). Returns the
/// JSON chunk.
std::string_view glb_json(const std::vector<unsigned char>& b) {
  if (b.size() < 20) refuse("GLB shorter than its 20-byte header and JSON chunk header");
  if (u32_at(b, 4) != 2) refuse("GLB version " + std::to_string(u32_at(b, 4)) + " (glTF 2.0 is version 2)");
  if (u32_at(b, 8) != b.size())
    refuse("GLB header length " + std::to_string(u32_at(b, 8)) + " is not the file size " + std::to_string(b.size()));
  const std::uint64_t json_length = u32_at(b, 12);
  if (u32_at(b, 16) != 0x4E4F534Au || json_length > b.size() - 20) refuse("GLB's first chunk is not a JSON chunk within the file");
  const std::uint64_t bin_at = 20 + json_length;
  if (bin_at < b.size()) {
    if (b.size() - bin_at < 8) refuse("GLB chunk header past the end of the file");
    const std::uint64_t bin_length = u32_at(b, static_cast<std::size_t>(bin_at));
    if (bin_length > b.size() - bin_at - 8) refuse("GLB BIN chunk runs past the end of the file");
  }
  return {reinterpret_cast<const char*>(b.data()) + 20, static_cast<std::size_t>(json_length)};
}

// ---- file access TinyGLTF is allowed ------------------------------------------------

/// The only files TinyGLTF may read: the external buffers the document names
/// (its `buffers[].uri`, safe relative paths under the source's directory).
/// Images are never read through TinyGLTF (their URIs are all the scene needs).
struct file_access {
  std::set<std::string> buffers;  // dir / uri, as TinyGLTF joins them
  budget* charge = nullptr;
  std::vector<fs::path>* read = nullptr;
};

std::string expand_nothing(const std::string& path, void*) { return path; }  // not wordexp: no expansion of a file's text

bool allowed_exists(const std::string& path, void* user) {
  const auto& a = *static_cast<file_access*>(user);
  std::error_code ec;
  return a.buffers.count(path) != 0 && fs::is_regular_file(path, ec);
}

bool allowed_read(std::vector<unsigned char>* out, std::string* err, const std::string& path, void* user) {
  auto& a = *static_cast<file_access*>(user);
  if (a.buffers.count(path) == 0) {
    if (err != nullptr) *err += "not read: " + path + "\n";
    return false;
  }
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return false;
  if (auto s = a.charge->charge_memory(size, "glTF buffer file", errc::limit_exceeded); !s) {
    if (err != nullptr) *err += s.error().describe() + "\n";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  out->resize(static_cast<std::size_t>(size));
  in.read(reinterpret_cast<char*>(out->data()), static_cast<std::streamsize>(size));
  if (static_cast<std::uintmax_t>(in.gcount()) != size) return false;
  a.read->push_back(path);
  return true;
}

bool no_write(std::string*, const std::string&, const std::vector<unsigned char>&, void*) { return false; }

/// The image hook: nothing is decoded. A data: URI image's bytes are kept
/// (TinyGLTF hands them over only here); bufferView images are read later,
/// through the checked accessor path; external images are never read.
bool keep_encoded(tinygltf::Image* image, const int, std::string*, std::string*, int, int, const unsigned char* bytes,
                  int size, void* user) {
  if (image->bufferView == -1 && image->uri.empty() && size > 0) {
    require(static_cast<budget*>(user)->charge_memory(static_cast<std::uint64_t>(size), "glTF embedded image",
                                                       errc::limit_exceeded));
    image->image.assign(bytes, bytes + size);
  }
  image->as_is = true;
  return true;
}

/// An object's `extras` as the scene keeps them: the JSON text, empty for none (or null).
std::string extras_of(const std::string& json_text) { return json_text == "null" ? std::string() : json_text; }

bool is_data_uri(std::string_view uri) { return uri.rfind("data:", 0) == 0; }

/// The external buffer files a document names, as TinyGLTF will ask for them
/// (its JoinPath of the directory and its urldecode of the URI, which also
/// reads '+' as a space). A URI that is not a safe relative path is refused
/// here, before any file is touched.
std::set<std::string> buffer_files(std::string_view json_text, const fs::path& dir) {
  const nlohmann::json j = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr, false);
  std::set<std::string> out;
  if (j.is_discarded() || !j.is_object()) return out;  // TinyGLTF's parse says why
  const auto buffers = j.find("buffers");
  if (buffers == j.end() || !buffers->is_array()) return out;
  const std::string base = dir.string();
  for (const auto& b : *buffers) {
    if (!b.is_object() || !b.contains("uri") || !b["uri"].is_string()) continue;
    std::string uri = b["uri"].get<std::string>();
    if (is_data_uri(uri)) continue;
    std::replace(uri.begin(), uri.end(), '+', ' ');
    const std::string decoded = percent_decoded(uri);
    if (!untold::detail::is_safe_relative_path(decoded))
      refuse("buffer URI '" + sanitized_utf8(b["uri"].get<std::string>()) +
             "' is not a relative path inside the source's directory");
    out.insert(base.empty() ? decoded : base.back() == '/' ? base + decoded : base + "/" + decoded);
  }
  return out;
}

// ---- accessors ------------------------------------------------------------------------

std::uint64_t checked_end(std::uint64_t offset, std::uint64_t count, std::uint64_t stride, std::uint64_t element) {
  // offset + (count - 1) * stride + element, or ~0 on overflow (count > 0).
  const std::uint64_t last = count - 1;
  if (stride != 0 && last > (~std::uint64_t{0} - element - offset) / stride) return ~std::uint64_t{0};
  return offset + last * stride + element;
}

float component_as_float(const unsigned char* p, int type, bool normalized) {
  switch (type) {
    case TINYGLTF_COMPONENT_TYPE_FLOAT: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
      const auto v = static_cast<std::int8_t>(*p);
      return normalized ? std::max(static_cast<float>(v) / 127.0f, -1.0f) : static_cast<float>(v);
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return normalized ? static_cast<float>(*p) / 255.0f : static_cast<float>(*p);
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
      std::int16_t v;
      std::memcpy(&v, p, 2);
      return normalized ? std::max(static_cast<float>(v) / 32767.0f, -1.0f) : static_cast<float>(v);
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return normalized ? static_cast<float>(v) / 65535.0f : static_cast<float>(v);
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return static_cast<float>(v);
    }
    default: return 0.0f;
  }
}

std::uint32_t component_as_u32(const unsigned char* p, int type) {
  switch (type) {
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return *p;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: return 0;
  }
}

int component_size(int type) {
  switch (type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return 2;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return 4;
    default: return 0;
  }
}

int components_of(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR: return 1;
    case TINYGLTF_TYPE_VEC2: return 2;
    case TINYGLTF_TYPE_VEC3: return 3;
    case TINYGLTF_TYPE_VEC4: return 4;
    case TINYGLTF_TYPE_MAT2: return 4;
    case TINYGLTF_TYPE_MAT3: return 9;
    case TINYGLTF_TYPE_MAT4: return 16;
    default: return 0;
  }
}

// ---- the converter --------------------------------------------------------------------

using namespace vec3;

class gltf_converter {
 public:
  gltf_converter(const tinygltf::Model& g, const fs::path& source, const model_import_options& o, budget& b,
            model_import_result& r)
      : g_(g), options_(o), budget_(b), out_(r), sc_(r.scene), rep_(r.scene.report) {
    source_dir_ = source.parent_path();
    sc_.name = sanitized_utf8(source.stem().string());
  }

  void run() {
    convert_images();
    convert_materials();
    convert_meshes();
    convert_nodes();
    convert_skins();
    convert_animations();
    convert_lights_and_cameras();
    report_extensions();
    prune_joint_nodes();
  }

 private:
  // -- accessor reading (every range checked before a byte is read) --

  struct view {
    const unsigned char* data = nullptr;
    std::uint64_t count = 0, stride = 0;
    int components = 0, component_type = 0;
    bool normalized = false;
  };

  const tinygltf::Accessor& accessor(int index, const std::string& what) const {
    if (index < 0 || static_cast<std::size_t>(index) >= g_.accessors.size())
      refuse(what + ": accessor " + std::to_string(index) + " does not exist (" + std::to_string(g_.accessors.size()) +
             " accessors)");
    return g_.accessors[static_cast<std::size_t>(index)];
  }

  /// The bytes [offset, offset + (count-1) * stride + element) of bufferView `bv_index`, checked.
  const unsigned char* view_bytes(int bv_index, std::uint64_t offset, std::uint64_t count, std::uint64_t& stride,
                                  std::uint64_t element, const std::string& what) const {
    if (bv_index < 0 || static_cast<std::size_t>(bv_index) >= g_.bufferViews.size())
      refuse(what + ": bufferView " + std::to_string(bv_index) + " does not exist");
    const tinygltf::BufferView& bv = g_.bufferViews[static_cast<std::size_t>(bv_index)];
    if (bv.buffer < 0 || static_cast<std::size_t>(bv.buffer) >= g_.buffers.size())
      refuse(what + ": bufferView " + std::to_string(bv_index) + " names buffer " + std::to_string(bv.buffer) +
             ", which does not exist");
    const auto& data = g_.buffers[static_cast<std::size_t>(bv.buffer)].data;
    if (bv.byteOffset > data.size() || bv.byteLength > data.size() - bv.byteOffset)
      refuse(what + ": bufferView " + std::to_string(bv_index) + " (bytes " + std::to_string(bv.byteOffset) + " + " +
             std::to_string(bv.byteLength) + ") exceeds its buffer's " + std::to_string(data.size()) + " bytes");
    if (bv.byteStride != 0 && (bv.byteStride < element || bv.byteStride > 252))
      refuse(what + ": bufferView " + std::to_string(bv_index) + " byteStride " + std::to_string(bv.byteStride) +
             " is below the element size " + std::to_string(element) + " or above 252");
    stride = bv.byteStride != 0 ? bv.byteStride : element;
    if (count == 0) return data.data() + bv.byteOffset;
    const std::uint64_t end = checked_end(offset, count, stride, element);
    if (end > bv.byteLength)
      refuse(what + ": " + std::to_string(count) + " elements of " + std::to_string(element) + " bytes (stride " +
             std::to_string(stride) + ") from byte " + std::to_string(offset) + " exceed bufferView " +
             std::to_string(bv_index) + "'s " + std::to_string(bv.byteLength) + " bytes");
    return data.data() + bv.byteOffset + offset;
  }

  /// Accessor `index` checked: its type is one of `types` (TINYGLTF_TYPE_*)
  /// and its component type one of `component_types`.
  view checked(int index, std::initializer_list<int> types, std::initializer_list<int> component_types,
               const std::string& what) {
    const tinygltf::Accessor& a = accessor(index, what);
    const std::string label = what + " (accessor " + std::to_string(index) + ")";
    if (std::find(types.begin(), types.end(), a.type) == types.end())
      refuse(label + ": element type " + std::to_string(a.type) + " is not what this attribute holds");
    if (std::find(component_types.begin(), component_types.end(), a.componentType) == component_types.end())
      refuse(label + ": component type " + std::to_string(a.componentType) + " is not allowed here");
    view v;
    v.count = a.count;
    v.components = components_of(a.type);
    v.component_type = a.componentType;
    v.normalized = a.normalized;
    const std::uint64_t element = static_cast<std::uint64_t>(v.components) * static_cast<std::uint64_t>(component_size(a.componentType));
    if (a.bufferView >= 0) v.data = view_bytes(a.bufferView, a.byteOffset, a.count, v.stride, element, label);
    else v.stride = element;  // no bufferView: zeros (then sparse values)
    // What the caller will hold: a float per component (charged before it allocates).
    require(budget_.charge_items(a.count, static_cast<std::uint64_t>(v.components) * 4, "glTF accessor data", errc::limit_exceeded));
    return v;
  }

  std::vector<float> floats(int index, std::initializer_list<int> types, std::initializer_list<int> component_types,
                            const std::string& what) {
    const view v = checked(index, types, component_types, what);
    std::vector<float> out(static_cast<std::size_t>(v.count) * static_cast<std::size_t>(v.components), 0.0f);
    const int size = component_size(v.component_type);
    if (v.data != nullptr)
      for (std::uint64_t e = 0; e < v.count; ++e)
        for (int c = 0; c < v.components; ++c)
          out[static_cast<std::size_t>(e) * static_cast<std::size_t>(v.components) + static_cast<std::size_t>(c)] =
              component_as_float(v.data + e * v.stride + static_cast<std::uint64_t>(c * size), v.component_type, v.normalized);
    apply_sparse(index, v, what, [&](std::uint64_t e, const unsigned char* p) {
      for (int c = 0; c < v.components; ++c)
        out[static_cast<std::size_t>(e) * static_cast<std::size_t>(v.components) + static_cast<std::size_t>(c)] =
            component_as_float(p + c * size, v.component_type, v.normalized);
    });
    return out;
  }

  std::vector<std::uint32_t> unsigned_ints(int index, std::initializer_list<int> types, const std::string& what) {
    const view v = checked(index, types,
                           {TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT,
                            TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT},
                           what);
    std::vector<std::uint32_t> out(static_cast<std::size_t>(v.count) * static_cast<std::size_t>(v.components), 0);
    const int size = component_size(v.component_type);
    if (v.data != nullptr)
      for (std::uint64_t e = 0; e < v.count; ++e)
        for (int c = 0; c < v.components; ++c)
          out[static_cast<std::size_t>(e) * static_cast<std::size_t>(v.components) + static_cast<std::size_t>(c)] =
              component_as_u32(v.data + e * v.stride + static_cast<std::uint64_t>(c * size), v.component_type);
    apply_sparse(index, v, what, [&](std::uint64_t e, const unsigned char* p) {
      for (int c = 0; c < v.components; ++c)
        out[static_cast<std::size_t>(e) * static_cast<std::size_t>(v.components) + static_cast<std::size_t>(c)] =
            component_as_u32(p + c * size, v.component_type);
    });
    return out;
  }

  /// A sparse accessor's substitutions: `set(element, value bytes)` per entry, every index checked.
  template <class Set>
  void apply_sparse(int index, const view& v, const std::string& what, Set&& set) {
    const tinygltf::Accessor& a = g_.accessors[static_cast<std::size_t>(index)];
    if (!a.sparse.isSparse) return;
    const std::string label = what + " (sparse accessor " + std::to_string(index) + ")";
    if (a.sparse.count < 0 || static_cast<std::uint64_t>(a.sparse.count) > v.count)
      refuse(label + ": " + std::to_string(a.sparse.count) + " substitutions for " + std::to_string(v.count) + " elements");
    const auto n = static_cast<std::uint64_t>(a.sparse.count);
    const int index_type = a.sparse.indices.componentType;
    if (index_type != TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE && index_type != TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT &&
        index_type != TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT)
      refuse(label + ": index component type " + std::to_string(index_type) + " is not an unsigned integer");
    if (a.sparse.indices.byteOffset < 0 || a.sparse.values.byteOffset < 0) refuse(label + ": negative byteOffset");
    require(budget_.charge_work(n, "glTF sparse accessor entries", errc::limit_exceeded));
    std::uint64_t index_stride = 0, value_stride = 0;
    const std::uint64_t value_size = static_cast<std::uint64_t>(v.components) * static_cast<std::uint64_t>(component_size(v.component_type));
    const unsigned char* indices = view_bytes(a.sparse.indices.bufferView, static_cast<std::uint64_t>(a.sparse.indices.byteOffset), n,
                                              index_stride, static_cast<std::uint64_t>(component_size(index_type)), label + " indices");
    const unsigned char* values = view_bytes(a.sparse.values.bufferView, static_cast<std::uint64_t>(a.sparse.values.byteOffset), n,
                                             value_stride, value_size, label + " values");
    // Sparse data is tightly packed: within the range checked above (a byteStride is never below the element size).
    index_stride = static_cast<std::uint64_t>(component_size(index_type));
    value_stride = value_size;
    for (std::uint64_t k = 0; k < n; ++k) {
      const std::uint32_t e = component_as_u32(indices + k * index_stride, index_type);
      if (e >= v.count) refuse(label + ": substitution " + std::to_string(k) + " names element " + std::to_string(e) +
                               " of " + std::to_string(v.count));
      set(e, values + k * value_stride);
    }
  }

  // -- images --

  void convert_images() {
    sc_.textures.reserve(g_.images.size());
    for (std::size_t i = 0; i < g_.images.size(); ++i) {
      const tinygltf::Image& im = g_.images[i];
      texture t;
      t.name = sanitized_utf8(im.name);
      const std::string where = quoted("image", t.name, i);
      if (im.bufferView >= 0) {
        const tinygltf::BufferView* bv =
            static_cast<std::size_t>(im.bufferView) < g_.bufferViews.size() ? &g_.bufferViews[static_cast<std::size_t>(im.bufferView)] : nullptr;
        std::uint64_t stride = 0;
        const std::uint64_t length = bv != nullptr ? bv->byteLength : 0;
        const unsigned char* p = view_bytes(im.bufferView, 0, length == 0 ? 0 : 1, stride, length, where);
        require(budget_.charge_memory(length, "glTF embedded image", errc::limit_exceeded));
        t.embedded.assign(reinterpret_cast<const std::byte*>(p), reinterpret_cast<const std::byte*>(p) + length);
      } else if (!im.image.empty()) {  // a data: URI, kept by keep_encoded
        t.embedded.assign(reinterpret_cast<const std::byte*>(im.image.data()),
                          reinterpret_cast<const std::byte*>(im.image.data()) + im.image.size());
      }
      if (!t.embedded.empty() || im.uri.empty()) {
        if (auto size = sniff_image_size(t.embedded)) {
          t.width = size->width;
          t.height = size->height;
          t.mip_count = 1;
        }
        t.format = texture_format::rgba8;
        if (t.name.empty()) t.name = "image_" + std::to_string(i);
        if (t.embedded.empty()) rep_.dropped("embedded image", where, "its bytes are empty");
      } else {
        external_image(im.uri, t, where);
      }
      sc_.textures.push_back(std::move(t));
    }
  }

  /// An external image: its URI (percent-decoded) as the scene's, relative to
  /// the source. The file is looked at (its header, for the size; the
  /// dependency list) only when the URI is a safe relative path: never
  /// outside the source's directory. Where the URI may point is the
  /// writer's decision (cook refuses one that leaves the output directory).
  void external_image(const std::string& raw, texture& t, const std::string& where) {
    const fs::path rel(percent_decoded(raw));
    t.uri = sanitized_utf8(rel.generic_string());
    if (t.name.empty()) t.name = sanitized_utf8(rel.stem().string());
    t.format = format_from_extension(rel.extension().string());
    if (!untold::detail::is_safe_relative_path(t.uri)) {
      rep_.info("image file", where, "its URI leaves the source's directory: not read by the importer");
      return;
    }
    const fs::path file = source_dir_ / rel;
    std::error_code ec;
    if (fs::is_regular_file(file, ec)) {
      out_.dependencies.push_back(file);
      if (auto size = sniff_image_size(file)) {  // the header only
        t.width = size->width;
        t.height = size->height;
        t.mip_count = 1;
      }
    } else {
      rep_.dropped("image file", quoted("texture", t.uri, 0), "not found next to the source");
    }
  }

  // -- materials --

  static wrap_mode wrap(int mode) {
    return mode == TINYGLTF_TEXTURE_WRAP_MIRRORED_REPEAT ? wrap_mode::mirror
           : mode == TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE ? wrap_mode::clamp
                                                         : wrap_mode::repeat;
  }
  static texture_filter filter(int f) {
    switch (f) {
      case TINYGLTF_TEXTURE_FILTER_NEAREST: return texture_filter::nearest;
      case TINYGLTF_TEXTURE_FILTER_LINEAR: return texture_filter::linear;
      case TINYGLTF_TEXTURE_FILTER_NEAREST_MIPMAP_NEAREST: return texture_filter::nearest_mipmap_nearest;
      case TINYGLTF_TEXTURE_FILTER_LINEAR_MIPMAP_NEAREST: return texture_filter::linear_mipmap_nearest;
      case TINYGLTF_TEXTURE_FILTER_NEAREST_MIPMAP_LINEAR: return texture_filter::nearest_mipmap_linear;
      case TINYGLTF_TEXTURE_FILTER_LINEAR_MIPMAP_LINEAR: return texture_filter::linear_mipmap_linear;
      default: return texture_filter::unset;
    }
  }

  static float number(const tinygltf::Value& v, const char* key, float fallback) {
    if (!v.IsObject() || !v.Has(key) || !v.Get(key).IsNumber()) return fallback;
    return static_cast<float>(v.Get(key).GetNumberAsDouble());
  }

  /// A material's use of glTF texture `index` (texCoord `uv_set`, extensions `ext`).
  texture_slot slot(int index, int uv_set, const tinygltf::ExtensionMap& ext, bool srgb, const std::string& where) {
    texture_slot s;
    if (index < 0) return s;
    if (static_cast<std::size_t>(index) >= g_.textures.size())
      refuse(where + ": texture " + std::to_string(index) + " does not exist");
    const tinygltf::Texture& tex = g_.textures[static_cast<std::size_t>(index)];
    if (tex.source < 0 || static_cast<std::size_t>(tex.source) >= sc_.textures.size()) {
      rep_.dropped("texture", where, "its image is missing or given only by an extension this importer does not read");
      return s;
    }
    s.texture = static_cast<std::uint32_t>(tex.source);
    s.uv_set = static_cast<std::uint32_t>(std::max(uv_set, 0));
    if (tex.sampler >= 0) {
      if (static_cast<std::size_t>(tex.sampler) >= g_.samplers.size())
        refuse(where + ": sampler " + std::to_string(tex.sampler) + " does not exist");
      const tinygltf::Sampler& sm = g_.samplers[static_cast<std::size_t>(tex.sampler)];
      s.wrap = {wrap(sm.wrapS), wrap(sm.wrapT)};
      s.mag_filter = filter(sm.magFilter);
      s.min_filter = filter(sm.minFilter);
    }
    if (const auto it = ext.find("KHR_texture_transform"); it != ext.end() && it->second.IsObject()) {
      const tinygltf::Value& tt = it->second;
      s.has_transform = true;
      auto pair = [&](const char* key, std::array<float, 2>& out) {
        if (!tt.Has(key) || !tt.Get(key).IsArray() || tt.Get(key).ArrayLen() != 2) return;
        for (int k = 0; k < 2; ++k)
          if (tt.Get(key).Get(k).IsNumber()) out[static_cast<std::size_t>(k)] = static_cast<float>(tt.Get(key).Get(k).GetNumberAsDouble());
      };
      pair("offset", s.offset);
      pair("scale", s.scale);
      s.rotation = number(tt, "rotation", 0.0f);
      if (tt.Has("texCoord") && tt.Get("texCoord").IsInt() && tt.Get("texCoord").Get<int>() >= 0)
        s.uv_set = static_cast<std::uint32_t>(tt.Get("texCoord").Get<int>());
    }
    if (srgb) sc_.textures[s.texture].srgb = true;
    return s;
  }

  void convert_materials() {
    static const std::set<std::string> carried = {"KHR_materials_emissive_strength", "KHR_materials_transmission"};
    for (std::size_t i = 0; i < g_.materials.size(); ++i) {
      const tinygltf::Material& gm = g_.materials[i];
      material m;
      m.name = sanitized_utf8(gm.name);
      const std::string where = quoted("material", m.name, i);
      const auto& pbr = gm.pbrMetallicRoughness;
      for (std::size_t k = 0; k < 4 && k < pbr.baseColorFactor.size(); ++k) m.base_color[k] = static_cast<float>(pbr.baseColorFactor[k]);
      for (std::size_t k = 0; k < 3 && k < gm.emissiveFactor.size(); ++k) m.emissive[k] = static_cast<float>(gm.emissiveFactor[k]);
      m.metallic = static_cast<float>(pbr.metallicFactor);
      m.roughness = static_cast<float>(pbr.roughnessFactor);
      m.normal_scale = static_cast<float>(gm.normalTexture.scale);
      m.occlusion_strength = static_cast<float>(gm.occlusionTexture.strength);
      m.alpha = gm.alphaMode == "MASK"    ? convert::alpha_mode::mask
                : gm.alphaMode == "BLEND" ? convert::alpha_mode::blend
                                          : convert::alpha_mode::opaque;
      m.alpha_cutoff = static_cast<float>(gm.alphaCutoff);
      m.double_sided = gm.doubleSided;
      m.base_color_texture = slot(pbr.baseColorTexture.index, pbr.baseColorTexture.texCoord, pbr.baseColorTexture.extensions, true, where);
      m.metallic_roughness_texture = slot(pbr.metallicRoughnessTexture.index, pbr.metallicRoughnessTexture.texCoord,
                                          pbr.metallicRoughnessTexture.extensions, false, where);
      m.normal_texture = slot(gm.normalTexture.index, gm.normalTexture.texCoord, gm.normalTexture.extensions, false, where);
      m.occlusion_texture = slot(gm.occlusionTexture.index, gm.occlusionTexture.texCoord, gm.occlusionTexture.extensions, false, where);
      m.emissive_texture = slot(gm.emissiveTexture.index, gm.emissiveTexture.texCoord, gm.emissiveTexture.extensions, true, where);
      for (const auto& [name, value] : gm.extensions) {
        if (name == "KHR_materials_emissive_strength") {
          m.emissive_strength = number(value, "emissiveStrength", 1.0f);
        } else if (name == "KHR_materials_transmission") {
          m.transmission = number(value, "transmissionFactor", 0.0f);
          if (value.IsObject() && value.Has("transmissionTexture") && value.Get("transmissionTexture").IsObject()) {
            const tinygltf::Value& ti = value.Get("transmissionTexture");
            const int index = ti.Has("index") && ti.Get("index").IsInt() ? ti.Get("index").Get<int>() : -1;
            const int uv = ti.Has("texCoord") && ti.Get("texCoord").IsInt() ? ti.Get("texCoord").Get<int>() : 0;
            const texture_slot t = slot(index, uv, {}, false, where);
            if (t.used()) m.other_textures.emplace_back("transmission", t.texture);
          }
        } else if (carried.count(name) == 0) {
          rep_.dropped("material extension " + sanitized_utf8(name), where, "not carried by the scene model");
        }
      }
      m.extras = extras_of(gm.extras_json_string);
      sc_.materials.push_back(std::move(m));
    }
  }

  // -- meshes --

  void convert_meshes() {
    mesh_first_.resize(g_.meshes.size() + 1, 0);
    for (std::size_t mi = 0; mi < g_.meshes.size(); ++mi) {
      mesh_first_[mi] = static_cast<std::uint32_t>(sc_.meshes.size());
      const tinygltf::Mesh& gm = g_.meshes[mi];
      // glTF requires at least one; TinyGLTF reads a `primitives` that is not an array as none.
      if (gm.primitives.empty()) refuse(quoted("mesh", gm.name, mi) + " has no primitives (glTF requires an array of at least one)");
      require(budget_.charge_items(gm.primitives.size(), sizeof(mesh), "glTF primitives", errc::limit_exceeded));
      std::vector<std::string> target_names;
      if (gm.extras.IsObject() && gm.extras.Has("targetNames") && gm.extras.Get("targetNames").IsArray()) {
        const tinygltf::Value& names = gm.extras.Get("targetNames");
        for (std::size_t k = 0; k < names.ArrayLen(); ++k)
          target_names.push_back(names.Get(static_cast<int>(k)).IsString() ? sanitized_utf8(names.Get(static_cast<int>(k)).Get<std::string>()) : "");
      }
      for (std::size_t pi = 0; pi < gm.primitives.size(); ++pi) {
        mesh out;
        out.name = sanitized_utf8(gm.name);
        out.extras = extras_of(gm.extras_json_string);
        const std::string where = quoted("mesh", out.name, mi) + (gm.primitives.size() > 1 ? " primitive " + std::to_string(pi) : "");
        convert_primitive(gm, gm.primitives[pi], target_names, where, out);
        sc_.meshes.push_back(std::move(out));
      }
    }
    mesh_first_[g_.meshes.size()] = static_cast<std::uint32_t>(sc_.meshes.size());
  }

  void convert_primitive(const tinygltf::Mesh& gm, const tinygltf::Primitive& p, const std::vector<std::string>& target_names,
                         const std::string& where, mesh& out) {
    const std::initializer_list<int> quantized = {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_BYTE,
                                                      TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_SHORT,
                                                      TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT};
    if (p.material >= 0) {
      if (static_cast<std::size_t>(p.material) >= sc_.materials.size())
        refuse(where + ": material " + std::to_string(p.material) + " does not exist");
      out.material = static_cast<std::uint32_t>(p.material);
    }
    const auto position = p.attributes.find("POSITION");
    if (position == p.attributes.end()) {
      rep_.dropped("primitive without positions", where, "nothing to draw");
      return;
    }
    // KHR_mesh_quantization allows integer positions; the model keeps floats.
    out.positions = floats(position->second, {TINYGLTF_TYPE_VEC3}, quantized, where + " POSITION");
    for (std::size_t k = 0; k < out.positions.size(); ++k)
      if (!untold::detail::is_finite(out.positions[k]))
        refuse(where + " POSITION: " + make_error(errc::not_finite).at_field("POSITION").at_record(static_cast<std::uint32_t>(k / 3))
                                           .with_float(out.positions[k]).describe());
    const std::size_t n = out.vertex_count();
    auto attribute = [&](const std::string& name, std::initializer_list<int> types, std::initializer_list<int> component_types,
                         std::size_t components) -> std::vector<float> {
      const auto it = p.attributes.find(name);
      if (it == p.attributes.end()) return {};
      std::vector<float> v = floats(it->second, types, component_types, where + " " + name);
      if (v.size() / components != n)
        refuse(where + " " + name + ": " + std::to_string(v.size() / components) + " elements for " + std::to_string(n) + " vertices");
      return v;
    };
    std::set<std::string> used = {"POSITION"};
    out.normals = attribute("NORMAL", {TINYGLTF_TYPE_VEC3}, quantized, 3);
    out.tangents = attribute("TANGENT", {TINYGLTF_TYPE_VEC4}, quantized, 4);
    used.insert({"NORMAL", "TANGENT"});
    for (int set = 0;; ++set) {
      const std::string name = "TEXCOORD_" + std::to_string(set);
      if (p.attributes.count(name) == 0) break;
      used.insert(name);
      std::vector<float> uv = attribute(name, {TINYGLTF_TYPE_VEC2}, quantized, 2);
      if (set == 0) out.uv0 = std::move(uv);
      else if (set == 1) out.uv1 = std::move(uv);
      else out.extra_uvs.push_back(std::move(uv));
    }
    if (p.attributes.count("COLOR_0") != 0) {
      used.insert("COLOR_0");
      const int components = accessor(p.attributes.at("COLOR_0"), where).type == TINYGLTF_TYPE_VEC3 ? 3 : 4;
      std::vector<float> c = attribute("COLOR_0", {TINYGLTF_TYPE_VEC3, TINYGLTF_TYPE_VEC4},
                                       {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE,
                                        TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT},
                                       static_cast<std::size_t>(components));
      out.colors.assign(n * 4, 1.0f);
      for (std::size_t v = 0; v < n; ++v)
        for (int k = 0; k < components; ++k) out.colors[4 * v + static_cast<std::size_t>(k)] = c[v * static_cast<std::size_t>(components) + static_cast<std::size_t>(k)];
    }
    convert_influences(p, where, n, used, out);
    for (const auto& [name, index] : p.attributes)
      if (used.count(name) == 0) rep_.dropped("vertex attribute " + sanitized_utf8(name), where, "the model has no place for it");

    // Indices, as a triangle (or line / point) list.
    std::vector<std::uint32_t> indices;
    if (p.indices >= 0) {
      indices = unsigned_ints(p.indices, {TINYGLTF_TYPE_SCALAR}, where + " indices");
      for (std::uint32_t i : indices)
        if (i >= n) refuse(where + " indices: index " + std::to_string(i) + " is not below the " + std::to_string(n) + " vertices");
    } else {
      require(budget_.charge_items(n, 4, "glTF implicit indices", errc::limit_exceeded));
      indices.resize(n);
      std::iota(indices.begin(), indices.end(), 0u);
    }
    const int mode = p.mode < 0 ? TINYGLTF_MODE_TRIANGLES : p.mode;
    switch (mode) {
      case TINYGLTF_MODE_POINTS: out.primitive = topology::point_list; break;
      case TINYGLTF_MODE_LINE: out.primitive = topology::line_list; break;
      case TINYGLTF_MODE_LINE_LOOP:
      case TINYGLTF_MODE_LINE_STRIP: {
        std::vector<std::uint32_t> lines;
        for (std::size_t i = 1; i < indices.size(); ++i) lines.insert(lines.end(), {indices[i - 1], indices[i]});
        if (mode == TINYGLTF_MODE_LINE_LOOP && indices.size() > 2) lines.insert(lines.end(), {indices.back(), indices.front()});
        rep_.changed(mode == TINYGLTF_MODE_LINE_LOOP ? "line loop" : "line strip", where, "carried as a line list");
        indices = std::move(lines);
        out.primitive = topology::line_list;
        break;
      }
      case TINYGLTF_MODE_TRIANGLES: out.primitive = topology::triangle_list; break;
      case TINYGLTF_MODE_TRIANGLE_STRIP:
      case TINYGLTF_MODE_TRIANGLE_FAN: {
        out.primitive = mode == TINYGLTF_MODE_TRIANGLE_STRIP ? topology::triangle_strip : topology::triangle_fan;
        indices = convert::detail::triangle_list(out, indices);
        rep_.changed(mode == TINYGLTF_MODE_TRIANGLE_STRIP ? "triangle strip" : "triangle fan", where, "carried as a triangle list");
        out.primitive = topology::triangle_list;
        break;
      }
      default: refuse(where + ": primitive mode " + std::to_string(mode) + " is not a glTF mode");
    }
    const std::size_t corners = out.primitive == topology::triangle_list ? 3 : out.primitive == topology::line_list ? 2 : 1;
    if (out.primitive != topology::triangle_list)
      rep_.info(out.primitive == topology::line_list ? "line primitives" : "point primitives", where,
                "carried as " + std::string(name(out.primitive)), indices.size() / corners);
    std::uint64_t repeated = 0;
    out.indices.reserve(indices.size() / corners * corners);
    for (std::size_t f = 0; f + corners <= indices.size(); f += corners) {
      const bool repeats = corners == 3 && (indices[f] == indices[f + 1] || indices[f + 1] == indices[f + 2] ||
                                            indices[f] == indices[f + 2]);
      if (repeats) {
        ++repeated;
        continue;
      }
      out.indices.insert(out.indices.end(), indices.begin() + static_cast<std::ptrdiff_t>(f),
                         indices.begin() + static_cast<std::ptrdiff_t>(f + corners));
    }
    rep_.dropped("triangles with a repeated index", where, "degenerate: they cover no pixel", repeated);
    rep_.dropped("faces", where, "indices left over after the last whole primitive", indices.size() % corners == 0 ? 0 : 1);

    finish_normals_and_tangents(where, out);
    convert_morphs(gm, p, target_names, where, out);
    if (!extras_of(p.extras_json_string).empty()) rep_.dropped("primitive extras", where, "the model keeps the mesh's extras");
  }

  void convert_influences(const tinygltf::Primitive& p, const std::string& where, std::size_t n, std::set<std::string>& used,
                          mesh& out) {
    std::vector<vertex_influences> influences;
    for (int set = 0;; ++set) {
      const std::string j = "JOINTS_" + std::to_string(set), w = "WEIGHTS_" + std::to_string(set);
      if (p.attributes.count(j) == 0 || p.attributes.count(w) == 0) break;
      used.insert({j, w});
      const std::vector<std::uint32_t> joints = unsigned_ints(p.attributes.at(j), {TINYGLTF_TYPE_VEC4}, where + " " + j);
      const std::vector<float> weights = floats(p.attributes.at(w), {TINYGLTF_TYPE_VEC4},
                                                {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE,
                                                 TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT},
                                                where + " " + w);
      if (joints.size() != n * 4 || weights.size() != n * 4)
        refuse(where + " " + j + "/" + w + ": element counts differ from the " + std::to_string(n) + " vertices");
      influences.resize(n);
      for (std::size_t v = 0; v < n; ++v)
        for (std::size_t k = 0; k < 4; ++k) {
          const float weight = weights[4 * v + k];
          if (!(weight > 0.0f) || !untold::detail::is_finite(weight)) continue;
          if (joints[4 * v + k] > 65535) refuse(where + " " + j + ": joint " + std::to_string(joints[4 * v + k]) + " above 65535");
          influences[v].emplace_back(weight, static_cast<std::uint16_t>(joints[4 * v + k]));
        }
    }
    if (influences.empty()) return;
    const influence_summary kept = keep_four_largest(influences, out);
    rep_.dropped("joint influences beyond the 4 largest", where,
                 "4 per vertex; the rest renormalised (" + std::to_string(kept.vertices_over) + " vertices)", kept.dropped);
    rep_.changed("weightless vertices", where, "bound rigidly to the first joint of the palette", kept.weightless);
  }

  void finish_normals_and_tangents(const std::string& where, mesh& out) {
    const std::size_t n = out.vertex_count();
    const bool triangles = out.primitive == topology::triangle_list && !out.indices.empty();
    if (out.normals.empty() && triangles && options_.generate_normals) {
      // Area-weighted face normals summed at each vertex the faces share.
      out.normals.assign(n * 3, 0.0f);
      for (std::size_t f = 0; f + 3 <= out.indices.size(); f += 3) {
        const std::uint32_t a = out.indices[f], b = out.indices[f + 1], c = out.indices[f + 2];
        const v3 fn = cross(sub(at3(out.positions, b), at3(out.positions, a)), sub(at3(out.positions, c), at3(out.positions, a)));
        for (const std::uint32_t v : {a, b, c}) {
          const v3 sum = add(at3(out.normals, v), fn);
          out.normals[3 * v] = sum.x, out.normals[3 * v + 1] = sum.y, out.normals[3 * v + 2] = sum.z;
        }
      }
      rep_.changed("normals", where, "generated (smooth over shared vertices) because the source has none");
    }
    std::uint64_t bad_normals = 0;
    for (std::size_t v = 0; v < out.normals.size() / 3; ++v) {
      v3 nv = at3(out.normals, v);
      if (!usable(nv)) {
        nv = {0, 0, 1};
        ++bad_normals;
      } else {
        nv = unit(nv);
      }
      out.normals[3 * v] = nv.x, out.normals[3 * v + 1] = nv.y, out.normals[3 * v + 2] = nv.z;
    }
    rep_.changed("normals", where, "not finite or zero length; replaced by +Z", bad_normals);
    if (out.tangents.empty() && triangles && !out.normals.empty() && !out.uv0.empty() && options_.generate_tangents) {
      // Per-triangle uv0 gradients summed at each vertex, then orthogonalised.
      std::vector<float> tan(n * 3, 0.0f), bit(n * 3, 0.0f);
      for (std::size_t f = 0; f + 3 <= out.indices.size(); f += 3) {
        const std::uint32_t i[3] = {out.indices[f], out.indices[f + 1], out.indices[f + 2]};
        const v3 e1 = sub(at3(out.positions, i[1]), at3(out.positions, i[0]));
        const v3 e2 = sub(at3(out.positions, i[2]), at3(out.positions, i[0]));
        const float du1 = out.uv0[2 * i[1]] - out.uv0[2 * i[0]], dv1 = out.uv0[2 * i[1] + 1] - out.uv0[2 * i[0] + 1];
        const float du2 = out.uv0[2 * i[2]] - out.uv0[2 * i[0]], dv2 = out.uv0[2 * i[2] + 1] - out.uv0[2 * i[0] + 1];
        const float det = du1 * dv2 - du2 * dv1;
        if (!(std::fabs(det) > 1e-20f)) continue;
        const float r = 1.0f / det;
        const v3 t = mul(sub(mul(e1, dv2), mul(e2, dv1)), r), b = mul(sub(mul(e2, du1), mul(e1, du2)), r);
        for (const std::uint32_t v : i) {
          const v3 ts = add(at3(tan, v), t), bs = add(at3(bit, v), b);
          tan[3 * v] = ts.x, tan[3 * v + 1] = ts.y, tan[3 * v + 2] = ts.z;
          bit[3 * v] = bs.x, bit[3 * v + 1] = bs.y, bit[3 * v + 2] = bs.z;
        }
      }
      out.tangents.assign(n * 4, 0.0f);
      for (std::size_t v = 0; v < n; ++v) {
        out.tangents[4 * v] = tan[3 * v], out.tangents[4 * v + 1] = tan[3 * v + 1], out.tangents[4 * v + 2] = tan[3 * v + 2];
        out.tangents[4 * v + 3] = dot(cross(at3(out.normals, v), at3(tan, v)), at3(bit, v)) < 0.0f ? -1.0f : 1.0f;
      }
      rep_.changed("tangents", where, "generated from uv0 because the source has none");
    }
    std::uint64_t bad_tangents = 0;
    for (std::size_t v = 0; v < out.tangents.size() / 4 && !out.normals.empty(); ++v) {
      const v3 nv = at3(out.normals, v);
      const v3 t{out.tangents[4 * v], out.tangents[4 * v + 1], out.tangents[4 * v + 2]};
      v3 ortho = sub(t, mul(nv, dot(nv, t)));
      if (usable(ortho)) {
        ortho = unit(ortho);
      } else {
        ortho = any_perpendicular(nv);
        ++bad_tangents;
      }
      out.tangents[4 * v] = ortho.x, out.tangents[4 * v + 1] = ortho.y, out.tangents[4 * v + 2] = ortho.z;
      out.tangents[4 * v + 3] = out.tangents[4 * v + 3] < 0.0f ? -1.0f : 1.0f;
    }
    rep_.changed("tangents", where, "degenerate (no usable direction); replaced by a perpendicular", bad_tangents);
  }

  void convert_morphs(const tinygltf::Mesh& gm, const tinygltf::Primitive& p, const std::vector<std::string>& target_names,
                      const std::string& where, mesh& out) {
    const std::initializer_list<int> deltas = {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_BYTE,
                                                   TINYGLTF_COMPONENT_TYPE_SHORT};
    const std::size_t n = out.vertex_count();
    for (std::size_t k = 0; k < p.targets.size(); ++k) {
      morph_target t;
      t.name = k < target_names.size() ? target_names[k] : "";
      t.default_weight = k < gm.weights.size() ? static_cast<float>(gm.weights[k]) : 0.0f;
      for (const auto& [name, index] : p.targets[k]) {
        std::vector<float>* into = name == "POSITION" ? &t.position_deltas : name == "NORMAL" ? &t.normal_deltas
                                   : name == "TANGENT" ? &t.tangent_deltas : nullptr;
        if (into == nullptr) {
          rep_.dropped("morph target " + sanitized_utf8(name) + " deltas", where, "the model keeps position, normal and tangent deltas");
          continue;
        }
        *into = floats(index, {TINYGLTF_TYPE_VEC3}, deltas, where + " morph target " + std::to_string(k) + " " + name);
        if (into->size() != n * 3)
          refuse(where + " morph target " + std::to_string(k) + " " + name + ": " + std::to_string(into->size() / 3) +
                 " elements for " + std::to_string(n) + " vertices");
      }
      out.morphs.push_back(std::move(t));
    }
  }

  // -- nodes --

  void convert_nodes() {
    const std::size_t count = g_.nodes.size();
    require(budget_.charge_items(count, sizeof(node), "glTF nodes", errc::limit_exceeded));
    // Parents from the children lists: a forest, or refused.
    std::vector<std::uint32_t> parent(count, no_ref);
    for (std::size_t i = 0; i < count; ++i)
      for (const int c : g_.nodes[i].children) {
        if (c < 0 || static_cast<std::size_t>(c) >= count)
          refuse("node " + std::to_string(i) + ": child " + std::to_string(c) + " does not exist");
        if (parent[static_cast<std::size_t>(c)] != no_ref)
          refuse("node " + std::to_string(c) + " has two parents (nodes " + std::to_string(parent[static_cast<std::size_t>(c)]) +
                 " and " + std::to_string(i) + "): the node hierarchy must be a tree");
        parent[static_cast<std::size_t>(c)] = static_cast<std::uint32_t>(i);
      }
    // A cycle: following parents from some node never reaches a root (linear: each node is walked once).
    std::vector<std::uint8_t> state(count, 0);  // 0 unseen, 1 on the current path, 2 reaches a root
    std::vector<std::uint32_t> path;
    for (std::size_t start = 0; start < count; ++start) {
      path.clear();
      std::uint32_t at = static_cast<std::uint32_t>(start);
      while (at != no_ref && state[at] == 0) {
        state[at] = 1;
        path.push_back(at);
        at = parent[at];
      }
      if (at != no_ref && state[at] == 1) refuse("node " + std::to_string(at) + " is its own ancestor: the node hierarchy has a cycle");
      for (const std::uint32_t v : path) state[v] = 2;
    }
    // Roots: the default scene's (scene 0 when none is named), or every parentless node.
    std::vector<std::uint32_t> roots;
    if (!g_.scenes.empty()) {
      const std::size_t scene = g_.defaultScene >= 0 ? static_cast<std::size_t>(g_.defaultScene) : 0;
      if (scene >= g_.scenes.size()) refuse("the default scene " + std::to_string(scene) + " does not exist");
      for (const int r : g_.scenes[scene].nodes) {
        if (r < 0 || static_cast<std::size_t>(r) >= count) refuse("scene " + std::to_string(scene) + ": node " + std::to_string(r) + " does not exist");
        if (parent[static_cast<std::size_t>(r)] != no_ref) refuse("scene " + std::to_string(scene) + ": node " + std::to_string(r) + " is not a root");
        roots.push_back(static_cast<std::uint32_t>(r));
      }
      if (g_.scenes.size() > 1) rep_.dropped("scenes", "", "only the default scene is imported", g_.scenes.size() - 1);
    } else {
      for (std::size_t i = 0; i < count; ++i)
        if (parent[i] == no_ref) roots.push_back(static_cast<std::uint32_t>(i));
    }
    // Preorder, parents first (an explicit stack: no recursion on the file's depth).
    scene_node_.assign(count, no_ref);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stack;
    for (auto r = roots.rbegin(); r != roots.rend(); ++r) stack.emplace_back(*r, no_ref);
    std::uint64_t sheared = 0;
    std::vector<std::uint32_t> drawn_by(sc_.meshes.size(), no_ref);
    while (!stack.empty()) {
      const auto [gi, scene_parent] = stack.back();
      stack.pop_back();
      if (scene_node_[gi] != no_ref) refuse("scene: node " + std::to_string(gi) + " is listed twice");
      const tinygltf::Node& gn = g_.nodes[gi];
      const auto index = static_cast<std::uint32_t>(sc_.nodes.size());
      scene_node_[gi] = index;
      gltf_node_.push_back(gi);
      node out;
      out.name = sanitized_utf8(gn.name);
      out.parent = scene_parent;
      out.extras = extras_of(gn.extras_json_string);
      if (gn.matrix.size() == 16) {
        mat4 m{};
        for (std::size_t k = 0; k < 16; ++k) m[k] = static_cast<float>(gn.matrix[k]);
        const decomposed_transform d = decompose(m);
        out.local = d.trs;
        sheared += d.exact ? 0 : 1;
      } else {
        for (std::size_t k = 0; k < 3 && gn.translation.size() == 3; ++k) out.local.translation[k] = static_cast<float>(gn.translation[k]);
        for (std::size_t k = 0; k < 4 && gn.rotation.size() == 4; ++k) out.local.rotation[k] = static_cast<float>(gn.rotation[k]);
        for (std::size_t k = 0; k < 3 && gn.scale.size() == 3; ++k) out.local.scale[k] = static_cast<float>(gn.scale[k]);
      }
      if (gn.mesh >= 0) {
        if (static_cast<std::size_t>(gn.mesh) >= g_.meshes.size()) refuse("node " + std::to_string(gi) + ": mesh " + std::to_string(gn.mesh) + " does not exist");
        for (std::uint32_t m = mesh_first_[static_cast<std::size_t>(gn.mesh)]; m < mesh_first_[static_cast<std::size_t>(gn.mesh) + 1]; ++m)
          out.meshes.push_back(m);
        const tinygltf::Mesh& gm = g_.meshes[static_cast<std::size_t>(gn.mesh)];
        if (!gn.weights.empty() && gn.weights != gm.weights)
          rep_.changed("node morph weights", quoted("node", out.name, gi), "the mesh's default weights are kept");
      }
      sc_.nodes.push_back(std::move(out));
      const mat4 local = sc_.nodes.back().local.matrix();
      world_.push_back(scene_parent == no_ref ? local : multiply(world_[scene_parent], local));
      for (auto c = gn.children.rbegin(); c != gn.children.rend(); ++c) stack.emplace_back(static_cast<std::uint32_t>(*c), index);
    }
    rep_.changed("node transforms", "", "shear or projection cannot be expressed as translation/rotation/scale; decomposed", sheared);
    rep_.dropped("nodes", "", "not in the imported scene", count - sc_.nodes.size());
  }

  // -- skins and skeletons --

  void convert_skins() {
    if (g_.skins.empty()) return;
    const std::size_t count = sc_.nodes.size();
    // Skins sharing a joint node share a skeleton (union-find over scene nodes).
    std::vector<std::uint32_t> root(count);
    std::iota(root.begin(), root.end(), 0u);
    auto find = [&](std::uint32_t x) {
      while (root[x] != x) x = root[x] = root[root[x]];
      return x;
    };
    std::vector<std::vector<std::uint32_t>> skin_nodes(g_.skins.size());
    std::vector<char> is_joint(count, 0);
    for (std::size_t s = 0; s < g_.skins.size(); ++s) {
      require(budget_.charge_items(g_.skins[s].joints.size(), sizeof(joint), "glTF skin joints", errc::limit_exceeded));
      for (const int j : g_.skins[s].joints) {
        if (j < 0 || static_cast<std::size_t>(j) >= g_.nodes.size()) refuse("skin " + std::to_string(s) + ": joint node " + std::to_string(j) + " does not exist");
        const std::uint32_t nd = scene_node_[static_cast<std::size_t>(j)];
        if (nd == no_ref) refuse("skin " + std::to_string(s) + ": joint node " + std::to_string(j) + " is not in the imported scene");
        skin_nodes[s].push_back(nd);
        is_joint[nd] = 1;
        root[find(nd)] = find(skin_nodes[s].front());
      }
    }
    // skin.skeleton names the skeleton's root: every node under it that draws nothing (no mesh, camera
    // or light) is a joint of that skeleton too, bound to no vertex (an animated root, helper bones).
    // One pass: nodes come parents first.
    std::vector<std::uint32_t> under(count, no_ref);  // node -> the skin whose skeleton root it is under
    for (std::size_t s = 0; s < g_.skins.size(); ++s) {
      const int r = g_.skins[s].skeleton;
      if (r < 0 || skin_nodes[s].empty()) continue;
      if (static_cast<std::size_t>(r) >= g_.nodes.size()) refuse("skin " + std::to_string(s) + ": skeleton node " + std::to_string(r) + " does not exist");
      const std::uint32_t nd = scene_node_[static_cast<std::size_t>(r)];
      if (nd != no_ref && under[nd] == no_ref) under[nd] = static_cast<std::uint32_t>(s);
    }
    for (std::uint32_t nd = 0; nd < count; ++nd) {
      const std::uint32_t parent = sc_.nodes[nd].parent;
      if (under[nd] == no_ref && parent != no_ref) under[nd] = under[parent];
      if (under[nd] == no_ref || is_joint[nd]) continue;
      const tinygltf::Node& gn = g_.nodes[gltf_node_[nd]];
      if (!sc_.nodes[nd].meshes.empty() || gn.camera >= 0 || gn.extensions.count("KHR_lights_punctual") != 0) continue;
      is_joint[nd] = 1;
      root[find(nd)] = find(skin_nodes[under[nd]].front());
    }
    std::map<std::uint32_t, std::uint32_t> skeleton_of_root;
    joint_of_node_.assign(count, no_ref);
    skeleton_of_node_.assign(count, no_ref);
    for (std::uint32_t nd = 0; nd < count; ++nd) {  // preorder: parents first
      if (!is_joint[nd]) continue;
      const std::uint32_t r = find(nd);
      auto [it, fresh] = skeleton_of_root.emplace(r, static_cast<std::uint32_t>(sc_.skeletons.size()));
      if (fresh) sc_.skeletons.push_back({.name = sc_.nodes[nd].name, .node = sc_.nodes[nd].parent, .joints = {}});
      skeleton& k = sc_.skeletons[it->second];
      joint j;
      j.name = sc_.nodes[nd].name;
      std::uint32_t p = sc_.nodes[nd].parent;
      while (p != no_ref && !(is_joint[p] && find(p) == r)) p = sc_.nodes[p].parent;
      j.parent = p == no_ref ? no_ref : joint_of_node_[p];
      if (p == sc_.nodes[nd].parent) {
        j.rest = sc_.nodes[nd].local;
      } else {
        j.rest = decompose(p == no_ref ? world_[nd] : multiply(inverse_affine(world_[p]), world_[nd])).trs;
        if (p != no_ref) rep_.changed("joint rest pose", quoted("joint", j.name, nd), "composed across nodes that are not joints");
      }
      joint_of_node_[nd] = static_cast<std::uint32_t>(k.joints.size());
      skeleton_of_node_[nd] = it->second;
      k.joints.push_back(std::move(j));
    }
    std::vector<std::vector<char>> bind_set(sc_.skeletons.size());
    for (std::size_t s = 0; s < sc_.skeletons.size(); ++s) bind_set[s].assign(sc_.skeletons[s].joints.size(), 0);
    for (std::size_t s = 0; s < g_.skins.size(); ++s) {
      const tinygltf::Skin& gs = g_.skins[s];
      skin out;
      if (skin_nodes[s].empty()) {
        sc_.skins.push_back(out);  // a skin without joints binds nothing; kept so indices stay glTF's
        continue;
      }
      out.skeleton = skeleton_of_node_[skin_nodes[s].front()];
      std::vector<float> ibm;
      if (gs.inverseBindMatrices >= 0) {
        ibm = floats(gs.inverseBindMatrices, {TINYGLTF_TYPE_MAT4}, {TINYGLTF_COMPONENT_TYPE_FLOAT}, "skin " + std::to_string(s) + " inverseBindMatrices");
        if (ibm.size() < skin_nodes[s].size() * 16)
          refuse("skin " + std::to_string(s) + ": " + std::to_string(ibm.size() / 16) + " inverse bind matrices for " +
                 std::to_string(skin_nodes[s].size()) + " joints");
      }
      for (std::size_t k = 0; k < skin_nodes[s].size(); ++k) {
        const std::uint32_t j = joint_of_node_[skin_nodes[s][k]];
        out.joints.push_back(j);
        mat4 m = identity_matrix;
        if (!ibm.empty()) std::copy_n(ibm.begin() + static_cast<std::ptrdiff_t>(16 * k), 16, m.begin());
        mat4& stored = sc_.skeletons[out.skeleton].joints[j].inverse_bind;
        if (!bind_set[out.skeleton][j]) {
          stored = m;
          bind_set[out.skeleton][j] = 1;
        } else if (stored != m) {
          rep_.changed("inverse bind matrix", quoted("joint", sc_.skeletons[out.skeleton].joints[j].name, j), "skins disagree; the first one is kept");
        }
      }
      sc_.skins.push_back(std::move(out));
    }
    // Meshes take the skin of the first node that draws them skinned.
    for (std::uint32_t nd = 0; nd < count; ++nd) {
      const tinygltf::Node& gn = g_.nodes[gltf_node_[nd]];
      if (gn.skin < 0) continue;
      if (static_cast<std::size_t>(gn.skin) >= g_.skins.size()) refuse("node " + std::to_string(gltf_node_[nd]) + ": skin " + std::to_string(gn.skin) + " does not exist");
      for (const std::uint32_t m : sc_.nodes[nd].meshes) {
        mesh& ms = sc_.meshes[m];
        const std::string where = quoted("mesh", ms.name, m);
        if (ms.joints.empty()) continue;
        if (sc_.skins[static_cast<std::size_t>(gn.skin)].joints.empty()) continue;
        if (ms.skin == no_ref) ms.skin = static_cast<std::uint32_t>(gn.skin);
        else if (ms.skin != static_cast<std::uint32_t>(gn.skin)) rep_.changed("skin", where, "drawn with two skins; the first is kept");
      }
    }
    for (std::size_t m = 0; m < sc_.meshes.size(); ++m) {
      mesh& ms = sc_.meshes[m];
      if (ms.joints.empty()) continue;
      const std::size_t palette = ms.skin == no_ref ? 0 : sc_.skins[ms.skin].joints.size();
      bool fits = ms.skin != no_ref;
      for (const auto& j : ms.joints)
        for (const std::uint16_t k : j) fits = fits && k < palette;
      if (!fits) {
        rep_.dropped("skinning", quoted("mesh", ms.name, m), ms.skin == no_ref ? "no node draws it with a skin" : "a joint index is past the skin's joints");
        ms.joints.clear();
        ms.weights.clear();
        ms.skin = no_ref;
      }
    }
  }

  // -- animations --

  void convert_animations() {
    for (std::size_t ai = 0; ai < g_.animations.size(); ++ai) {
      const tinygltf::Animation& ga = g_.animations[ai];
      animation out;
      out.name = sanitized_utf8(ga.name);
      const std::string where = quoted("clip", out.name, ai);
      std::uint64_t unbound = 0;
      for (const tinygltf::AnimationChannel& ch : ga.channels) {
        if (ch.sampler < 0 || static_cast<std::size_t>(ch.sampler) >= ga.samplers.size())
          refuse(where + ": channel sampler " + std::to_string(ch.sampler) + " does not exist");
        if (ch.target_node < 0 || static_cast<std::size_t>(ch.target_node) >= g_.nodes.size() ||
            scene_node_[static_cast<std::size_t>(ch.target_node)] == no_ref) {
          ++unbound;
          continue;
        }
        const tinygltf::AnimationSampler& sm = ga.samplers[static_cast<std::size_t>(ch.sampler)];
        animation_channel c;
        c.node = scene_node_[static_cast<std::size_t>(ch.target_node)];
        const std::size_t components = ch.target_path == "rotation" ? 4 : 3;
        if (ch.target_path == "translation") c.path = anim_path::translation;
        else if (ch.target_path == "rotation") c.path = anim_path::rotation;
        else if (ch.target_path == "scale") c.path = anim_path::scale;
        else if (ch.target_path == "weights") c.path = anim_path::weights;
        else {
          rep_.dropped("animation channel path " + sanitized_utf8(ch.target_path), where, "not a glTF 2.0 path");
          continue;
        }
        if (c.path != anim_path::weights && !skeleton_of_node_.empty()) {
          c.skeleton = skeleton_of_node_[c.node];
          c.joint = joint_of_node_[c.node];
        }
        c.interp = sm.interpolation == "STEP" ? interpolation::step
                   : sm.interpolation == "CUBICSPLINE" ? interpolation::cubic_spline
                                                        : interpolation::linear;
        const std::string label = where + " channel " + ch.target_path;
        c.times = floats(sm.input, {TINYGLTF_TYPE_SCALAR}, {TINYGLTF_COMPONENT_TYPE_FLOAT}, label + " input");
        c.values = c.path == anim_path::weights
                       ? floats(sm.output, {TINYGLTF_TYPE_SCALAR}, {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_SHORT, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT}, label + " output")
                       : floats(sm.output, {components == 4 ? TINYGLTF_TYPE_VEC4 : TINYGLTF_TYPE_VEC3},
                                components == 4 ? std::initializer_list<int>{TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_SHORT, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT}
                                                : std::initializer_list<int>{TINYGLTF_COMPONENT_TYPE_FLOAT},
                                label + " output");
        for (std::size_t k = 1; k < c.times.size(); ++k)
          if (!(c.times[k] >= c.times[k - 1])) refuse(label + ": key times are not non-decreasing finite seconds");
        if (!c.times.empty() && !untold::detail::is_finite(c.times.front())) refuse(label + ": key times are not finite");
        const std::size_t per_key = c.interp == interpolation::cubic_spline ? 3 : 1;
        if (c.path != anim_path::weights && c.values.size() != c.times.size() * components * per_key)
          refuse(label + ": " + std::to_string(c.values.size()) + " output values for " + std::to_string(c.times.size()) + " keys");
        if (c.path == anim_path::weights && (c.times.empty() ? !c.values.empty() : c.values.size() % (c.times.size() * per_key) != 0))
          refuse(label + ": " + std::to_string(c.values.size()) + " weights do not divide among " + std::to_string(c.times.size()) + " keys");
        if (!c.times.empty()) out.duration = std::max(out.duration, c.times.back());
        out.channels.push_back(std::move(c));
      }
      rep_.dropped("animation channels", where, "their target is no node of the imported scene", unbound);
      sc_.animations.push_back(std::move(out));
    }
  }

  // -- lights and cameras: one per node that places them --

  void convert_lights_and_cameras() {
    std::vector<char> light_placed(g_.lights.size(), 0), camera_placed(g_.cameras.size(), 0);
    for (std::uint32_t nd = 0; nd < sc_.nodes.size(); ++nd) {
      const tinygltf::Node& gn = g_.nodes[gltf_node_[nd]];
      if (const auto it = gn.extensions.find("KHR_lights_punctual"); it != gn.extensions.end()) {
        const tinygltf::Value& v = it->second;
        const int li = v.IsObject() && v.Has("light") && v.Get("light").IsInt() ? v.Get("light").Get<int>() : -1;
        if (li < 0 || static_cast<std::size_t>(li) >= g_.lights.size()) refuse("node " + std::to_string(gltf_node_[nd]) + ": light " + std::to_string(li) + " does not exist");
        light_placed[static_cast<std::size_t>(li)] = 1;
        sc_.lights.push_back(convert_light(g_.lights[static_cast<std::size_t>(li)], nd));
      }
      if (gn.camera >= 0) {
        if (static_cast<std::size_t>(gn.camera) >= g_.cameras.size()) refuse("node " + std::to_string(gltf_node_[nd]) + ": camera " + std::to_string(gn.camera) + " does not exist");
        camera_placed[static_cast<std::size_t>(gn.camera)] = 1;
        sc_.cameras.push_back(convert_camera(g_.cameras[static_cast<std::size_t>(gn.camera)], nd));
      }
    }
    rep_.dropped("light", "", "no node of the imported scene places it",
                 static_cast<std::uint64_t>(std::count(light_placed.begin(), light_placed.end(), 0)));
    rep_.dropped("camera", "", "no node of the imported scene places it",
                 static_cast<std::uint64_t>(std::count(camera_placed.begin(), camera_placed.end(), 0)));
  }

  /// A joint node with only joints below it, drawing nothing and placing no
  /// light, camera or skeleton, is the skeleton's: it leaves the node list
  /// (the skeleton holds its name, parent and rest pose), so that writers do
  /// not draw the hierarchy twice (glTF would get two copies, .untold an
  /// entity per bone). Nodes come parents first, so one backward pass marks
  /// what stays. Linear in the nodes.
  void prune_joint_nodes() {
    if (joint_of_node_.empty()) return;
    const std::size_t n = sc_.nodes.size();
    std::vector<char> keep(n, 0);
    const auto hold = [&](std::uint32_t nd) {
      if (nd != no_ref) keep[nd] = 1;
    };
    for (const skeleton& k : sc_.skeletons) hold(k.node);
    for (const light& l : sc_.lights) hold(l.node);
    for (const camera& c : sc_.cameras) hold(c.node);
    for (const animation& a : sc_.animations)
      for (const animation_channel& c : a.channels)
        if (c.skeleton == no_ref) hold(c.node);
    for (std::size_t i = n; i-- > 0;) {
      if (joint_of_node_[i] == no_ref || !sc_.nodes[i].meshes.empty()) keep[i] = 1;
      if (keep[i] && sc_.nodes[i].parent != no_ref) keep[sc_.nodes[i].parent] = 1;
    }
    std::vector<std::uint32_t> index(n, no_ref);
    std::vector<node> kept;
    for (std::size_t i = 0; i < n; ++i) {
      if (!keep[i]) continue;
      index[i] = static_cast<std::uint32_t>(kept.size());
      node nd = std::move(sc_.nodes[i]);
      if (nd.parent != no_ref) nd.parent = index[nd.parent];  // parents come first: already renumbered
      kept.push_back(std::move(nd));
    }
    if (kept.size() == n) return;
    rep_.info("joint nodes", "", "held by the skeleton, not repeated as scene nodes", n - kept.size());
    sc_.nodes = std::move(kept);
    const auto renumber = [&](std::uint32_t& nd) {
      if (nd != no_ref) nd = index[nd];
    };
    for (skeleton& k : sc_.skeletons) renumber(k.node);
    for (light& l : sc_.lights) renumber(l.node);
    for (camera& c : sc_.cameras) renumber(c.node);
    for (animation& a : sc_.animations)
      for (animation_channel& c : a.channels) {
        if (c.skeleton != no_ref) c.node = no_ref;  // a joint's channel names its joint
        renumber(c.node);
      }
  }

  light convert_light(const tinygltf::Light& gl, std::uint32_t nd) const {
    light out;
    out.name = sanitized_utf8(gl.name.empty() ? sc_.nodes[nd].name : gl.name);
    out.node = nd;
    out.kind = gl.type == "directional" ? light_kind::directional : gl.type == "spot" ? light_kind::spot : light_kind::point;
    for (std::size_t k = 0; k < 3 && gl.color.size() == 3; ++k) out.color[k] = static_cast<float>(gl.color[k]);
    out.intensity = static_cast<float>(gl.intensity);
    out.range = static_cast<float>(gl.range);
    out.inner_cone = static_cast<float>(gl.spot.innerConeAngle);
    out.outer_cone = static_cast<float>(gl.spot.outerConeAngle);
    return out;
  }

  camera convert_camera(const tinygltf::Camera& gc, std::uint32_t nd) {
    camera out;
    out.name = sanitized_utf8(gc.name.empty() ? sc_.nodes[nd].name : gc.name);
    out.node = nd;
    out.orthographic = gc.type == "orthographic";
    if (out.orthographic) {
      out.znear = static_cast<float>(gc.orthographic.znear);
      out.zfar = static_cast<float>(gc.orthographic.zfar);
      rep_.dropped("orthographic extent", quoted("camera", out.name, nd), "the model's cameras carry no magnification");
    } else {
      out.yfov = static_cast<float>(gc.perspective.yfov);
      out.aspect = static_cast<float>(gc.perspective.aspectRatio);
      out.znear = static_cast<float>(gc.perspective.znear);
      out.zfar = static_cast<float>(gc.perspective.zfar);  // 0: infinite (glTF's absent zfar)
    }
    return out;
  }

  void report_extensions() {
    static const std::set<std::string> carried = {"KHR_texture_transform", "KHR_materials_emissive_strength",
                                                  "KHR_materials_transmission", "KHR_lights_punctual",
                                                  "KHR_mesh_quantization"};
    for (const std::string& e : g_.extensionsUsed)
      if (carried.count(e) == 0) rep_.dropped("glTF extension " + sanitized_utf8(e), "", "not carried by the scene model");
    if (g_.extras.Type() != tinygltf::NULL_TYPE) rep_.dropped("asset extras", "", "the model keeps node, mesh and material extras");
  }

  const tinygltf::Model& g_;
  const model_import_options& options_;
  budget& budget_;
  model_import_result& out_;
  scene& sc_;
  conversion_report& rep_;
  fs::path source_dir_;
  std::vector<std::uint32_t> mesh_first_;         // glTF mesh m -> its first scene mesh (size meshes + 1)
  std::vector<std::uint32_t> scene_node_;         // glTF node -> scene node (no_ref: not imported)
  std::vector<std::uint32_t> gltf_node_;          // scene node -> glTF node
  std::vector<mat4> world_;                       // scene node -> world matrix
  std::vector<std::uint32_t> joint_of_node_, skeleton_of_node_;  // scene node -> joint / skeleton
};

std::vector<unsigned char> read_file(const fs::path& path, const limits& lim) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) refuse(make_error(errc::io_open_failed).describe());
  if (size == 0) refuse(make_error(errc::io_empty_file).describe());
  if (size > lim.max_total_bytes)
    refuse(make_error(errc::limit_exceeded).at_field("glTF file size").with_value(size).with_limit(lim.max_total_bytes).describe());
  std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (static_cast<std::uintmax_t>(in.gcount()) != size) refuse(make_error(errc::io_read_failed).describe());
  return bytes;
}

bool has_glb_magic(const fs::path& path) {
  char head[4]{};
  std::ifstream in(path, std::ios::binary);
  in.read(head, 4);
  return in.gcount() == 4 && std::memcmp(head, "glTF", 4) == 0;
}

}  // namespace

bool is_gltf(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return lower_extension(path) == ".gltf";
  return has_glb_magic(path) || lower_extension(path) == ".gltf";
}

model_import_result import_gltf(const fs::path& path, const model_import_options& options) {
  model_import_result r;
  r.gltf = true;
  try {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) refuse("no such file");
    budget own(options.limits, fs::file_size(path, ec));
    budget& b = budget::own_or_shared(options.budget, own);
    const std::vector<unsigned char> bytes = read_file(path, options.limits);
    const bool binary = bytes.size() >= 4 && std::memcmp(bytes.data(), "glTF", 4) == 0;
    const std::string_view json_text =
        binary ? glb_json(bytes) : std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    // Two JSON trees (ours for the buffer list, TinyGLTF's), about 16 bytes
    // of tree per byte of text each, and TinyGLTF's copy of the model.
    require(b.charge_memory(budget::product(json_text.size(), 48), "glTF JSON", errc::limit_exceeded));

    const fs::path dir = path.parent_path();
    file_access access;
    access.buffers = buffer_files(json_text, dir);
    access.charge = &b;
    access.read = &r.dependencies;
    tinygltf::TinyGLTF loader;
    loader.SetFsCallbacks({&allowed_exists, &expand_nothing, &allowed_read, &no_write, &access});
    loader.SetImageLoader(&keep_encoded, &b);
    loader.SetStoreOriginalJSONForExtrasAndExtensions(true);
    tinygltf::Model model;
    std::string err, warn;
    const std::string base = dir.string();
    const bool ok = binary ? loader.LoadBinaryFromMemory(&model, &err, &warn, bytes.data(), static_cast<unsigned>(bytes.size()), base)
                           : loader.LoadASCIIFromString(&model, &err, &warn, json_text.data(),
                                                        static_cast<unsigned>(json_text.size()), base);
    if (!ok) {
      while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
      refuse("TinyGLTF: " + sanitized_utf8(err.empty() ? "the document is not glTF 2.0" : err));
    }
    if (model.asset.version.rfind("2.", 0) != 0) refuse("asset.version '" + sanitized_utf8(model.asset.version) + "' is not glTF 2.x");
    for (const std::string& e : model.extensionsRequired) {
      static const std::set<std::string> readable = {"KHR_texture_transform", "KHR_materials_emissive_strength",
                                                     "KHR_materials_transmission", "KHR_lights_punctual",
                                                     "KHR_mesh_quantization"};
      if (readable.count(e) == 0) refuse("the file requires extension " + sanitized_utf8(e) + ", which this importer does not read");
    }
    gltf_converter c(model, path, options, b, r);
    c.run();
    if (auto s = convert::validate_model(r.scene); !s) refuse("the imported scene is inconsistent: " + s.error().describe());
    r.dependencies.push_back(path);
    for (fs::path& d : r.dependencies) d = fs::absolute(d, ec).lexically_normal();
    std::sort(r.dependencies.begin(), r.dependencies.end());
    r.dependencies.erase(std::unique(r.dependencies.begin(), r.dependencies.end()), r.dependencies.end());
  } catch (const refused& e) {
    r = {};
    r.gltf = true;
    r.error = path.string() + ": cannot import: " + e.why;
  } catch (const std::exception& e) {  // TinyGLTF / nlohmann-json / allocation
    r = {};
    r.gltf = true;
    r.error = path.string() + ": cannot import: " + e.what();
  }
  return r;
}

}  // namespace untold::tools
