// untold/assetc/fnv.hpp - the 64-bit references between assetc files and the
// naming rules that produce the hashed strings.
//
// hash_ref: FNV-1a 64 (offset 0xcbf29ce484222325, prime 0x100000001b3) over
// the ASCII-lowercased bytes, so "Models/Chair/Wood" and "models/chair/wood"
// are the same ref. Golden vectors: "" -> 0xcbf29ce484222325,
// "a" -> 0xaf63dc4c8601ec8c, "court/tex_0" -> 0xad44c4a2970495b9.
//
// Naming (seed: "Material refs", "Texture refs"):
//   source_ref("assets/models/chair.glb")   -> "models/chair"
//   texture_ref("models/chair", 3)          -> "models/chair/tex_3"
//   material_leaf(names, i)                 -> lowercased name when non-empty
//                                              and unique, else "material_<i>"
//   dense_material_slots(per-submesh source material) -> first-use order
//
// Reads no file; every function is total (safe on any input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace untold::assetc {

inline constexpr std::uint64_t fnv_offset_basis = 0xcbf29ce484222325ull;
inline constexpr std::uint64_t fnv_prime = 0x100000001b3ull;

[[nodiscard]] constexpr char ascii_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

/// FNV-1a 64 of the ASCII-lowercased string (bytes >= 0x80 are hashed as is).
[[nodiscard]] constexpr std::uint64_t hash_ref(std::string_view s) noexcept {
  std::uint64_t h = fnv_offset_basis;
  for (const char c : s) {
    h ^= static_cast<std::uint8_t>(ascii_lower(c));
    h *= fnv_prime;
  }
  return h;
}

static_assert(hash_ref("") == 0xcbf29ce484222325ull);
static_assert(hash_ref("a") == 0xaf63dc4c8601ec8cull);
static_assert(hash_ref("court/tex_0") == 0xad44c4a2970495b9ull);

[[nodiscard]] inline std::string ascii_lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

/// The source's runtime ref: '\\' -> '/', a leading "assets/" stripped, the
/// extension of the last component dropped, lowercased.
/// "assets/Models/Chair.glb" -> "models/chair".
[[nodiscard]] inline std::string source_ref(std::string_view source_path) {
  std::string p(source_path);
  for (char& c : p)
    if (c == '\\') c = '/';
  if (std::string_view(p).starts_with("assets/")) p.erase(0, 7);
  const std::size_t slash = p.rfind('/');
  const std::size_t dot = p.rfind('.');
  const std::size_t start = slash == std::string::npos ? 0 : slash + 1;
  if (dot != std::string::npos && dot > start) p.erase(dot);  // ".hidden" has no extension
  return ascii_lowercase(p);
}

/// "<source_ref>/tex_<image_index>": the ref of glTF image `image_index`;
/// its file is that string + ".ktx2".
[[nodiscard]] inline std::string texture_ref(std::string_view source_ref_, std::uint32_t image_index) {
  return std::string(source_ref_) + "/tex_" + std::to_string(image_index);
}

/// The leaf of source material `index`: its lowercased name when non-empty
/// and unique within `names` (compared lowercased, so two names differing
/// only in case never share a ref), else "material_<index>".
/// Precondition: index < names.size().
[[nodiscard]] inline std::string material_leaf(std::span<const std::string_view> names, std::size_t index) {
  const std::string mine = ascii_lowercase(names[index]);
  bool unique = !mine.empty();
  for (std::size_t i = 0; unique && i < names.size(); ++i)
    if (i != index && names[i].size() == mine.size() && ascii_lowercase(names[i]) == mine) unique = false;
  return unique ? mine : "material_" + std::to_string(index);
}

/// "<source_ref>/<material_leaf(names, index)>". Precondition: index < names.size().
[[nodiscard]] inline std::string material_ref(std::string_view source_ref_, std::span<const std::string_view> names,
                                              std::size_t index) {
  return std::string(source_ref_) + "/" + material_leaf(names, index);
}

/// Dense material slots: `slot_of_submesh[i]` indexes `used` (source
/// material indices in first-use order, each once); submeshes whose source
/// material is 0xFFFFFFFF (none) get slot 0xFFFFFFFF.
struct material_slots {
  std::vector<std::uint32_t> slot_of_submesh;
  std::vector<std::uint32_t> used;
};

[[nodiscard]] inline material_slots dense_material_slots(std::span<const std::uint32_t> source_material_of_submesh) {
  material_slots out;
  for (const std::uint32_t m : source_material_of_submesh) {
    if (m == 0xFFFFFFFFu) {
      out.slot_of_submesh.push_back(m);
      continue;
    }
    std::size_t slot = 0;
    while (slot < out.used.size() && out.used[slot] != m) ++slot;
    if (slot == out.used.size()) out.used.push_back(m);
    out.slot_of_submesh.push_back(static_cast<std::uint32_t>(slot));
  }
  return out;
}

/// The MTRL hashes for `used` (source indices, first-use order).
/// Precondition: every used index < names.size().
[[nodiscard]] inline std::vector<std::uint64_t> material_hashes(std::string_view source_ref_,
                                                                std::span<const std::string_view> names,
                                                                std::span<const std::uint32_t> used) {
  std::vector<std::uint64_t> out;
  out.reserve(used.size());
  for (const std::uint32_t m : used) out.push_back(hash_ref(material_ref(source_ref_, names, m)));
  return out;
}

}  // namespace untold::assetc
