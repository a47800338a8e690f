// fuzz_urho3d_package: open_package on any bytes, then extract every entry.
// Properties: rejections have a U3D rule id (or R-LIMITS); extraction of an
// accepted package never leaves the file (ASan) and yields exactly the
// declared size; a package whose entries all extract is rebuilt by the
// writer into a package with the same entries.
#include <cstdint>
#include <string>
#include <vector>

#include <untold/urho3d/package.hpp>

#include "fuzz_urho3d_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace u3 = untold::urho3d;
  const untold::byte_span file(reinterpret_cast<const std::byte*>(data), size);
  const untold::limits lim = u3d_fuzz::fuzz_limits();
  auto p = u3::open_package(file, {.limits = lim});
  if (!p) {
    u3d_fuzz::check_rejection(p.error());
    return 0;
  }
  std::vector<std::vector<std::byte>> contents;
  for (const u3::package_entry& e : p->entries) {
    std::vector<std::byte> out;
    if (auto s = u3::extract_entry(*p, e, out, lim); !s) {
      if (s.error().code != untold::errc::compression_unsupported) u3d_fuzz::check_rejection(s.error());
      return 0;
    }
    if (out.size() != e.size) u3d_fuzz::die("extracted size differs from the declared size");
    contents.push_back(std::move(out));
  }
  std::vector<u3::package_input> inputs;
  for (std::size_t i = 0; i < contents.size(); ++i) inputs.push_back({std::string(p->entries[i].name), contents[i]});
  auto rebuilt = u3::write_package(inputs, {.compress = p->kind == u3::package_kind::ulz4});
  if (!rebuilt) {
    if (rebuilt.error().code == untold::errc::compression_unsupported) return 0;
    u3d_fuzz::die("write_package refused an accepted package's entries: " + rebuilt.error().describe());
  }
  auto back = u3::open_package(*rebuilt, {.deep_checks = true});
  if (!back || back->entries.size() != p->entries.size()) u3d_fuzz::die("rebuilt package does not read back");
  return 0;
}
