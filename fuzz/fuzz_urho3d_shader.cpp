// fuzz_urho3d_shader: open_shader / open_script on any bytes. Properties: a
// rejection has a U3D rule id; an accepted shader cache or script writes back
// to exactly the input.
#include <cstdint>
#include <cstring>

#include <untold/urho3d/shader.hpp>

#include "fuzz_urho3d_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace u3 = untold::urho3d;
  const untold::byte_span file(reinterpret_cast<const std::byte*>(data), size);
  auto same = [&](const std::vector<std::byte>& out) {
    return out.size() == size && (size == 0 || std::memcmp(out.data(), data, size) == 0);
  };
  if (auto sc = u3::open_script(file)) {
    if (!same(u3::write_script(*sc))) u3d_fuzz::die("write_script did not reproduce the input");
    return 0;
  }
  auto sh = u3::open_shader(file, {.limits = u3d_fuzz::fuzz_limits()});
  if (!sh) {
    u3d_fuzz::check_rejection(sh.error());
    return 0;
  }
  auto again = u3::write_shader(*sh);
  if (!again || !same(*again)) u3d_fuzz::die("write_shader did not reproduce the input");
  return 0;
}
