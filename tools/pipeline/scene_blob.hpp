// tools/pipeline/scene_blob.hpp - a neutral scene (convert/model.hpp) as
// bytes and back, exactly: every field, floats bit for bit. The distributed
// tile cook (cook_tiles.hpp) cuts the source once at plan time and hands
// each job its tile this way, so a job's output equals the single-process
// cook's without importing the source again.
//
//   std::vector<std::byte> bytes;
//   untold::tools::blob_writer w{bytes};
//   w(scene);                                   // any mix of fields, in order
//   untold::tools::blob_reader r{bytes};
//   convert::scene back;
//   r(back);
//   if (!r.ok()) ...                            // truncated or inconsistent: nothing trusted
//
// Not a file format: the bytes are for the same build on machines of one
// cluster (native byte order, recorded in the header write_blob_header
// writes). The reader is still safe on any bytes: every count is checked
// against what is left before anything is allocated.
//
// Every struct of model.hpp is listed once, in `fields` below, for both
// directions; a field added to model.hpp must be added there (the round-trip
// test in tests/cli/test_scene_blob.cpp sets every field and compares).
#pragma once

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <untold/convert/model.hpp>

namespace untold::tools {

namespace blob_detail {
template <class T>
inline constexpr bool is_array_v = false;
template <class T, std::size_t N>
inline constexpr bool is_array_v<std::array<T, N>> = true;
template <class T>
inline constexpr bool is_vector_v = false;
template <class T>
inline constexpr bool is_vector_v<std::vector<T>> = true;
template <class T>
inline constexpr bool is_pair_v = false;
template <class A, class B>
inline constexpr bool is_pair_v<std::pair<A, B>> = true;

/// Stored as raw bytes: numbers, enums, std::byte, and fixed arrays of them.
template <class T>
constexpr bool plain() {
  if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) return !std::is_same_v<T, bool>;
  else if constexpr (is_array_v<T>) return plain<typename T::value_type>();
  else return false;
}
}  // namespace blob_detail

// ---- the fields of every model struct, listed once ---------------------------------
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::report_entry>
void fields(A& a, T& e) { a(e.severity, e.what, e.where, e.reason, e.count); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::conversion_report>
void fields(A& a, T& r) { a(r.entries); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::transform>
void fields(A& a, T& t) { a(t.translation, t.rotation, t.scale); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::morph_target>
void fields(A& a, T& m) { a(m.name, m.default_weight, m.position_deltas, m.normal_deltas, m.tangent_deltas); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::lod_level>
void fields(A& a, T& l) { a(l.switch_distance, l.indices); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::mesh>
void fields(A& a, T& m) {
  a(m.name, m.primitive, m.positions, m.normals, m.tangents, m.uv0, m.uv1, m.extra_uvs, m.colors, m.joints, m.weights,
    m.indices, m.material, m.skin, m.morphs, m.lods, m.extras);
}
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::texture>
void fields(A& a, T& t) { a(t.name, t.uri, t.format, t.width, t.height, t.mip_count, t.srgb, t.embedded); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::texture_slot>
void fields(A& a, T& t) {
  a(t.texture, t.uv_set, t.wrap, t.mag_filter, t.min_filter, t.has_transform, t.offset, t.scale, t.rotation);
}
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::material>
void fields(A& a, T& m) {
  a(m.name, m.base_color, m.emissive, m.emissive_strength, m.metallic, m.roughness, m.normal_scale,
    m.occlusion_strength, m.alpha, m.alpha_cutoff, m.double_sided, m.transmission, m.base_color_texture,
    m.metallic_roughness_texture, m.normal_texture, m.occlusion_texture, m.emissive_texture, m.other_textures, m.extras);
}
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::node>
void fields(A& a, T& n) { a(n.name, n.parent, n.local, n.meshes, n.extras); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::joint>
void fields(A& a, T& j) { a(j.name, j.parent, j.rest, j.inverse_bind); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::skeleton>
void fields(A& a, T& s) { a(s.name, s.node, s.joints); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::skin>
void fields(A& a, T& s) { a(s.skeleton, s.joints); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::animation_channel>
void fields(A& a, T& c) { a(c.skeleton, c.joint, c.node, c.path, c.interp, c.times, c.values); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::animation>
void fields(A& a, T& x) { a(x.name, x.duration, x.channels); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::light>
void fields(A& a, T& l) { a(l.name, l.node, l.kind, l.color, l.intensity, l.range, l.inner_cone, l.outer_cone, l.area_size); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::camera>
void fields(A& a, T& c) { a(c.name, c.node, c.orthographic, c.yfov, c.aspect, c.znear, c.zfar); }
template <class A, class T> requires std::same_as<std::remove_const_t<T>, convert::scene>
void fields(A& a, T& s) {
  a(s.name, s.nodes, s.meshes, s.materials, s.textures, s.skeletons, s.skins, s.animations, s.lights, s.cameras,
    s.report);
}

/// Appends values to a byte vector.
class blob_writer {
 public:
  explicit blob_writer(std::vector<std::byte>& out) : out_(out) {}

  template <class... T>
  void operator()(const T&... values) { (one(values), ...); }

 private:
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  template <class T>
  void one(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      const std::uint8_t b = v ? 1 : 0;
      raw(&b, 1);
    } else if constexpr (blob_detail::plain<T>()) {
      raw(&v, sizeof v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      one(static_cast<std::uint64_t>(v.size()));
      raw(v.data(), v.size());
    } else if constexpr (blob_detail::is_vector_v<T>) {
      one(static_cast<std::uint64_t>(v.size()));
      if constexpr (blob_detail::plain<typename T::value_type>()) raw(v.data(), v.size() * sizeof(typename T::value_type));
      else for (const auto& e : v) one(e);
    } else if constexpr (blob_detail::is_pair_v<T>) {
      one(v.first);
      one(v.second);
    } else {
      fields(*this, v);
    }
  }
  std::vector<std::byte>& out_;
};

/// Reads what blob_writer wrote, in the same order. Once a read fails (too
/// few bytes, a count larger than what is left, a bool that is not 0 or 1)
/// ok() is false and every later read does nothing.
class blob_reader {
 public:
  explicit blob_reader(std::span<const std::byte> in) : in_(in) {}

  template <class... T>
  void operator()(T&... values) { (one(values), ...); }

  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return in_.size() - at_; }

 private:
  bool raw(void* p, std::size_t n) {
    if (!ok_ || n > remaining()) return ok_ = false;
    if (n > 0) std::memcpy(p, in_.data() + at_, n);
    at_ += n;
    return true;
  }
  /// A count, refused unless `each` bytes per element fit in what is left.
  bool count(std::size_t& n, std::size_t each) {
    std::uint64_t c = 0;
    if (!raw(&c, sizeof c)) return false;
    if (c > remaining() / (each == 0 ? 1 : each)) return ok_ = false;
    n = static_cast<std::size_t>(c);
    return true;
  }
  template <class T>
  void one(T& v) {
    if (!ok_) return;
    if constexpr (std::is_same_v<T, bool>) {
      std::uint8_t b = 0;
      if (raw(&b, 1) && b > 1) ok_ = false;
      v = b == 1;
    } else if constexpr (blob_detail::plain<T>()) {
      raw(&v, sizeof v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      std::size_t n = 0;
      if (!count(n, 1)) return;
      v.assign(reinterpret_cast<const char*>(in_.data() + at_), n);
      at_ += n;
    } else if constexpr (blob_detail::is_vector_v<T>) {
      using E = typename T::value_type;
      std::size_t n = 0;
      if (!count(n, blob_detail::plain<E>() ? sizeof(E) : 1)) return;
      v.clear();
      if constexpr (blob_detail::plain<E>()) {
        v.resize(n);
        raw(v.data(), n * sizeof(E));
      } else {
        v.reserve(n);
        for (std::size_t i = 0; i < n && ok_; ++i) one(v.emplace_back());
      }
    } else if constexpr (blob_detail::is_pair_v<T>) {
      one(v.first);
      one(v.second);
    } else {
      fields(*this, v);
    }
  }
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

/// A blob's first bytes: `kind` (which producer), a version, and the byte
/// order, so a blob from another build or machine type is refused.
inline void write_blob_header(std::vector<std::byte>& out, std::string_view kind, std::uint32_t version) {
  blob_writer w{out};
  w(std::string(kind), version, static_cast<std::uint8_t>(std::endian::native == std::endian::little ? 1 : 2));
}
[[nodiscard]] inline bool read_blob_header(blob_reader& r, std::string_view kind, std::uint32_t version) {
  std::string k;
  std::uint32_t v = 0;
  std::uint8_t order = 0;
  r(k, v, order);
  return r.ok() && k == kind && v == version && order == (std::endian::native == std::endian::little ? 1 : 2);
}

}  // namespace untold::tools
