// tools/pipeline/report_json.cpp - see report_json.hpp.
#include "report_json.hpp"

namespace untold::tools {

json report_json(const convert::conversion_report& r) {
  json list = json::array();
  for (const convert::report_entry& e : r.entries)
    list.push_back(json{{"severity", convert::name(e.severity)},
                        {"what", e.what},
                        {"where", e.where},
                        {"reason", e.reason},
                        {"count", e.count}});
  return list;
}

json cook_report_json(const cook_report& r) {
  json written = json::array();
  for (const std::filesystem::path& w : r.written) written.push_back(w.string());
  using kind = convert::report_entry::kind;
  return json{{"bytes", r.bytes},
              {"entities", r.entities},
              {"meshes", r.meshes},
              {"vertices", r.vertices},
              {"triangles", r.triangles},
              {"materials", r.materials},
              {"textures", r.textures},
              {"written", std::move(written)},
              {"warnings", r.warnings},
              {"dropped", r.conversion.count(kind::dropped)},
              {"changed", r.conversion.count(kind::changed)},
              {"report", report_json(r.conversion)}};
}

json tile_summary_json(const tile_summary& t) {
  return json{{"tile_id", t.id},
              {"path", t.path},
              {"bytes", t.bytes},
              {"draws", t.draws},
              {"triangles", t.triangles},
              {"lod_triangles", t.lod_triangles},
              {"lod_bytes", t.lod_bytes},
              {"hlod_triangles", t.hlod_triangles},
              {"hlod_bytes", t.hlod_bytes}};
}

}  // namespace untold::tools
