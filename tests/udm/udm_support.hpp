// Helpers for the UDM tests: fixture loading and hand-built binary UDM bytes
// (built field by field here, not by the library's writer, so the crafted
// files test the reader independently).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <untold/sink.hpp>
#include <untold/udm/reader.hpp>
#include <untold/udm/writer.hpp>

namespace udm_test {

using bytes = std::vector<std::byte>;

inline const char* const fixture_names[] = {"cube", "empty", "error", "rect_unlit"};

inline bytes load(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  REQUIRE(f.good());
  std::vector<char> d((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bytes out(d.size());
  std::memcpy(out.data(), d.data(), d.size());
  return out;
}

inline bytes fixture(std::string_view name) {
  return load(std::filesystem::path(UNTOLD_TEST_DATA_DIR) / "udm" / "models" / (std::string(name) + ".pmdl_b"));
}

/// A property: type byte + payload.
struct prop {
  std::uint8_t type = 0;
  bytes payload;
};

inline bytes u8s(std::initializer_list<int> v) {
  bytes out;
  for (int x : v) out.push_back(static_cast<std::byte>(x));
  return out;
}

inline void put_string(untold::byte_sink& s, std::string_view str) {
  if (str.size() < 255) {
    s.put<std::uint8_t>(static_cast<std::uint8_t>(str.size()));
  } else {
    s.put<std::uint8_t>(255);
    s.put<std::uint32_t>(static_cast<std::uint32_t>(str.size()));
  }
  s.string(str);
}

/// An Element payload: u64 size (bytes after it, or `size_override`), u32
/// count, keys, values.
inline bytes element(const std::vector<std::pair<std::string, prop>>& children, std::uint64_t size_override = ~0ull) {
  bytes body;
  untold::byte_sink s(body);
  s.put<std::uint32_t>(static_cast<std::uint32_t>(children.size()));
  for (const auto& [k, v] : children) {
    s.put<std::uint8_t>(static_cast<std::uint8_t>(k.size()));
    s.string(k);
  }
  for (const auto& [k, v] : children) {
    s.put<std::uint8_t>(v.type);
    s.bytes(v.payload);
  }
  bytes out;
  untold::byte_sink o(out);
  o.put<std::uint64_t>(size_override == ~0ull ? body.size() : size_override);
  o.bytes(body);
  return out;
}

inline prop element_prop(const std::vector<std::pair<std::string, prop>>& children) { return {27, element(children)}; }

inline prop string_prop(std::string_view s) {
  prop p{1, {}};
  untold::byte_sink o(p.payload);
  put_string(o, s);
  return p;
}

inline prop u32_prop(std::uint32_t v) {
  prop p{8, {}};
  untold::byte_sink o(p.payload);
  o.put<std::uint32_t>(v);
  return p;
}

/// "UDMB", version, the root type byte (Element) and `root_payload`.
inline bytes file(const bytes& root_payload, std::uint32_t version = 2, std::uint8_t root_type = 27) {
  bytes out;
  untold::byte_sink o(out);
  o.string("UDMB");
  o.put<std::uint32_t>(version);
  o.put<std::uint8_t>(root_type);
  o.bytes(root_payload);
  return out;
}

/// A file whose root has the asset header and `data` as assetData.
inline bytes asset_file(const std::vector<std::pair<std::string, prop>>& data) {
  return file(element({{"assetData", element_prop(data)}, {"assetType", string_prop("TEST")}, {"assetVersion", u32_prop(1)}}));
}

inline untold::udm::read_options relaxed() {
  untold::udm::read_options o;
  o.require_asset_header = false;
  return o;
}

inline untold::errc parse_error(const bytes& f, const untold::udm::read_options& o = relaxed()) {
  auto d = untold::udm::document::parse(f, o);
  if (d) return untold::errc::ok;
  return d.error().code;
}

inline bool same(const bytes& a, const bytes& b) { return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin()); }

}  // namespace udm_test
