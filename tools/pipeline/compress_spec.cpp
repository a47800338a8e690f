#include "compress_spec.hpp"

#include <charconv>

namespace untold::tools {

std::optional<chunk_compression> parse_compression(std::string_view spec, std::string& error) {
  const std::size_t colon = spec.find(':');
  const std::string_view method = spec.substr(0, colon);
  std::optional<int> level;
  if (colon != std::string_view::npos) {
    const std::string_view digits = spec.substr(colon + 1);
    int value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) {
      error = "bad compression level '" + std::string(digits) + "' (expected an integer)";
      return std::nullopt;
    }
    level = value;
  }
  const auto check_level = [&](int lo, int hi) {
    if (level && (*level < lo || *level > hi)) {
      error = std::string(method) + " level must be " + std::to_string(lo) + ".." + std::to_string(hi);
      return false;
    }
    return true;
  };
  if (method == "none" || method == "lz4" || method == "meshopt") {
    if (level) {
      error = std::string(method) + (method == "meshopt" ? " takes no level (use meshopt+zstd:N)"
                                                         : " takes no level (use lz4hc:N for a levelled lz4)");
      return std::nullopt;
    }
    if (method == "meshopt") return chunk_compression{compression::meshopt, 0};
    return method == "none" ? chunk_compression{compression::none, 0} : chunk_compression{compression::lz4, 0};
  }
  if (method == "lz4hc") {
    if (!check_level(1, 12)) return std::nullopt;
    return chunk_compression{compression::lz4, level.value_or(9)};
  }
  if (method == "zstd" || method == "meshopt+zstd") {
    if (!check_level(1, 22)) return std::nullopt;
    return chunk_compression{method == "zstd" ? compression::zstd : compression::meshopt_zstd, level.value_or(0)};
  }
  error = "unknown compression '" + std::string(spec) +
          "' (expected none, lz4, lz4hc[:N], zstd[:N], meshopt or meshopt+zstd[:N])";
  return std::nullopt;
}

compression_policy uniform_policy(chunk_compression c) {
  compression_policy policy;
  policy.metadata = c;
  policy.data = c;
  return policy;
}

std::string describe_compression(chunk_compression c) {
  switch (c.method) {
    case compression::none: return "none";
    case compression::lz4: return c.level > 0 ? "lz4hc:" + std::to_string(c.level) : "lz4";
    case compression::zstd:
    case compression::meshopt_zstd: {
      std::string name(compression_name(static_cast<std::uint32_t>(c.method)));
      if (c.level != 0) name.append(":").append(std::to_string(c.level));
      return name;
    }
    case compression::meshopt: return "meshopt";
  }
  return "unknown";
}

}  // namespace untold::tools
