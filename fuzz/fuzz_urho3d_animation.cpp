// fuzz_urho3d_animation: read_animation on any bytes. Properties: a
// rejection has a U3D rule id; an accepted animation writes back to exactly
// the input; every keyframe accessor stays inside the file (ASan).
#include <cstdint>
#include <cstring>

#include <untold/urho3d/animation.hpp>

#include "fuzz_urho3d_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace u3 = untold::urho3d;
  const untold::byte_span file(reinterpret_cast<const std::byte*>(data), size);
  auto a = u3::read_animation(file, {.limits = u3d_fuzz::fuzz_limits()});
  if (!a) {
    u3d_fuzz::check_rejection(a.error());
    return 0;
  }
  float sink = 0;
  for (const u3::track& t : a->tracks)
    for (std::uint32_t k = 0; k < t.keyframe_count; ++k) sink += t.key(k).time;
  (void)sink;
  if (auto deep = u3::validate_animation_deep(*a); !deep) u3d_fuzz::check_rejection(deep.error());
  auto again = u3::write_animation(*a);
  if (!again) u3d_fuzz::die("write_animation refused an accepted animation: " + again.error().describe());
  if (again->size() != size || (size != 0 && std::memcmp(again->data(), data, size) != 0))
    u3d_fuzz::die("write_animation did not reproduce the input");
  return 0;
}
