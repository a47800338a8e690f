// tools/pipeline/assetc_config.cpp - assetc.yml: parsing, glob rules and the layer
// precedence of `untold build` (see assetc_build.hpp).
#include <system_error>

#include <yaml-cpp/yaml.h>

#include "assetc_build.hpp"

namespace fs = std::filesystem;

namespace untold::tools::assetc_build {

namespace {

std::string where_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.line >= 0 ? " (line " + std::to_string(m.line + 1) + ")" : "";
}

/// A scalar as bool; a wrong type is a warning (the key is ignored).
std::optional<bool> as_bool(const YAML::Node& n, const std::string& key, config& out) {
  bool v = false;
  if (n.IsScalar() && YAML::convert<bool>::decode(n, v)) return v;
  out.warnings.push_back("assetc.yml: '" + key + "' is not a boolean" + where_of(n) + "; ignored");
  return std::nullopt;
}

std::optional<std::string> as_string(const YAML::Node& n, const std::string& key, config& out) {
  if (n.IsScalar()) return n.Scalar();
  out.warnings.push_back("assetc.yml: '" + key + "' is not a string" + where_of(n) + "; ignored");
  return std::nullopt;
}

void unknown(const std::string& key, const std::string& scope, const YAML::Node& n, config& out) {
  out.warnings.push_back("assetc.yml: unknown key '" + key + "' in " + scope + where_of(n));
}

/// mesh: / texture: blocks of a layer or a rule.
bool parse_setting_block(const std::string& key, const YAML::Node& value, const std::string& scope,
                         settings_overlay& o, config& out) {
  if (key == "mesh" || key == "texture") {
    if (!value.IsMap()) {
      out.warnings.push_back("assetc.yml: '" + scope + "." + key + "' is not a map" + where_of(value) + "; ignored");
      return true;
    }
    for (const auto& kv : value) {
      const std::string k = kv.first.as<std::string>();
      if (key == "mesh" && k == "merge") o.mesh_merge = as_bool(kv.second, scope + ".mesh.merge", out);
      else if (key == "texture" && k == "compress") o.texture_compress = as_bool(kv.second, scope + ".texture.compress", out);
      else unknown(k, scope + "." + key, kv.first, out);
    }
    return true;
  }
  return false;
}

void parse_layer(const YAML::Node& node, const std::string& scope, bool preset, layer& l, config& out) {
  if (!node.IsMap()) {
    if (!node.IsNull()) out.warnings.push_back("assetc.yml: '" + scope + "' is not a map" + where_of(node) + "; ignored");
    return;
  }
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (parse_setting_block(key, kv.second, scope, l.globals, out)) continue;
    if (key == "output" && preset) {
      l.output = as_string(kv.second, scope + ".output", out);
    } else if (key == "rules") {
      if (!kv.second.IsSequence()) {
        out.warnings.push_back("assetc.yml: '" + scope + ".rules' is not a list" + where_of(kv.second) + "; ignored");
        continue;
      }
      for (const auto& r : kv.second) {
        if (!r.IsMap()) {
          out.warnings.push_back("assetc.yml: a rule in '" + scope + "' is not a map" + where_of(r) + "; ignored");
          continue;
        }
        rule rl;
        bool has_match = false;
        for (const auto& rkv : r) {
          const std::string rk = rkv.first.as<std::string>();
          if (rk == "match") {
            if (auto m = as_string(rkv.second, scope + ".rules.match", out)) {
              rl.match = *m;
              has_match = true;
            }
          } else if (!parse_setting_block(rk, rkv.second, scope + ".rules", rl.overlay, out)) {
            unknown(rk, scope + ".rules", rkv.first, out);
          }
        }
        if (!has_match) {
          out.warnings.push_back("assetc.yml: a rule in '" + scope + "' has no 'match'" + where_of(r) + "; ignored");
          continue;
        }
        l.rules.push_back(std::move(rl));
      }
    } else {
      unknown(key, scope, kv.first, out);
    }
  }
}

void parse_root(const YAML::Node& root, config& out) {
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (key == "input") {
      if (auto s = as_string(kv.second, key, out)) out.input = *s;
    } else if (key == "output") {
      if (auto s = as_string(kv.second, key, out)) out.output = *s;
    } else if (key == "pack") {
      if (auto b = as_bool(kv.second, key, out)) out.pack = *b;
    } else if (key == "preset") {
      if (auto s = as_string(kv.second, key, out)) out.preset = *s;
    } else if (key == "default") {
      parse_layer(kv.second, "default", false, out.defaults, out);
    } else if (key == "presets") {
      if (!kv.second.IsMap()) {
        if (!kv.second.IsNull()) out.warnings.push_back("assetc.yml: 'presets' is not a map" + where_of(kv.second) + "; ignored");
        continue;
      }
      for (const auto& p : kv.second) {
        const std::string name = p.first.as<std::string>();
        layer l;
        parse_layer(p.second, "presets." + name, true, l, out);
        out.presets.emplace_back(name, std::move(l));
      }
    } else {
      unknown(key, "the top level", kv.first, out);
    }
  }
}

}  // namespace

std::optional<std::string> parse_config(std::string_view text, config& out) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (root.IsNull()) return std::nullopt;  // an empty file: all defaults
    if (!root.IsMap()) return "assetc.yml: the document is not a map";
    parse_root(root, out);
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    return std::string("assetc.yml: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("assetc.yml: ") + e.what();
  }
}

std::optional<std::string> load_config(const fs::path& file, config& out) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return file.string() + ": no such file";
  try {
    const YAML::Node root = YAML::LoadFile(file.string());
    out.file = file;
    if (root.IsNull()) return std::nullopt;
    if (!root.IsMap()) return file.string() + ": the document is not a map";
    parse_root(root, out);
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    return file.string() + ": " + e.what();
  } catch (const std::exception& e) {
    return file.string() + ": " + e.what();
  }
}

fs::path find_config(const fs::path& start) {
  std::error_code ec;
  fs::path dir = fs::absolute(start, ec).lexically_normal();
  if (ec) return {};
  for (;;) {
    const fs::path candidate = dir / "assetc.yml";
    if (fs::is_regular_file(candidate, ec)) return candidate;
    const fs::path parent = dir.parent_path();
    if (parent == dir || parent.empty()) return {};
    dir = parent;
  }
}

bool glob_match(std::string_view pattern, std::string_view path) {
  // Iterative wildcard match with single-star backtracking (linear-ish, no recursion).
  std::size_t p = 0, s = 0, star = std::string_view::npos, mark = 0;
  while (s < path.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == path[s])) {
      ++p;
      ++s;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = s;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      s = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

settings resolve_settings(const config& c, const layer* preset, std::string_view relative_path) {
  settings s;  // 1. built-in defaults
  c.defaults.globals.apply(s);  // 2. default globals
  if (preset != nullptr) preset->globals.apply(s);  // 3. preset globals
  for (const rule& r : c.defaults.rules)  // 4. default rules, cascading
    if (glob_match(r.match, relative_path)) r.overlay.apply(s);
  if (preset != nullptr)  // 5. preset rules win
    for (const rule& r : preset->rules)
      if (glob_match(r.match, relative_path)) r.overlay.apply(s);
  return s;
}

}  // namespace untold::tools::assetc_build
