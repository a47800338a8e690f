// fuzz_urho3d_model: open_model on any bytes. Properties: a rejection has a
// U3D rule id; an accepted model writes back to exactly the input bytes; a
// model that passes the deep checks goes the whole way `untold cook` takes
// it (import_model, then convert::to_untold, sharing one budget): any
// refusal there is a U3D rule or R-LIMITS (never a generic
// E-INVALID-ARGUMENT), and the file written opens with deep checks.
#include <cstdint>
#include <cstring>
#include <span>

#include "fuzz_urho3d_cook.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace u3 = untold::urho3d;
  const untold::byte_span file(reinterpret_cast<const std::byte*>(data), size);
  auto m = u3::open_model(file, {.limits = u3d_fuzz::fuzz_limits()});
  if (!m) {
    u3d_fuzz::check_rejection(m.error());
    return 0;
  }
  auto again = u3::write_model(*m);
  if (!again) u3d_fuzz::die("write_model refused an accepted model: " + again.error().describe());
  if (again->size() != size || (size != 0 && std::memcmp(again->data(), data, size) != 0))
    u3d_fuzz::die("write_model did not reproduce the input");
  if (auto deep = u3::validate_model_deep(*m, file); !deep) {
    u3d_fuzz::check_rejection(deep.error());
    return 0;
  }
  u3d_fuzz::cook(*m, {}, size);
  return 0;
}
