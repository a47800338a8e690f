// untold/assetc/hmat.hpp - assetc .hmat v1 material tables: reader,
// validator, zero-copy row view and a deterministic writer.
//
// Reads: a 16-byte header ("HMAT", version 1, count, flags) and count rows of
// 96 bytes (GpuMaterial: factors, flags, texture ref hashes). The rows are a
// bare array, viewed in place at any alignment.
//
// Rejects (open_hmat): HM-TRUNC HM-MAGIC HM-VERSION HM-LIMITS HM-HMAT-SIZE
// (size != 16 + 96 x count) HM-HMAT-ALPHA (alpha mode 3); with deep_checks also
// HM-FINITE (a factor is NaN or infinite).
//
// Safe on untrusted input: the size rule is checked with overflow-safe
// arithmetic before any row is touched; nothing is allocated.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "../bytes.hpp"
#include "../error.hpp"
#include "../sink.hpp"
#include "common.hpp"

namespace untold::assetc {

inline constexpr std::uint32_t hmat_version = 1;
inline constexpr std::size_t hmat_header_size = 16;
inline constexpr std::size_t hmat_row_size = 96;

enum class alpha_mode : std::uint8_t { opaque = 0, mask = 1, blend = 2 };
inline constexpr std::uint32_t material_flag_double_sided = 1;

/// One GpuMaterial row (96 B); defaults are glTF's.
struct material {
  std::array<float, 4> base_color{1, 1, 1, 1};
  std::array<float, 3> emissive{0, 0, 0};
  float metallic = 1;
  float roughness = 1;
  float normal_scale = 1;
  float occlusion_strength = 1;
  float alpha_cutoff = 0.5f;
  std::uint32_t flags = 0;  // bit 0 double-sided, bits 1-2 alpha mode
  std::uint64_t base_color_tex = 0;
  std::uint64_t metallic_roughness_tex = 0;
  std::uint64_t normal_tex = 0;
  std::uint64_t occlusion_tex = 0;
  std::uint64_t emissive_tex = 0;

  [[nodiscard]] constexpr bool double_sided() const noexcept { return (flags & material_flag_double_sided) != 0; }
  [[nodiscard]] constexpr std::uint32_t alpha_mode_bits() const noexcept { return (flags >> 1) & 3u; }
  [[nodiscard]] constexpr alpha_mode alpha() const noexcept { return static_cast<alpha_mode>(alpha_mode_bits()); }
  [[nodiscard]] static constexpr std::uint32_t make_flags(bool double_sided, alpha_mode mode) noexcept {
    return (double_sided ? 1u : 0u) | (static_cast<std::uint32_t>(mode) << 1);
  }
  /// The five texture refs in file order (0 = none).
  [[nodiscard]] constexpr std::array<std::uint64_t, 5> textures() const noexcept {
    return {base_color_tex, metallic_roughness_tex, normal_tex, occlusion_tex, emissive_tex};
  }
  friend constexpr bool operator==(const material&, const material&) = default;
};

inline constexpr std::array<const char*, 5> material_texture_slots = {"baseColorTex", "metallicRoughnessTex",
                                                                     "normalTex", "occlusionTex", "emissiveTex"};

}  // namespace untold::assetc

namespace untold {
/// A .hmat row's fields once, in file order (records.hpp's record_traits).
template <>
struct record_traits<assetc::material> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return assetc::hmat_row_size; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    const zero_padding<4> padding{};
    v(r.base_color, "baseColor"), v(r.emissive, "emissive"), v(r.metallic, "metallic"), v(r.roughness, "roughness");
    v(r.normal_scale, "normalScale"), v(r.occlusion_strength, "occlusionStrength"), v(r.alpha_cutoff, "alphaCutoff");
    v(r.flags, "flags"), v(padding, "padding"), v(r.base_color_tex, "baseColorTex");
    v(r.metallic_roughness_tex, "metallicRoughnessTex"), v(r.normal_tex, "normalTex");
    v(r.occlusion_tex, "occlusionTex"), v(r.emissive_tex, "emissiveTex");
  }
};
}  // namespace untold

namespace untold::assetc {

/// A validated .hmat over the caller's bytes.
class hmat {
 public:
  [[nodiscard]] std::uint32_t version() const noexcept { return hmat_version; }
  [[nodiscard]] std::uint32_t flags() const noexcept { return flags_; }
  [[nodiscard]] le_array<material> rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t size() const noexcept { return rows_.size(); }

 private:
  friend result<hmat> open_hmat(byte_span, const open_options&);
  std::uint32_t flags_ = 0;
  le_array<material> rows_{};
};

/// Opens and validates a .hmat (rules above). Safe on untrusted input.
[[nodiscard]] inline result<hmat> open_hmat(byte_span bytes, const open_options& options = {}) {
  if (bytes.size() < 4) return make_error(errc::hm_truncated).at_field("magic").with_value(bytes.size()).at_offset(0);
  if (magic_of(bytes) != hmat_magic) return make_error(errc::hm_bad_magic).at_field("magic")
      .with_value(magic_of(bytes)).at_offset(0);
  if (bytes.size() < hmat_header_size) return make_error(errc::hm_truncated).at_field("header")
      .with_value(bytes.size()).at_offset(0);
  const auto version = load_le_unchecked<std::uint32_t>(bytes.data() + 4);
  const auto count = load_le_unchecked<std::uint32_t>(bytes.data() + 8);
  if (version != hmat_version) return make_error(errc::hm_bad_version).at_field("version").with_value(version)
      .at_offset(4);
  if (count > options.limits.max_records)
    return make_error(errc::hm_limit_exceeded).at_field("count").with_value(count)
        .with_limit(options.limits.max_records);
  const auto rows = checked_range(hmat_header_size, count, hmat_row_size, bytes.size());
  if (!rows || rows->end() != bytes.size()) {
    error e = make_error(errc::hm_material_size).at_field("count").with_value(count).at_offset(8);
    e.context.limit = bytes.size(), e.context.has_limit = true;
    return e;
  }
  budget own(options.limits, bytes.size());
  UNTOLD_TRY(detail::reader_budget(options, own).charge_work(count, "rows", errc::hm_limit_exceeded));
  hmat h;
  h.flags_ = load_le_unchecked<std::uint32_t>(bytes.data() + 12);
  h.rows_ = le_array<material>(subspan(bytes, *rows));
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::byte* p = bytes.data() + hmat_header_size + std::size_t{i} * hmat_row_size;
    const auto flags = load_le_unchecked<std::uint32_t>(p + 48);
    if (((flags >> 1) & 3u) == 3u) return make_error(errc::hm_alpha_mode).at_field("flags").with_value(flags)
        .at_record(i).at_offset(hmat_header_size + i * hmat_row_size + 48);
    if (!options.deep_checks) continue;
    for (std::size_t f = 0; f < 12; ++f)
      if (!detail::is_finite(load_le_unchecked<float>(p + 4 * f)))
        return make_error(errc::hm_not_finite).at_field("factor").with_value(f).at_record(i)
            .at_offset(hmat_header_size + i * hmat_row_size + 4 * f);
  }
  return h;
}

/// The bytes of a .hmat holding `rows` (header flags 0, pads 0). Errors:
/// invalid_argument for more than 2^32 - 1 rows, HM-HMAT-ALPHA for alpha
/// mode 3. Deterministic.
[[nodiscard]] inline result<std::vector<std::byte>> write_hmat(std::span<const material> rows) {
  if (rows.size() > 0xFFFFFFFFu) return make_error(errc::invalid_argument).at_field("rows").with_value(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].alpha_mode_bits() == 3) return make_error(errc::hm_alpha_mode).at_field("flags")
        .with_value(rows[i].flags).at_record(i);
  std::vector<std::byte> out;
  byte_sink sink(out);
  sink.put(hmat_magic);
  sink.put(hmat_version);
  sink.put(static_cast<std::uint32_t>(rows.size()));
  sink.put(std::uint32_t{0});
  out.resize(hmat_header_size + rows.size() * hmat_row_size);
  for (std::size_t i = 0; i < rows.size(); ++i) codec<material>::store(out.data() + hmat_header_size + i * hmat_row_size, rows[i]);
  return out;
}

}  // namespace untold::assetc
