// untold/udm/types.hpp - the 36 property types of Pragma's Unified Data Model:
// their type bytes, fixed sizes, ASCII names, and the plain C++ structs the
// typed getters return (docs/udm.md has the table).
//
// Reads nothing from files; every function is total over its input (an
// unknown type byte is answered, never trapped). Safe on untrusted input.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>

#include "../bytes.hpp"

namespace untold::udm {

/// The type byte of a property (binary) in Pragma's enum order.
enum class type : std::uint8_t {
  nil = 0,
  string = 1,
  utf8_string = 2,
  int8 = 3,
  uint8 = 4,
  int16 = 5,
  uint16 = 6,
  int32 = 7,
  uint32 = 8,
  int64 = 9,
  uint64 = 10,
  float32 = 11,  // "Float"
  float64 = 12,  // "Double"
  boolean = 13,
  vector2 = 14,
  vector3 = 15,
  vector4 = 16,
  quaternion = 17,
  euler_angles = 18,
  srgba = 19,
  hdr_color = 20,
  transform = 21,
  scaled_transform = 22,
  mat4 = 23,
  mat3x4 = 24,
  blob = 25,
  blob_lz4 = 26,
  element = 27,
  array = 28,
  array_lz4 = 29,
  reference = 30,
  struct_ = 31,
  half = 32,
  vector2i = 33,
  vector3i = 34,
  vector4i = 35,
};

inline constexpr std::size_t type_count = 36;
/// Pragma's "Invalid" marker; never valid in a file.
inline constexpr std::uint8_t invalid_type_byte = 255;

[[nodiscard]] constexpr bool is_known_type(std::uint8_t b) noexcept { return b < type_count; }

/// Fixed-size ("trivial") types: stored as their bytes, usable in arrays
/// without a block size and as struct members. Nil is trivial with size 0.
[[nodiscard]] constexpr bool is_trivial(type t) noexcept {
  switch (t) {
    case type::string:
    case type::utf8_string:
    case type::blob:
    case type::blob_lz4:
    case type::element:
    case type::array:
    case type::array_lz4:
    case type::reference:
    case type::struct_:
      return false;
    default:
      return static_cast<std::uint8_t>(t) < type_count;
  }
}

/// The byte size of a trivial type; 0 for Nil and every non-trivial type.
[[nodiscard]] constexpr std::uint32_t size_of(type t) noexcept {
  switch (t) {
    case type::int8:
    case type::uint8:
    case type::boolean: return 1;
    case type::int16:
    case type::uint16:
    case type::half: return 2;
    case type::int32:
    case type::uint32:
    case type::float32:
    case type::srgba: return 4;
    case type::hdr_color: return 6;
    case type::int64:
    case type::uint64:
    case type::float64:
    case type::vector2:
    case type::vector2i: return 8;
    case type::vector3:
    case type::vector3i:
    case type::euler_angles: return 12;
    case type::vector4:
    case type::vector4i:
    case type::quaternion: return 16;
    case type::transform: return 28;
    case type::scaled_transform: return 40;
    case type::mat3x4: return 48;
    case type::mat4: return 64;
    default: return 0;
  }
}

/// The scalar a trivial type is made of, and how many: what the ASCII form
/// prints, what a big-endian host byte-swaps.
enum class component : std::uint8_t { none, i8, u8, i16, u16, i32, u32, i64, u64, f32, f64, boolean, f16 };

[[nodiscard]] constexpr component component_of(type t) noexcept {
  switch (t) {
    case type::int8: return component::i8;
    case type::uint8:
    case type::srgba: return component::u8;
    case type::int16: return component::i16;
    case type::uint16:
    case type::hdr_color: return component::u16;
    case type::int32:
    case type::vector2i:
    case type::vector3i:
    case type::vector4i: return component::i32;
    case type::uint32: return component::u32;
    case type::int64: return component::i64;
    case type::uint64: return component::u64;
    case type::float64: return component::f64;
    case type::boolean: return component::boolean;
    case type::half: return component::f16;
    case type::float32:
    case type::vector2:
    case type::vector3:
    case type::vector4:
    case type::quaternion:
    case type::euler_angles:
    case type::transform:
    case type::scaled_transform:
    case type::mat4:
    case type::mat3x4: return component::f32;
    default: return component::none;
  }
}

[[nodiscard]] constexpr std::uint32_t component_size(component c) noexcept {
  switch (c) {
    case component::none: return 0;
    case component::i8:
    case component::u8:
    case component::boolean: return 1;
    case component::i16:
    case component::u16:
    case component::f16: return 2;
    case component::i32:
    case component::u32:
    case component::f32: return 4;
    case component::i64:
    case component::u64:
    case component::f64: return 8;
  }
  return 0;
}

/// Components per value (Transform: 7 floats, Mat4: 16 ...); 0 for Nil and
/// non-trivial types.
[[nodiscard]] constexpr std::uint32_t component_count(type t) noexcept {
  const std::uint32_t c = component_size(component_of(t));
  return c == 0 ? 0 : size_of(t) / c;
}

/// The name Pragma's ASCII form uses ("vec3", "stransform", "arrayLz4" ...).
[[nodiscard]] constexpr std::string_view ascii_name(type t) noexcept {
  constexpr std::array<std::string_view, type_count> names = {
      "nil",    "string", "utf8",   "int8",       "uint8",  "int16",  "uint16",   "int32",      "uint32",
      "int64",  "uint64", "float",  "double",     "bool",   "vec2",   "vec3",     "vec4",       "quat",
      "ang",    "srgba",  "hdr",    "transform",  "stransform", "mat4", "mat3x4", "blob",       "lz4",
      "element", "array", "arrayLz4", "ref",      "struct", "half",   "vec2i",    "vec3i",      "vec4i"};
  const auto i = static_cast<std::uint8_t>(t);
  return i < type_count ? names[i] : std::string_view("invalid");
}

/// The type Pragma's enum names it ("Vector3", "ScaledTransform", ...): what
/// JSON dumps print.
[[nodiscard]] constexpr std::string_view name(type t) noexcept {
  constexpr std::array<std::string_view, type_count> names = {
      "Nil",        "String",     "Utf8String", "Int8",      "UInt8",          "Int16",     "UInt16",
      "Int32",      "UInt32",     "Int64",      "UInt64",    "Float",          "Double",    "Boolean",
      "Vector2",    "Vector3",    "Vector4",    "Quaternion", "EulerAngles",   "Srgba",     "HdrColor",
      "Transform",  "ScaledTransform", "Mat4",  "Mat3x4",    "Blob",           "BlobLz4",   "Element",
      "Array",      "ArrayLz4",   "Reference",  "Struct",    "Half",           "Vector2i",  "Vector3i",
      "Vector4i"};
  const auto i = static_cast<std::uint8_t>(t);
  return i < type_count ? names[i] : std::string_view("Invalid");
}

/// The type whose ASCII name is `s`, or nullopt.
[[nodiscard]] constexpr std::optional<type> type_from_ascii_name(std::string_view s) noexcept {
  for (std::uint8_t i = 0; i < type_count; ++i)
    if (ascii_name(static_cast<type>(i)) == s) return static_cast<type>(i);
  return std::nullopt;
}

// ---- the values the typed getters return ----------------------------------------------
// Plain structs in the file's component order. Quaternions are stored x, y, z,
// w in binary (glm's memory order); Pragma's ASCII prints them w, x, y, z.

struct vec2 { float x = 0, y = 0; };
struct vec3 { float x = 0, y = 0, z = 0; };
struct vec4 { float x = 0, y = 0, z = 0, w = 0; };
struct quat { float x = 0, y = 0, z = 0, w = 1; };
struct euler_angles { float p = 0, y = 0, r = 0; };  // pitch, yaw, roll in degrees
struct srgba { std::uint8_t r = 0, g = 0, b = 0, a = 0; };
struct hdr_color { std::uint16_t r = 0, g = 0, b = 0; };
struct transform { vec3 translation; quat rotation; };
struct scaled_transform { vec3 translation; quat rotation; vec3 scale{1, 1, 1}; };
struct mat4 { std::array<float, 16> m{}; };   // column-major (glm)
struct mat3x4 { std::array<float, 12> m{}; };  // glm::mat3x4: 3 columns of 4
struct half { std::uint16_t bits = 0; };
struct vec2i { std::int32_t x = 0, y = 0; };
struct vec3i { std::int32_t x = 0, y = 0, z = 0; };
struct vec4i { std::int32_t x = 0, y = 0, z = 0, w = 0; };

/// The UDM type of a C++ value type (the typed getters' T).
template <class T> struct type_of;
template <> struct type_of<std::int8_t> { static constexpr type value = type::int8; };
template <> struct type_of<std::uint8_t> { static constexpr type value = type::uint8; };
template <> struct type_of<std::int16_t> { static constexpr type value = type::int16; };
template <> struct type_of<std::uint16_t> { static constexpr type value = type::uint16; };
template <> struct type_of<std::int32_t> { static constexpr type value = type::int32; };
template <> struct type_of<std::uint32_t> { static constexpr type value = type::uint32; };
template <> struct type_of<std::int64_t> { static constexpr type value = type::int64; };
template <> struct type_of<std::uint64_t> { static constexpr type value = type::uint64; };
template <> struct type_of<float> { static constexpr type value = type::float32; };
template <> struct type_of<double> { static constexpr type value = type::float64; };
template <> struct type_of<bool> { static constexpr type value = type::boolean; };
template <> struct type_of<vec2> { static constexpr type value = type::vector2; };
template <> struct type_of<vec3> { static constexpr type value = type::vector3; };
template <> struct type_of<vec4> { static constexpr type value = type::vector4; };
template <> struct type_of<quat> { static constexpr type value = type::quaternion; };
template <> struct type_of<euler_angles> { static constexpr type value = type::euler_angles; };
template <> struct type_of<srgba> { static constexpr type value = type::srgba; };
template <> struct type_of<hdr_color> { static constexpr type value = type::hdr_color; };
template <> struct type_of<transform> { static constexpr type value = type::transform; };
template <> struct type_of<scaled_transform> { static constexpr type value = type::scaled_transform; };
template <> struct type_of<mat4> { static constexpr type value = type::mat4; };
template <> struct type_of<mat3x4> { static constexpr type value = type::mat3x4; };
template <> struct type_of<half> { static constexpr type value = type::half; };
template <> struct type_of<vec2i> { static constexpr type value = type::vector2i; };
template <> struct type_of<vec3i> { static constexpr type value = type::vector3i; };
template <> struct type_of<vec4i> { static constexpr type value = type::vector4i; };

template <class T>
inline constexpr type type_of_v = type_of<T>::value;

namespace detail {
template <std::size_t N>
inline void byteswap_components(std::byte* p, std::size_t total) noexcept {
  for (std::size_t at = 0; at + N <= total; at += N)
    for (std::size_t i = 0; i < N / 2; ++i) {
      const std::byte t = p[at + i];
      p[at + i] = p[at + N - 1 - i];
      p[at + N - 1 - i] = t;
    }
}
}  // namespace detail

/// Loads a trivial value of type T from p (any alignment, little-endian).
/// Precondition: p points at size_of(type_of_v<T>) readable bytes.
template <class T>
[[nodiscard]] inline T load_value(const std::byte* p) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  static_assert(sizeof(T) == size_of(type_of_v<T>) || std::is_same_v<T, bool>, "T must mirror the UDM layout");
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<std::uint8_t>(*p) != 0;
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::endian::native == std::endian::big) {
      constexpr std::uint32_t c = component_size(component_of(type_of_v<T>));
      auto* b = reinterpret_cast<std::byte*>(&v);
      if constexpr (c == 2) detail::byteswap_components<2>(b, sizeof(T));
      if constexpr (c == 4) detail::byteswap_components<4>(b, sizeof(T));
      if constexpr (c == 8) detail::byteswap_components<8>(b, sizeof(T));
    }
    return v;
  }
}

/// Stores a trivial value as its little-endian bytes.
/// Precondition: p points at size_of(type_of_v<T>) writable bytes.
template <class T>
inline void store_value(std::byte* p, const T& value) noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    *p = std::byte{static_cast<std::uint8_t>(value ? 1 : 0)};
  } else {
    std::memcpy(p, &value, sizeof(T));
    if constexpr (std::endian::native == std::endian::big) {
      constexpr std::uint32_t c = component_size(component_of(type_of_v<T>));
      if constexpr (c == 2) detail::byteswap_components<2>(p, sizeof(T));
      if constexpr (c == 4) detail::byteswap_components<4>(p, sizeof(T));
      if constexpr (c == 8) detail::byteswap_components<8>(p, sizeof(T));
    }
  }
}

}  // namespace untold::udm
