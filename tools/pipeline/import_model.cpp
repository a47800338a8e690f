// tools/pipeline/import_model.cpp - picks the importer (see import_model.hpp).
#include "import_model.hpp"

#include "import_assimp.hpp"
#include "import_gltf.hpp"

namespace fs = std::filesystem;

namespace untold::tools {

model_import_result import_model(const fs::path& path, const model_import_options& options) {
  return is_gltf(path) ? import_gltf(path, options) : import_assimp(path, options);
}

std::string lower_extension(const fs::path& p) {
  std::string e = p.extension().string();
  for (char& c : e) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return e;
}

std::string percent_decoded(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

fs::path texture_file(const fs::path& source, const convert::texture& t) {
  if (t.uri.empty() || !t.embedded.empty()) return {};
  const fs::path uri(t.uri);
  return uri.is_absolute() ? uri : (source.parent_path() / uri).lexically_normal();
}

}  // namespace untold::tools
