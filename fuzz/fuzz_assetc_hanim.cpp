// fuzz_assetc_hanim: untold::assetc::open_hanim on arbitrary bytes.
// Properties: nothing reads outside the bytes; rejections carry HM- rule
// ids; deep-valid implies valid; every key can be read; a deep-valid file
// written back by write_hanim reopens with the same clips, channels and key
// bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <untold/assetc/hanim.hpp>

#include "die.hpp"

using untold_fuzz::die;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace ua = untold::assetc;
  std::vector<std::byte> buffer(size);
  if (size != 0) std::memcpy(buffer.data(), data, size);
  untold::limits lim;
  lim.max_records = 1u << 16;
  auto plain = ua::open_hanim(buffer, {.limits = lim});
  auto deep = ua::open_hanim(buffer, {.limits = lim, .deep_checks = true});
  for (const auto* r : {&plain, &deep})
    if (!*r && !r->error().rule_id().starts_with("HM-")) die("rejection without an HM- rule: " + r->error().describe());
  if (deep && !plain) die("deep-valid but not valid");
  if (!plain) return 0;
  float sum = 0;
  for (const ua::anim_channel& c : plain->all_channels())
    for (std::size_t k = 0; k < c.key_count; ++k) sum += c.time(k) + c.value(k, c.components - 1u);
  volatile float keep = sum;
  (void)keep;
  if (!deep) return 0;

  // Owning copies of the keys, then the writer's inputs pointing at them.
  std::vector<std::vector<float>> times, values;
  std::vector<std::vector<ua::anim_channel_input>> channels(deep->clips().size());
  for (std::size_t c = 0; c < deep->clips().size(); ++c)
    for (const ua::anim_channel& ch : deep->channels(c)) {
      times.emplace_back(), values.emplace_back();
      for (std::size_t k = 0; k < ch.key_count; ++k) {
        times.back().push_back(ch.time(k));
        for (std::size_t v = 0; v < ch.components; ++v) values.back().push_back(ch.value(k, v));
      }
    }
  std::size_t n = 0;
  std::vector<ua::anim_clip_input> clips;
  for (std::size_t c = 0; c < deep->clips().size(); ++c) {
    for (const ua::anim_channel& ch : deep->channels(c)) {
      channels[c].push_back({ch.joint, ch.path, ch.interp, times[n], values[n]});
      ++n;
    }
    clips.push_back({deep->clips()[c].name, deep->clips()[c].duration, channels[c]});
  }
  auto out = ua::write_hanim(clips);
  if (!out) die("a deep-valid file did not write back: " + out.error().describe());
  auto again = ua::open_hanim(*out, {.deep_checks = true});
  if (!again) die("a rewritten file does not reopen: " + again.error().describe());
  if (again->all_channels().size() != deep->all_channels().size() || again->clips().size() != deep->clips().size())
    die("structure changed on rewrite");
  for (std::size_t i = 0; i < deep->all_channels().size(); ++i) {
    const auto& a = deep->all_channels()[i];
    const auto& b = again->all_channels()[i];
    if (a.joint != b.joint || a.path != b.path || a.interp != b.interp || a.keys.size() != b.keys.size() ||
        (!a.keys.empty() && std::memcmp(a.keys.data(), b.keys.data(), a.keys.size()) != 0))
      die("a channel changed on rewrite");
  }
  return 0;
}
