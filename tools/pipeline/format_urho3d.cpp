// tools/pipeline/format_urho3d.cpp - the urho3d formats: magic recognition,
// info/validate/dump as JSON and the importer for cook (see formats.hpp,
// docs/urho3d.md). `untold pak` is tools/cli/pak.cpp.
#include "formats.hpp"

#include <algorithm>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <untold/source.hpp>
#include <untold/urho3d/urho3d.hpp>

#include "inspect.hpp"

namespace untold::tools {
namespace {

namespace u3 = untold::urho3d;
namespace fs = std::filesystem;

json floats(std::span<const float> v) {
  json a = json::array();
  for (float f : v) a.push_back(float_json(f));
  return a;
}

// ---- model ---------------------------------------------------------------------------

json element_json(const u3::vertex_element& e) {
  return json_object({{"semantic", u3::name(e.semantic)}, {"index", e.index}, {"type", u3::name(e.type)}, {"offset", e.offset}});
}

/// The first listing().max_items of `items` as JSON (`item` makes each);
/// `cut` becomes true when some were left out. `info` output then stays
/// small whatever the counts (a 4 MB model of a million vertex elements
/// used to print 153 MB); `info --full` lists everything.
template <class Item, class Make>
json first_items(std::span<const Item> items, Make item, bool& cut) {
  const std::size_t n = std::min(items.size(), listing().max_items);
  json list = json::array();
  for (std::size_t i = 0; i < n; ++i) list.push_back(item(items[i]));
  cut = cut || n < items.size();
  return list;
}

json model_counts(const u3::model& m) {
  bool cut = false;
  json j;
  j["id"] = u3::model_id(m.kind);
  if (m.kind == u3::model_kind::umd3) j["version"] = m.version;
  j["vertexBufferCount"] = m.vertex_buffers.size();
  j["vertexBuffers"] = first_items(std::span(m.vertex_buffers), [&cut](const u3::vertex_buffer& vb) {
    return json_object({{"vertices", vb.vertex_count}, {"vertexSize", vb.vertex_size}, {"elementCount", vb.elements.size()},
                        {"elements", first_items(std::span(vb.elements), element_json, cut)}});
  }, cut);
  j["indexBufferCount"] = m.index_buffers.size();
  j["indexBuffers"] = first_items(std::span(m.index_buffers), [](const u3::index_buffer& ib) {
    return json_object({{"indices", ib.index_count}, {"indexSize", ib.index_size}});
  }, cut);
  std::uint64_t lods = 0;
  for (const u3::geometry& g : m.geometries) lods += g.lods.size();
  j["geometries"] = m.geometries.size();
  j["lodLevels"] = lods;
  j["bones"] = m.bones.size();
  j["morphs"] = m.morphs.size();
  j["geometryCenters"] = !m.geometry_centers.empty();
  if (const std::size_t nan = u3::non_finite_centers(m); nan != 0) {
    j["nonFiniteGeometryCenters"] = nan;
    j["note"] = std::to_string(nan) + " geometry centre(s) are NaN or infinite: accepted (Urho3D only sorts by "
                                      "them); cook uses the centre of the geometry's bounding box";
  }
  if (cut)
    j["truncated"] = "each list shows its first " + std::to_string(listing().max_items) + " items; --full prints all";
  return j;
}

json model_info(const std::string& path, byte_span file) {
  json j = format_json(path, "urho3d-model");
  auto m = u3::open_model(file);
  if (!m) return invalid_json(j, m.error());
  j["valid"] = true;
  j.update(model_counts(*m));
  return j;
}

json model_validate(const std::string& path, byte_span file, bool deep) {
  json j = format_json(path, "urho3d-model");
  auto m = u3::open_model(file, {.deep_checks = deep});
  if (!m) return invalid_json(j, m.error());
  j["valid"] = true;
  j["deep"] = deep;
  return j;
}

std::optional<json> model_dump(const std::string& path, byte_span file, document_stream& out) {
  json head = format_json(path, "urho3d-model");
  auto m = u3::open_model(file);
  if (!m) return invalid_json(head, m.error());
  head["valid"] = true;
  head["id"] = u3::model_id(m->kind);
  if (m->kind == u3::model_kind::umd3) head["version"] = m->version;
  out.open(nullptr, '{');
  out.members(head);
  // Lists stream item by item: a small file may declare millions of them.
  out.open("vertexBuffers", '[');
  for (const u3::vertex_buffer& vb : m->vertex_buffers) {
    out.open(nullptr, '{');
    out.value("vertices", vb.vertex_count);
    out.value("vertexSize", vb.vertex_size);
    out.list("elements", vb.elements, element_json);
    out.value("morphRangeStart", vb.morph_range_start);
    out.value("morphRangeCount", vb.morph_range_count);
    if (m->kind == u3::model_kind::umdl) out.value("legacyMask", vb.legacy_mask);
    out.close('}');
  }
  out.close(']');
  out.list("indexBuffers", m->index_buffers, [](const u3::index_buffer& ib) {
    return json_object({{"indices", ib.index_count}, {"indexSize", ib.index_size}});
  });
  out.open("geometries", '[');
  for (const u3::geometry& g : m->geometries) {
    out.open(nullptr, '{');
    out.list("boneMapping", g.bone_mapping, [](std::uint32_t bone) { return json(bone); });
    out.list("lods", g.lods, [](const u3::lod_level& l) {
      return json_object({{"distance", l.distance}, {"primitive", u3::name(l.primitive)},
                          {"vertexBuffer", l.vertex_buffer}, {"indexBuffer", l.index_buffer},
                          {"indexStart", l.index_start}, {"indexCount", l.index_count}});
    });
    out.close('}');
  }
  out.close(']');
  out.open("morphs", '[');
  for (const u3::morph& mo : m->morphs) {
    out.open(nullptr, '{');
    out.value("name", mo.name);
    out.list("buffers", mo.buffers, [](const u3::morph_buffer& mb) {
      return json_object({{"vertexBuffer", mb.buffer}, {"mask", mb.mask}, {"vertices", mb.vertex_count}});
    });
    if (m->has_morph_weights()) out.value("weight", mo.weight);
    out.close('}');
  }
  out.close(']');
  out.open("bones", '[');
  for (std::size_t i = 0; i < m->bones.size(); ++i) {
    const u3::bone& b = m->bones[i];
    json x = json_object({{"name", b.name},
                          {"parent", b.is_root(static_cast<std::uint32_t>(i)) ? json(nullptr) : json(b.parent)},
                          {"position", floats(b.position)},
                          {"rotationWXYZ", floats(b.rotation)},
                          {"scale", floats(b.scale)},
                          {"offsetMatrix3x4", floats(b.offset_matrix)}});
    if ((b.collision_mask & u3::collision_sphere) != 0) x["radius"] = b.radius;
    if ((b.collision_mask & u3::collision_box) != 0) x["box"] = json_object({{"min", floats(b.box_min)}, {"max", floats(b.box_max)}});
    out.value(nullptr, x);
  }
  out.close(']');
  out.value("boundingBox", json_object({{"min", floats(m->bounds_min)}, {"max", floats(m->bounds_max)}}));
  out.list("geometryCenters", m->geometry_centers, [](const auto& c) { return floats(c); });
  out.close('}');
  return std::nullopt;
}

result<convert::scene> model_import(const import_request& request) {
  std::vector<std::vector<std::byte>> files;
  for (const fs::path& p : request.animations) {
    auto bytes = read_file(p);
    if (bytes) {
      files.push_back(std::move(*bytes));
    } else if (bytes.error().code == errc::io_empty_file) {
      files.emplace_back();  // the animation reader judges an empty file
    } else {
      error e = bytes.error();  // E-IO-OPEN / E-IO-READ with errno, naming the file
      return e.with_subject(p.filename().string());
    }
  }
  std::vector<byte_span> spans(files.begin(), files.end());
  auto s = u3::import_files(request.bytes, spans, request.input.stem().string(),
                            {.limits = request.limits, .budget = request.budget});
  if (!s) return s.error();
  return s;
}

// ---- animation -----------------------------------------------------------------------

json animation_info(const std::string& path, byte_span file) {
  json j = format_json(path, "urho3d-animation");
  auto a = u3::open_animation(file);
  if (!a) return invalid_json(j, a.error());
  j["valid"] = true;
  j["id"] = a->kind == u3::animation_kind::uan2 ? "UAN2" : "UANI";
  if (a->kind == u3::animation_kind::uan2) j["version"] = a->version;
  j["name"] = a->name;
  j["length"] = a->length;
  j["tracks"] = a->tracks.size();
  j["variantTracks"] = a->variant_tracks.size();
  j["keyframes"] = a->keyframe_total();
  return j;
}

json animation_validate(const std::string& path, byte_span file, bool deep) {
  json j = format_json(path, "urho3d-animation");
  auto a = u3::open_animation(file, {.deep_checks = deep});
  if (!a) return invalid_json(j, a.error());
  j["valid"] = true;
  j["deep"] = deep;
  return j;
}

std::optional<json> animation_dump(const std::string& path, byte_span file, document_stream& out) {
  json head = animation_info(path, file);
  if (!head["valid"].get<bool>()) return head;
  auto a = u3::open_animation(file);
  head.erase("tracks");  // info's counts; the dump lists them under the same names
  head.erase("variantTracks");
  out.open(nullptr, '{');
  out.members(head);
  out.open("tracks", '[');
  for (const u3::track& t : a->tracks) {
    out.open(nullptr, '{');
    out.value("name", t.name);
    out.value("mask", t.mask);
    out.open("keyframes", '[');
    for (std::uint32_t k = 0; k < t.keyframe_count; ++k) {
      const u3::keyframe key = t.key(k);
      json x = json_object({{"time", float_json(key.time)}});
      if ((t.mask & u3::channel_position) != 0) x["position"] = floats(key.position);
      if ((t.mask & u3::channel_rotation) != 0) x["rotationWXYZ"] = floats(key.rotation);
      if ((t.mask & u3::channel_scale) != 0) x["scale"] = floats(key.scale);
      out.value(nullptr, x);
    }
    out.close(']');
    if (a->has_weights()) out.value("weight", t.weight);
    out.close('}');
  }
  out.close(']');
  out.list("variantTracks", a->variant_tracks, [](const u3::variant_track& t) {
    return json_object({{"name", t.name}, {"type", t.type}, {"interpolation", t.interpolation},
                        {"tension", t.tension}, {"weight", t.weight}, {"keyframes", t.keyframe_count},
                        {"keyBytes", t.keys.size()}, {"tangentBytes", t.tangents.size()}});
  });
  out.close('}');
  return std::nullopt;
}

// ---- package -------------------------------------------------------------------------

json package_info(const std::string& path, byte_span file) {
  json j = format_json(path, "urho3d-package");
  auto p = u3::open_package(file);
  if (!p) return invalid_json(j, p.error());
  j["valid"] = true;
  j["id"] = p->kind == u3::package_kind::ulz4 ? "ULZ4" : "UPAK";
  j["entries"] = p->entries.size();
  j["uncompressedBytes"] = p->total_uncompressed();
  j["checksum"] = p->checksum;
  j["trailingSize"] = p->has_trailing_size;
  return j;
}

json package_validate(const std::string& path, byte_span file, bool deep) {
  json j = format_json(path, "urho3d-package");
  // Checksums are part of validity: every entry is decoded and checked (deep or not).
  auto p = u3::open_package(file, {.deep_checks = true});
  if (!p) return invalid_json(j, p.error());
  j["valid"] = true;
  j["deep"] = deep;
  return j;
}

std::optional<json> package_dump(const std::string& path, byte_span file, document_stream& out) {
  json head = package_info(path, file);
  if (!head["valid"].get<bool>()) return head;
  auto p = u3::open_package(file);
  out.open(nullptr, '{');
  out.members(head);
  out.list("entryList", p->entries, [](const u3::package_entry& e) {
    return json_object({{"name", e.name}, {"offset", e.offset}, {"size", e.size}, {"storedSize", e.stored_size},
                        {"checksum", e.checksum}, {"blocks", e.blocks}});
  });
  out.close('}');
  return std::nullopt;
}

// ---- shader and script ----------------------------------------------------------------

json shader_info(const std::string& path, byte_span file) {
  json j = format_json(path, "urho3d-shader");
  auto sh = u3::open_shader(file);
  if (!sh) return invalid_json(j, sh.error());
  j["valid"] = true;
  j["shaderType"] = sh->type == u3::shader_vertex ? "vertex" : "pixel";
  j["shaderModel"] = sh->model;
  j["parameters"] = sh->parameters.size();
  j["textureUnits"] = sh->texture_units.size();
  j["bytecodeBytes"] = sh->bytecode.size();
  return j;
}

json shader_validate(const std::string& path, byte_span file, bool deep) {
  json j = format_json(path, "urho3d-shader");
  auto sh = u3::open_shader(file);
  if (!sh) return invalid_json(j, sh.error());
  j["valid"] = true;
  j["deep"] = deep;
  return j;
}

std::optional<json> shader_dump(const std::string& path, byte_span file, document_stream& out) {
  json head = shader_info(path, file);
  if (!head["valid"].get<bool>()) return head;
  auto sh = u3::open_shader(file);
  if (sh->model == 4) head["elementHash"] = sh->element_hash;
  out.open(nullptr, '{');
  out.members(head);
  const bool sm4 = sh->model == 4;
  out.list("parameterList", sh->parameters, [sm4](const u3::shader_parameter& p) {
    return sm4 ? json_object({{"name", p.name}, {"buffer", p.index}, {"offset", p.offset}, {"size", p.size}})
               : json_object({{"name", p.name}, {"register", p.index}, {"registers", p.register_count}});
  });
  out.list("textureUnitList", sh->texture_units,
           [](const u3::texture_unit& u) { return json_object({{"name", u.name}, {"sampler", u.sampler}}); });
  out.close('}');
  return std::nullopt;
}

json script_info(const std::string& path, byte_span file) {
  json j = format_json(path, "urho3d-script");
  auto sc = u3::open_script(file);
  if (!sc) return invalid_json(j, sc.error());
  j["valid"] = true;
  j["bytecodeBytes"] = sc->bytecode.size();
  return j;
}
json script_validate(const std::string& path, byte_span file, bool deep) {
  json j = script_info(path, file);
  j["deep"] = deep;
  return j;
}

}  // namespace

void add_urho3d_formats(std::vector<format_handler>& out) {
  out.push_back({"urho3d-model", "Urho3D model (.mdl: UMDL, UMD2, rbfx UMD3)",
                 [](byte_span head) { return u3::is_model(head); }, model_info, model_validate, model_dump,
                 model_import});
  out.push_back({"urho3d-animation", "Urho3D animation (.ani: UANI, rbfx UAN2)",
                 [](byte_span head) { return u3::is_animation(head); }, animation_info, animation_validate,
                 animation_dump, nullptr});
  out.push_back({"urho3d-package", "Urho3D package (.pak: UPAK, ULZ4)",
                 [](byte_span head) { return u3::is_package(head); }, package_info, package_validate, package_dump,
                 nullptr});
  out.push_back({"urho3d-shader", "Urho3D shader cache (.vs3/.ps3/.vs4/.ps4: USHD)",
                 [](byte_span head) { return u3::is_shader(head); }, shader_info, shader_validate, shader_dump,
                 nullptr});
  out.push_back({"urho3d-script", "AngelScript bytecode (.asc: ASBC)", [](byte_span head) { return u3::is_script(head); },
                 script_info, script_validate,
                 [](const std::string& path, byte_span file, document_stream& out) {
                   return write_whole(script_info(path, file), out);
                 },
                 nullptr});
}

}  // namespace untold::tools
