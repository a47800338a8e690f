// tools/pipeline/import_model.cpp - picks the importer (see import_model.hpp).
#include "import_model.hpp"

#include <algorithm>

#include "import_assimp.hpp"
#include "import_gltf.hpp"

namespace fs = std::filesystem;

namespace untold::tools {

model_import_result import_model(const fs::path& path, const model_import_options& options) {
  return is_gltf(path) ? import_gltf(path, options) : import_assimp(path, options);
}

influence_summary keep_four_largest(std::vector<vertex_influences>& influences, convert::mesh& m) {
  influence_summary out;
  m.joints.assign(influences.size(), {0, 0, 0, 0});
  m.weights.assign(influences.size(), {0, 0, 0, 0});
  for (std::size_t v = 0; v < influences.size(); ++v) {
    vertex_influences& inf = influences[v];
    std::sort(inf.begin(), inf.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    if (inf.size() > 4) {
      ++out.vertices_over;
      out.dropped += inf.size() - 4;
      inf.resize(4);
    }
    float sum = 0;
    for (const auto& [w, j] : inf) sum += w;
    if (inf.empty() || !(sum > 0.0f)) {
      m.weights[v] = {1, 0, 0, 0};
      ++out.weightless;
      continue;
    }
    for (std::size_t k = 0; k < inf.size(); ++k) {
      m.joints[v][k] = inf[k].second;
      m.weights[v][k] = inf[k].first / sum;
    }
  }
  return out;
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
