// fuzz_urho3d_animation: open_animation on any bytes. Properties: a
// rejection has a U3D rule id; an accepted animation writes back to exactly
// the input; every keyframe accessor stays inside the file (ASan); an
// animation that passes the deep checks goes the way `untold cook --animations`
// takes it, with a model whose skeleton names a bone after each of its first
// 64 tracks (so the tracks become channels): a refusal is a U3D rule or
// R-LIMITS, and the file written opens with deep checks.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "fuzz_urho3d_cook.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace u3 = untold::urho3d;
  const untold::byte_span file(reinterpret_cast<const std::byte*>(data), size);
  auto a = u3::open_animation(file, {.limits = u3d_fuzz::fuzz_limits()});
  if (!a) {
    u3d_fuzz::check_rejection(a.error());
    return 0;
  }
  float sink = 0;
  for (const u3::track& t : a->tracks)
    for (std::uint32_t k = 0; k < t.keyframe_count; ++k) sink += t.key(k).time;
  (void)sink;
  auto again = u3::write_animation(*a);
  if (!again) u3d_fuzz::die("write_animation refused an accepted animation: " + again.error().describe());
  if (again->size() != size || (size != 0 && std::memcmp(again->data(), data, size) != 0))
    u3d_fuzz::die("write_animation did not reproduce the input");
  if (auto deep = u3::validate_animation_deep(*a, file); !deep) {
    u3d_fuzz::check_rejection(deep.error());
    return 0;
  }
  u3::model m;  // a chain of bones named after the tracks
  m.kind = u3::model_kind::umd2;
  m.bones.resize(std::min<std::size_t>(a->tracks.size(), 64));
  for (std::size_t i = 0; i < m.bones.size(); ++i) {
    m.bones[i].name = a->tracks[i].name;
    m.bones[i].parent = static_cast<std::uint32_t>(i == 0 ? 0 : i - 1);
  }
  u3d_fuzz::cook(m, std::span(&*a, 1), size);
  return 0;
}
