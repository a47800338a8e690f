// tools/pipeline/formats.cpp - the registry of foreign formats (see formats.hpp).
#include "formats.hpp"

namespace untold::tools {

json format_json(const std::string& path, std::string_view format) { return json{{"file", path}, {"format", format}}; }

json invalid_json(json j, const error& e) {
  j["valid"] = false;
  j["error"] = error_json(e);
  return j;
}

std::optional<json> write_whole(const json& document, document_stream& out) {
  if (!document.value("valid", false)) return document;
  out.value(nullptr, document);
  return std::nullopt;
}

std::span<const format_handler> foreign_formats() {
  static const std::vector<format_handler> all = [] {
    std::vector<format_handler> v;
    add_urho3d_formats(v);
    add_udm_formats(v);
    add_assetc_formats(v);
    return v;
  }();
  return all;
}

info_listing& listing() noexcept {
  static info_listing current;
  return current;
}

const format_handler* recognise(byte_span head) {
  for (const format_handler& f : foreign_formats())
    if (f.recognise != nullptr && f.recognise(head)) return &f;
  return nullptr;
}

const format_handler* find_format(std::string_view name) {
  for (const format_handler& f : foreign_formats())
    if (f.name == name) return &f;
  return nullptr;
}

json unrecognised_error_json(byte_span bytes) {
  std::string formats = ".untold";
  for (const format_handler& f : foreign_formats()) formats += ", " + std::string(f.name);
  const std::string message = "unrecognised file: the first bytes (" + first_bytes(bytes) +
                              ") are the magic of no format this tool reads (" + formats + ")";
  constexpr errc code = errc::format_unknown;
  return json{{"rule", rule_id(code)},
              {"name", untold::name(code)},
              {"message", message},
              {"context", json::object()},
              {"describe", std::string(rule_id(code)) + " " + std::string(untold::name(code)) + ": " + message}};
}

}  // namespace untold::tools
