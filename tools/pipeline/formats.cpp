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

}  // namespace untold::tools
