// untold/assetc/hanim.hpp - assetc .hanim v1 animation clips: reader,
// validator, key views and a deterministic writer.
//
// Reads: a 16-byte header ("HANM", version 1, clipCount, reserved), then per
// clip u16 nameLen, name, f32 duration, u32 channelCount, and per channel u32
// joint, u8 path (0 translation, 1 rotation, 2 scale), u8 interp (0 step,
// 1 linear), u8 components, u8 pad, u32 keyCount, keys of f32 time +
// components x f32. Clips and channels are parsed once into vectors; names
// and keys stay views into the caller's bytes (decoded on access).
//
// Rejects (open_hanim): HM-TRUNC HM-MAGIC HM-VERSION HM-LIMITS HM-COUNT
// (every count checked against the remaining bytes before allocating)
// HM-HANIM-CHANNEL (path > 2, interp > 1) HM-HANIM-COMPONENTS (not 3|4, or not
// 4 for rotation / 3 for translation and scale) HM-HANIM-TIME (a key time not
// finite or smaller than the previous one, a duration negative or not
// finite) HM-TRAILING; with deep_checks also HM-FINITE (a key value).
// Joint indices are checked against a skeleton by check.hpp (HM-CHECK-JOINT).
//
// Safe on untrusted input: the cursor checks every read; work and memory are
// linear in the file size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../bytes.hpp"
#include "../cursor.hpp"
#include "../error.hpp"
#include "../sink.hpp"
#include "common.hpp"

namespace untold::assetc {

inline constexpr std::uint32_t hanim_version = 1;
inline constexpr std::size_t hanim_header_size = 16;

enum class anim_path : std::uint8_t { translation = 0, rotation = 1, scale = 2 };
enum class anim_interp : std::uint8_t { step = 0, linear = 1 };

[[nodiscard]] constexpr std::uint8_t components_of(anim_path p) noexcept { return p == anim_path::rotation ? 4 : 3; }
[[nodiscard]] constexpr std::string_view anim_path_name(std::uint8_t p) noexcept {
  return p == 0 ? "translation" : p == 1 ? "rotation" : p == 2 ? "scale" : "unknown";
}
[[nodiscard]] constexpr std::string_view anim_interp_name(std::uint8_t i) noexcept {
  return i == 0 ? "step" : i == 1 ? "linear" : "unknown";
}

/// One validated channel; keys view the file.
struct anim_channel {
  std::uint32_t joint = 0;
  anim_path path = anim_path::translation;
  anim_interp interp = anim_interp::linear;
  std::uint8_t components = 3;
  std::uint32_t key_count = 0;
  byte_span keys{};  // key_count x (1 + components) x f32

  /// Precondition for both: i < key_count (and c < components).
  [[nodiscard]] float time(std::size_t i) const noexcept {
    return load_le_unchecked<float>(keys.data() + i * stride());
  }
  [[nodiscard]] float value(std::size_t i, std::size_t c) const noexcept {
    return load_le_unchecked<float>(keys.data() + i * stride() + 4 + 4 * c);
  }
  [[nodiscard]] std::size_t stride() const noexcept { return 4u * (1u + components); }
};

struct anim_clip {
  std::string_view name{};
  float duration = 0;
  std::uint32_t first_channel = 0;  // into hanim::all_channels()
  std::uint32_t channel_count = 0;
};

/// A validated .hanim; names and keys view the caller's bytes.
class hanim {
 public:
  [[nodiscard]] std::span<const anim_clip> clips() const noexcept { return clips_; }
  /// The channels of clip c. Precondition: c < clips().size().
  [[nodiscard]] std::span<const anim_channel> channels(std::size_t c) const noexcept {
    return std::span(channels_).subspan(clips_[c].first_channel, clips_[c].channel_count);
  }
  [[nodiscard]] std::span<const anim_channel> all_channels() const noexcept { return channels_; }

 private:
  friend result<hanim> open_hanim(byte_span, const open_options&);
  std::vector<anim_clip> clips_;
  std::vector<anim_channel> channels_;
};

/// Opens and validates a .hanim (rules above). Safe on untrusted input.
[[nodiscard]] inline result<hanim> open_hanim(byte_span bytes, const open_options& options = {}) {
  if (bytes.size() < 4) return make_error(errc::hm_truncated).at_field("magic").with_value(bytes.size()).at_offset(0);
  if (magic_of(bytes) != hanim_magic) return make_error(errc::hm_bad_magic).at_field("magic")
      .with_value(magic_of(bytes)).at_offset(0);
  byte_cursor c(bytes, detail::hm_cursor_rules);
  (void)c.skip(4, "magic");
  auto version = c.read<std::uint32_t>("version");
  if (!version) return version.error();
  if (*version != hanim_version) return make_error(errc::hm_bad_version).at_field("version").with_value(*version)
      .at_offset(4);
  // A clip is at least 10 bytes (nameLen, duration, channelCount), a channel 12.
  auto clip_count = c.count_u32(10, "clipCount", options.limits.max_records, errc::hm_limit_exceeded);
  if (!clip_count) return clip_count.error();
  if (auto reserved = c.read<std::uint32_t>("reserved"); !reserved) return reserved.error();
  budget own(options.limits, bytes.size());
  budget& spend = detail::reader_budget(options, own);
  UNTOLD_TRY(spend.charge_items(*clip_count, sizeof(anim_clip), "clips", errc::hm_limit_exceeded));
  hanim h;
  h.clips_.reserve(*clip_count);
  std::uint64_t keys_total = 0;
  for (std::uint32_t ci = 0; ci < *clip_count; ++ci) {
    anim_clip clip;
    auto len = c.read<std::uint16_t>("nameLen");
    if (!len) return len.error();
    auto name = c.string(*len, "name");
    if (!name) return name.error();
    clip.name = *name;
    const std::uint64_t duration_at = c.offset();
    auto duration = c.read<float>("duration");
    if (!duration) return duration.error();
    clip.duration = *duration;
    if (!detail::is_finite(clip.duration) || clip.duration < 0.0f)
      return make_error(errc::hm_anim_time).at_field("duration").with_float(clip.duration).at_record(ci)
          .at_offset(duration_at);
    const std::uint64_t room = options.limits.max_records - std::min<std::uint64_t>(h.channels_.size(), options.limits.max_records);
    auto channel_count = c.count_u32(12, "channelCount", room, errc::hm_limit_exceeded);
    if (!channel_count) return channel_count.error();
    UNTOLD_TRY(spend.charge_items(*channel_count, sizeof(anim_channel), "channels", errc::hm_limit_exceeded));
    clip.first_channel = static_cast<std::uint32_t>(h.channels_.size());
    clip.channel_count = *channel_count;
    // No reserve here: an exact reserve per clip would copy every earlier channel again (quadratic).
    for (std::uint32_t k = 0; k < *channel_count; ++k) {
      const std::uint64_t at = c.offset();
      const auto channel_index = h.channels_.size();
      anim_channel ch;
      auto joint_index = c.read<std::uint32_t>("joint");
      if (!joint_index) return joint_index.error();
      auto path = c.read<std::uint8_t>("path");
      if (!path) return path.error();
      auto interp = c.read<std::uint8_t>("interp");
      if (!interp) return interp.error();
      auto components = c.read<std::uint8_t>("components");
      if (!components) return components.error();
      if (auto pad = c.read<std::uint8_t>("pad"); !pad) return pad.error();
      if (*path > 2) return make_error(errc::hm_anim_channel).at_field("path").with_value(*path)
          .at_record(channel_index).at_offset(at + 4);
      if (*interp > 1) return make_error(errc::hm_anim_channel).at_field("interp").with_value(*interp)
          .at_record(channel_index).at_offset(at + 5);
      ch.joint = *joint_index;
      ch.path = static_cast<anim_path>(*path);
      ch.interp = static_cast<anim_interp>(*interp);
      if ((*components != 3 && *components != 4) || *components != components_of(ch.path))
        return make_error(errc::hm_anim_components).at_field("components").with_value(*components)
            .at_record(channel_index).at_offset(at + 6);
      ch.components = *components;
      const std::uint64_t count_at = c.offset();
      auto key_count = c.read<std::uint32_t>("keyCount");
      if (!key_count) return key_count.error();
      ch.key_count = *key_count;
      keys_total += *key_count;
      if (keys_total > options.limits.max_records) {
        error e = make_error(errc::hm_limit_exceeded).at_field("keyCount").with_value(keys_total)
            .with_limit(options.limits.max_records);
        e.context.offset = count_at;
        return e;
      }
      auto keys = c.array_bytes(*key_count, ch.stride(), "keys");
      if (!keys) return keys.error();
      UNTOLD_TRY(spend.charge_work(*key_count, "keys", errc::hm_limit_exceeded));
      ch.keys = *keys;
      float previous = 0.0f;
      for (std::size_t i = 0; i < ch.key_count; ++i) {
        const float t = ch.time(i);
        if (!detail::is_finite(t) || (i > 0 && t < previous))
          return make_error(errc::hm_anim_time).at_field("time").with_float(t).at_record(channel_index)
              .at_offset(count_at + 4 + i * ch.stride());
        previous = t;
        if (!options.deep_checks) continue;
        for (std::size_t v = 0; v < ch.components; ++v)
          if (!detail::is_finite(ch.value(i, v)))
            return make_error(errc::hm_not_finite).at_field("value").with_float(ch.value(i, v))
                .at_record(channel_index).at_offset(count_at + 4 + i * ch.stride() + 4 + 4 * v);
      }
      h.channels_.push_back(ch);
    }
    h.clips_.push_back(clip);
  }
  if (!c.at_end()) return make_error(errc::hm_trailing_bytes).at_field("trailing").with_value(c.remaining())
      .at_offset(c.offset());
  return h;
}

// ---- writer ----------------------------------------------------------------------------

struct anim_channel_input {
  std::uint32_t joint = 0;
  anim_path path = anim_path::translation;
  anim_interp interp = anim_interp::linear;
  std::span<const float> times{};
  std::span<const float> values{};  // times.size() x components_of(path)
};

struct anim_clip_input {
  std::string_view name{};
  float duration = 0;  // seconds; usually the last key time
  std::span<const anim_channel_input> channels{};
};

/// The bytes of a .hanim holding `clips` in order (pads and reserved 0).
/// Errors: invalid_argument when a values span does not hold times x
/// components floats, a name exceeds 65535 bytes or a count 2^32 - 1; the
/// HM- rule of open_hanim(deep_checks) otherwise (decreasing or non-finite
/// times, negative duration, non-finite values). Deterministic.
[[nodiscard]] inline result<std::vector<std::byte>> write_hanim(std::span<const anim_clip_input> clips) {
  if (clips.size() > 0xFFFFFFFFu) return make_error(errc::invalid_argument).at_field("clips").with_value(clips.size());
  std::vector<std::byte> out;
  byte_sink sink(out);
  sink.put(hanim_magic);
  sink.put(hanim_version);
  sink.put(static_cast<std::uint32_t>(clips.size()));
  sink.put(std::uint32_t{0});
  for (std::size_t ci = 0; ci < clips.size(); ++ci) {
    const anim_clip_input& clip = clips[ci];
    if (clip.name.size() > 0xFFFFu) return make_error(errc::invalid_argument).at_field("name")
        .with_value(clip.name.size()).at_record(ci);
    if (clip.channels.size() > 0xFFFFFFFFu) return make_error(errc::invalid_argument).at_field("channels")
        .with_value(clip.channels.size()).at_record(ci);
    sink.put(static_cast<std::uint16_t>(clip.name.size()));
    sink.string(clip.name);
    sink.put(clip.duration);
    sink.put(static_cast<std::uint32_t>(clip.channels.size()));
    for (const anim_channel_input& ch : clip.channels) {
      const std::size_t comps = components_of(ch.path);
      if (ch.times.size() > 0xFFFFFFFFu || ch.values.size() != ch.times.size() * comps ||
          static_cast<std::uint8_t>(ch.path) > 2 || static_cast<std::uint8_t>(ch.interp) > 1)
        return make_error(errc::invalid_argument).at_field("values").with_value(ch.values.size()).at_record(ci);
      sink.put(ch.joint);
      sink.put(static_cast<std::uint8_t>(ch.path));
      sink.put(static_cast<std::uint8_t>(ch.interp));
      sink.put(static_cast<std::uint8_t>(comps));
      sink.put(std::uint8_t{0});
      sink.put(static_cast<std::uint32_t>(ch.times.size()));
      for (std::size_t i = 0; i < ch.times.size(); ++i) {
        sink.put(ch.times[i]);
        for (std::size_t v = 0; v < comps; ++v) sink.put(ch.values[i * comps + v]);
      }
    }
  }
  open_options check;
  check.deep_checks = true;
  check.limits.max_records = 0xFFFFFFFFu;
  if (auto opened = open_hanim(out, check); !opened) return opened.error();
  return out;
}

}  // namespace untold::assetc
