// untold/urho3d/animation.hpp - Urho3D binary animations (.ani): UANI and
// rbfx's UAN2 (a u32 version after the id; version 2 adds variant tracks
// after the bone tracks, version 3 a weight per track).
//
// Reads: name, length, bone tracks (name, channel mask, keyframes of time +
// position / rotation (w, x, y, z) / scale as masked, viewed in the file) and
// UAN2 variant tracks whose value type has a fixed size or is a string.
// Keyframe values are bone-local (parent-relative) transforms that replace
// the bind pose: "absolute" in Urho3D's docs means "not additive".
//
// Rejects (open_animation): U3D-MAGIC, U3D-VERSION, U3D-TRUNC, U3D-COUNT,
// U3D-STRING, U3D-TRACK-MASK, U3D-VARIANT-TYPE, U3D-INTERPOLATION,
// U3D-TRAILING, R-LIMITS; with deep checks also U3D-FINITE (length, times,
// bone key values) and U3D-KEY-ORDER (times decreasing within a track).
//
// Safe on untrusted input: counts are checked against the remaining bytes
// before allocation, no recursion, linear in the file size. The result views
// the input buffer.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "../budget.hpp"
#include "../sink.hpp"
#include "common.hpp"

namespace untold::urho3d {

enum class animation_kind : std::uint8_t { uani, uan2 };

inline constexpr std::uint8_t channel_position = 1, channel_rotation = 2, channel_scale = 4;
/// Highest UAN2 version this reader knows (rbfx: 2 variant tracks, 3 track weights).
inline constexpr std::uint32_t max_animation_version = 3;

struct keyframe {
  float time = 0;
  float3 position{0, 0, 0};
  quat_wxyz rotation{1, 0, 0, 0};
  float3 scale{1, 1, 1};
};

struct track {
  std::string_view name;  // the bone (or node) it drives
  std::uint8_t mask = 0;  // channel_position | channel_rotation | channel_scale
  float weight = 1;       // UAN2 version >= 3 only
  std::uint32_t keyframe_count = 0;
  byte_span keys;         // keyframe_count * stride() bytes

  [[nodiscard]] constexpr std::uint32_t stride() const noexcept {
    return 4 + ((mask & channel_position) != 0 ? 12 : 0) + ((mask & channel_rotation) != 0 ? 16 : 0) +
           ((mask & channel_scale) != 0 ? 12 : 0);
  }
  /// Keyframe i; channels not in the mask keep their defaults.
  /// Precondition: i < keyframe_count, keys sized as above.
  [[nodiscard]] keyframe key(std::uint32_t i) const noexcept {
    const std::byte* p = keys.data() + static_cast<std::size_t>(i) * stride();
    auto f = [&p] {
      const float v = load_le_unchecked<float>(p);
      p += 4;
      return v;
    };
    keyframe k;
    k.time = f();
    if ((mask & channel_position) != 0) k.position = {f(), f(), f()};
    if ((mask & channel_rotation) != 0) k.rotation = {f(), f(), f(), f()};
    if ((mask & channel_scale) != 0) k.scale = {f(), f(), f()};
    return k;
  }
};

/// rbfx VariantType values whose binary form this reader can size.
namespace variant {
inline constexpr std::uint8_t none = 0, int32 = 1, boolean = 2, float32 = 3, vector2 = 4, vector3 = 5, vector4 = 6,
                              quaternion = 7, color = 8, string = 9, int_rect = 16, int_vector2 = 17, matrix3 = 19,
                              matrix3x4 = 20, matrix4 = 21, float64 = 22, rect = 24, int_vector3 = 25, int64 = 26;
}
inline constexpr std::uint32_t variable_size = 0xFFFFFFFFu;
inline constexpr std::uint32_t unknown_size = 0xFFFFFFFEu;

/// Bytes of one value of rbfx variant type `t`: a fixed size,
/// variable_size (a NUL-terminated string) or unknown_size.
[[nodiscard]] constexpr std::uint32_t variant_value_size(std::uint8_t t) noexcept {
  switch (t) {
    case variant::none: return 0;
    case variant::boolean: return 1;
    case variant::int32:
    case variant::float32: return 4;
    case variant::vector2:
    case variant::int_vector2:
    case variant::float64:
    case variant::int64: return 8;
    case variant::vector3:
    case variant::int_vector3: return 12;
    case variant::vector4:
    case variant::quaternion:
    case variant::color:
    case variant::int_rect:
    case variant::rect: return 16;
    case variant::matrix3: return 36;
    case variant::matrix3x4: return 48;
    case variant::matrix4: return 64;
    case variant::string: return variable_size;
    default: return unknown_size;
  }
}

inline constexpr std::uint8_t interpolation_tangent_spline = 3;  // none, linear, spline, tangent spline

struct variant_track {
  std::string_view name;
  std::uint8_t type = variant::float32;
  std::uint8_t interpolation = 1;
  float tension = 0.5f;
  float weight = 1;  // version >= 3
  std::uint32_t keyframe_count = 0;
  byte_span keys;      // per key: f32 time, then the value
  byte_span tangents;  // tangent spline only: per key the in and the out value
};

struct animation {
  animation_kind kind = animation_kind::uani;
  std::uint32_t version = 1;  // UAN2's stored version; 1 for UANI
  std::string_view name;
  float length = 0;  // seconds
  std::vector<track> tracks;
  std::vector<variant_track> variant_tracks;

  [[nodiscard]] constexpr bool has_variant_tracks() const noexcept { return kind == animation_kind::uan2 && version >= 2; }
  [[nodiscard]] constexpr bool has_weights() const noexcept { return kind == animation_kind::uan2 && version >= 3; }
  [[nodiscard]] std::uint64_t keyframe_total() const noexcept {
    std::uint64_t n = 0;
    for (const track& t : tracks) n += t.keyframe_count;
    for (const variant_track& t : variant_tracks) n += t.keyframe_count;
    return n;
  }
};

struct animation_options {
  untold::limits limits{};
  bool deep_checks = false;  // + U3D-FINITE, U3D-KEY-ORDER
  /// The input's budget (budget.hpp), shared with the stages that follow;
  /// none: the reader makes its own from `limits`.
  untold::budget* budget = nullptr;
};

[[nodiscard]] inline bool is_animation(byte_span head) noexcept {
  return starts_with_id(head, "UANI") || starts_with_id(head, "UAN2");
}

namespace detail {

/// Skips `n` values of a sized variant type; returns the bytes they took.
[[nodiscard]] inline result<byte_span> read_variant_values(byte_cursor& c, std::uint8_t type, std::uint64_t n,
                                                           bool with_time, const char* field) {
  const std::uint32_t size = variant_value_size(type);
  const std::size_t start = c.position();
  const byte_span all = c.rest();
  if (size != variable_size) {
    auto b = c.array_bytes(n, std::uint64_t{size} + (with_time ? 4 : 0), field);
    if (!b) return b.error();
    return *b;
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    if (with_time) UNTOLD_TRY(c.skip(4, "variant.time"));
    auto s = read_name(c, field);
    if (!s) return s.error();
  }
  return all.first(c.position() - start);
}

}  // namespace detail

[[nodiscard]] inline status validate_animation_deep(const animation& a, byte_span file = {});

/// Reads and checks a .ani (see the header comment for the rules).
/// Preconditions: none; safe on untrusted input. The result views `file`.
/// What it holds is charged to options.budget (R-LIMITS beyond it).
[[nodiscard]] inline result<animation> open_animation(byte_span file, const animation_options& options = {}) {
  const untold::limits& lim = options.limits;
  untold::budget own(lim, file.size());
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own);
  byte_cursor c(file, u3d_rules);
  animation a;
  if (starts_with_id(file, "UANI")) {
    a.kind = animation_kind::uani;
  } else if (starts_with_id(file, "UAN2")) {
    a.kind = animation_kind::uan2;
  } else {
    return make_error(errc::u3d_bad_magic).at_field("id").at_offset(0);
  }
  (void)c.skip(4, "id");
  if (a.kind == animation_kind::uan2) {
    const std::uint64_t at = c.offset();
    auto v = c.read<std::uint32_t>("version");
    if (!v) return v.error();
    if (*v < 1 || *v > max_animation_version) return make_error(errc::u3d_bad_version).at_field("version")
        .with_value(*v).at_offset(at);
    a.version = *v;
  }
  auto name = detail::read_name(c, "name");
  if (!name) return name.error();
  a.name = *name;
  auto length = c.read<float>("length");
  if (!length) return length.error();
  a.length = *length;

  // A track is at least a NUL, the mask and a keyframe count.
  auto tracks = c.count_u32(6, "trackCount", lim.max_records, errc::limit_exceeded);
  if (!tracks) return tracks.error();
  UNTOLD_TRY(budget.charge_items(*tracks, sizeof(track), "tracks", errc::limit_exceeded));
  a.tracks.resize(*tracks);
  std::uint64_t keys_total = 0;
  for (track& t : a.tracks) {
    auto track_name = detail::read_name(c, "track.name");
    if (!track_name) return track_name.error();
    t.name = *track_name;
    const std::uint64_t at = c.offset();
    auto mask = c.read<std::uint8_t>("track.mask");
    if (!mask) return mask.error();
    if ((*mask & ~7u) != 0) return make_error(errc::u3d_track_mask).at_field("track.mask").with_value(*mask)
        .at_offset(at).with_subject(t.name);
    t.mask = *mask;
    if (a.has_weights()) {
      auto w = c.read<float>("track.weight");
      if (!w) return w.error();
      t.weight = *w;
    }
    auto n = c.read<std::uint32_t>("track.keyframeCount");
    if (!n) return n.error();
    keys_total += *n;
    if (keys_total > lim.max_records)
      return c.fail_limit(errc::limit_exceeded, "track.keyframeCount", keys_total, lim.max_records);
    t.keyframe_count = *n;
    auto keys = c.array_bytes(*n, t.stride(), "track.keyframes");
    if (!keys) return keys.error();
    t.keys = *keys;
  }

  if (a.has_variant_tracks()) {
    // name NUL, type, interpolation, tension, key count (+ weight)
    auto variants = c.count_u32(11, "variantTrackCount", lim.max_records, errc::limit_exceeded);
    if (!variants) return variants.error();
    UNTOLD_TRY(budget.charge_items(*variants, sizeof(variant_track), "variantTracks", errc::limit_exceeded));
    a.variant_tracks.resize(*variants);
    for (variant_track& t : a.variant_tracks) {
      auto track_name = detail::read_name(c, "variant.name");
      if (!track_name) return track_name.error();
      t.name = *track_name;
      const std::uint64_t at = c.offset();
      auto type = c.read<std::uint8_t>("variant.type");
      if (!type) return type.error();
      if (variant_value_size(*type) == unknown_size)
        return make_error(errc::u3d_variant_type).at_field("variant.type").with_value(*type).at_offset(at)
            .with_subject(t.name);
      t.type = *type;
      auto interp = c.read<std::uint8_t>("variant.interpolation");
      if (!interp) return interp.error();
      if (*interp > interpolation_tangent_spline)
        return make_error(errc::u3d_interpolation).at_field("variant.interpolation").with_value(*interp)
            .at_offset(at + 1).with_subject(t.name);
      t.interpolation = *interp;
      auto tension = c.read<float>("variant.tension");
      if (!tension) return tension.error();
      t.tension = *tension;
      if (a.has_weights()) {
        auto w = c.read<float>("variant.weight");
        if (!w) return w.error();
        t.weight = *w;
      }
      auto n = c.count_u32(4, "variant.keyframeCount", lim.max_records, errc::limit_exceeded);
      if (!n) return n.error();
      keys_total += *n;
      if (keys_total > lim.max_records)
        return c.fail_limit(errc::limit_exceeded, "variant.keyframeCount", keys_total, lim.max_records);
      t.keyframe_count = *n;
      auto keys = detail::read_variant_values(c, t.type, *n, true, "variant.keyframes");
      if (!keys) return keys.error();
      t.keys = *keys;
      if (t.interpolation == interpolation_tangent_spline) {
        auto tangents = detail::read_variant_values(c, t.type, std::uint64_t{*n} * 2, false, "variant.tangents");
        if (!tangents) return tangents.error();
        t.tangents = *tangents;
      }
    }
  }
  if (!c.at_end()) return c.fail(errc::u3d_trailing_bytes, "end", c.remaining());
  if (options.deep_checks) UNTOLD_TRY(validate_animation_deep(a, file));
  return a;
}

/// U3D-FINITE (length, bone key times and values, variant key times) and
/// U3D-KEY-ORDER (times decreasing within a track). Errors carry
/// record_index = track and the track's name; U3D-FINITE carries the float
/// (with its bits) and, when it lies in `file` (the bytes open_animation
/// read), its offset. Linear.
[[nodiscard]] inline status validate_animation_deep(const animation& a, byte_span file) {
  auto err = [](errc code, const char* field, std::size_t record, std::uint64_t value, std::string_view name) {
    return make_error(code).at_field(field).at_record(record).with_value(value).with_subject(name);
  };
  if (!untold::detail::is_finite(a.length))
    return detail::not_finite("length", 0, {0, a.length, nullptr}).with_subject(a.name);
  for (std::size_t ti = 0; ti < a.tracks.size(); ++ti) {
    const track& t = a.tracks[ti];
    if (const auto bad = detail::first_non_finite(t.keys, t.stride(), 0, t.stride() / 4))
      return detail::not_finite("track.keyframe", ti, bad, file).with_subject(t.name);
    for (std::uint32_t k = 1; k < t.keyframe_count; ++k)
      if (load_le_unchecked<float>(t.keys.data() + std::size_t{k} * t.stride()) <
          load_le_unchecked<float>(t.keys.data() + std::size_t{k - 1} * t.stride()))
        return err(errc::u3d_key_order, "track.keyframe", ti, k, t.name);
  }
  for (std::size_t ti = 0; ti < a.variant_tracks.size(); ++ti) {
    const variant_track& t = a.variant_tracks[ti];
    const std::uint32_t size = variant_value_size(t.type);
    if (size == variable_size) continue;  // string keys: times are interleaved with variable-size values
    const std::size_t stride = 4 + size;
    float previous = -std::numeric_limits<float>::infinity();
    for (std::uint32_t k = 0; k < t.keyframe_count; ++k) {
      const std::byte* at = t.keys.data() + std::size_t{k} * stride;
      const float time = load_le_unchecked<float>(at);
      if (!untold::detail::is_finite(time))
        return detail::not_finite("variant.time", ti, {k, time, at}, file).with_subject(t.name);
      if (time < previous) return err(errc::u3d_key_order, "variant.time", ti, k, t.name);
      previous = time;
    }
  }
  return {};
}

/// Writes `a` as a .ani of kind a.kind (UAN2: a.version decides variant
/// tracks and weights). Deterministic; bad input (spans not sized as
/// documented, names with NULs, variant tracks in a file that cannot hold
/// them) is invalid_argument, and the bytes are re-read before returning.
[[nodiscard]] inline result<std::vector<std::byte>> write_animation(const animation& a) {
  std::vector<std::byte> out;
  byte_sink s(out);
  put_id(out, a.kind == animation_kind::uan2 ? "UAN2" : "UANI");
  if (a.kind == animation_kind::uan2) s.put<std::uint32_t>(a.version);
  if (a.name.find('\0') != std::string_view::npos) return make_error(errc::invalid_argument).at_field("name")
      .at_record(0).with_value(0);
  s.cstring(a.name);
  s.put<float>(a.length);
  s.put<std::uint32_t>(static_cast<std::uint32_t>(a.tracks.size()));
  for (std::size_t i = 0; i < a.tracks.size(); ++i) {
    const track& t = a.tracks[i];
    if (t.name.find('\0') != std::string_view::npos) return make_error(errc::invalid_argument).at_field("track.name")
        .at_record(i).with_value(0);
    if (std::uint64_t{t.keyframe_count} * t.stride() != t.keys.size()) return make_error(errc::invalid_argument)
        .at_field("track.keys").at_record(i).with_value(t.keys.size());
    s.cstring(t.name);
    s.put<std::uint8_t>(t.mask);
    if (a.has_weights()) s.put<float>(t.weight);
    s.put<std::uint32_t>(t.keyframe_count);
    s.bytes(t.keys);
  }
  if (!a.has_variant_tracks() && !a.variant_tracks.empty()) return make_error(errc::invalid_argument)
      .at_field("variantTracks").at_record(0).with_value(a.variant_tracks.size());
  if (a.has_variant_tracks()) {
    s.put<std::uint32_t>(static_cast<std::uint32_t>(a.variant_tracks.size()));
    for (std::size_t i = 0; i < a.variant_tracks.size(); ++i) {
      const variant_track& t = a.variant_tracks[i];
      if (t.name.find('\0') != std::string_view::npos) return make_error(errc::invalid_argument)
          .at_field("variant.name").at_record(i).with_value(0);
      s.cstring(t.name);
      s.put<std::uint8_t>(t.type);
      s.put<std::uint8_t>(t.interpolation);
      s.put<float>(t.tension);
      if (a.has_weights()) s.put<float>(t.weight);
      s.put<std::uint32_t>(t.keyframe_count);
      s.bytes(t.keys);
      s.bytes(t.tangents);
    }
  }
  animation_options check;
  check.limits.max_records = ~std::uint32_t{0};
  auto reread = open_animation(out, check);
  if (!reread) return reread.error();
  return out;
}

}  // namespace untold::urho3d
