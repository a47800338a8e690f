#include "inspect.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <untold/content_hash.hpp>
#include <untold/reader.hpp>
#include <untold/vertex.hpp>

#if __has_include(<untold/extensions.hpp>)
#include <untold/extensions.hpp>
#define UNTOLD_TOOLS_HAS_EXTENSIONS 1
#else
#define UNTOLD_TOOLS_HAS_EXTENSIONS 0
#endif

namespace untold::tools {

namespace {

// ---- JSON building blocks ------------------------------------------------------------

/// A float as the shortest decimal that reads back as the same float, so
/// 0.7f prints as 0.7 rather than 0.699999988079071. Non-finite -> null.
json num(float f) {
  if (!std::isfinite(f)) return nullptr;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

template <std::size_t N>
json floats(const std::array<float, N>& v) {
  json a = json::array();
  for (const float f : v) a.push_back(num(f));
  return a;
}

json bounds(const aabb& b) { return json{{"min", floats(b.min)}, {"max", floats(b.max)}}; }

/// A u32 reference: null for NONE.
json ref(std::uint32_t v) { return v == none ? json(nullptr) : json(v); }

std::string hex(const std::array<std::uint8_t, 32>& bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (const std::uint8_t b : bytes) {
    s.push_back(digits[b >> 4]);
    s.push_back(digits[b & 15]);
  }
  return s;
}

std::string texture_format_name(std::uint32_t f) {
  static constexpr std::array<const char*, 10> names = {"unknown", "rgba8",   "bc7",     "bc5",         "astc4x4",
                                                        "astc5x5", "astc6x6", "astc8x8", "rgba16Float", "r16Unorm"};
  return f < names.size() ? names[f] : "format" + std::to_string(f);
}

json texture_flag_names(std::uint32_t flags) {
  static constexpr std::pair<std::uint32_t, const char*> names[] = {
      {texture_flags::srgb, "srgb"},   {texture_flags::normal_map, "normalMap"}, {texture_flags::lut, "lut"},
      {texture_flags::height, "height"}, {texture_flags::emissive, "emissive"},   {texture_flags::occlusion, "occlusion"}};
  json a = json::array();
  for (const auto& [bit, name] : names)
    if (flags & bit) a.push_back(name);
  return a;
}

const char* channel_name(texture_channel c) {
  switch (c) {
    case texture_channel::r: return "r";
    case texture_channel::g: return "g";
    case texture_channel::b: return "b";
    case texture_channel::a: return "a";
  }
  return "?";
}

// ---- text building blocks ------------------------------------------------------------

#if defined(__GNUC__)
std::string format(const char* pattern, ...) __attribute__((format(printf, 1, 2)));
#endif
std::string format(const char* pattern, ...) {
  va_list args;
  va_start(args, pattern);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, pattern, copy);
  va_end(copy);
  std::string s(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, pattern, args);
  va_end(args);
  return s;
}

/// A JSON number or null as text ("-" for null).
std::string show(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_number_float()) return format("%g", v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string show_list(const json& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i != 0) s += ' ';
    s += show(a[i]);
  }
  return s + ")";
}

std::string show_bounds(const json& b) { return show_list(b["min"]) + " .. " + show_list(b["max"]); }

/// "t=(x y z)", plus the 3x3 linear part (rows) when it is not the identity.
std::string show_transform(const json& m) {
  std::string s = "t=" + show_list(json{m[12], m[13], m[14]});
  bool identity = true;
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r)
      if (m[c * 4 + r].is_null() || m[c * 4 + r].get<double>() != (r == c ? 1.0 : 0.0)) identity = false;
  if (!identity) {
    s += " m=[";
    for (int r = 0; r < 3; ++r)
      s += (r ? "; " : "") + show(m[r]) + " " + show(m[4 + r]) + " " + show(m[8 + r]);
    s += "]";
  }
  return s;
}

// ---- tables (one function each) ----------------------------------------------------------

json entity_json(const asset& a, std::uint32_t row, const entity_record& e) {
  return json{{"index", row},
              {"entityId", e.entity_id},
              {"parentEntityId", ref(e.parent_entity_id)},
              {"name", a.string(e.name_offset)},
              {"flags", e.flags},
              {"firstMeshRecordIndex", e.first_mesh_record_index},
              {"meshRecordCount", e.mesh_record_count},
              {"localTransform", floats(e.local_transform)},
              {"localBounds", bounds(e.local_bounds)},
              {"worldBounds", bounds(e.world_bounds)}};
}

json vertex_json(const pbr_vertex& v) {
  return json{{"position", floats(v.position)}, {"normal", floats(v.normal)}, {"tangent", floats(v.tangent)},
              {"uv0", floats(v.uv0)},           {"uv1", floats(v.uv1)},       {"color0", floats(v.color0)}};
}

json mesh_json(const asset& a, std::uint32_t row, const mesh_record& m, std::uint32_t vertices) {
  json j{{"index", row},
         {"name", a.string(m.mesh_name_offset)},
         {"entityId", m.entity_id},
         {"materialIndex", ref(m.material_index)},
         {"indexType", m.index_type == 1 ? "uint16" : "uint32"},
         {"vertexCount", m.vertex_count},
         {"indexCount", m.index_count},
         {"vertexStrideBytes", m.vertex_stride_bytes},
         {"flags", m.flags},
         {"vertexDataOffset", m.vertex_data_offset},
         {"vertexDataSizeBytes", m.vertex_data_size_bytes},
         {"indexDataOffset", m.index_data_offset},
         {"indexDataSizeBytes", m.index_data_size_bytes},
         {"edgeIndexCount", m.edge_index_count()},
         {"estimatedGPUBytes", m.estimated_gpu_bytes},
         {"localBounds", bounds(m.local_bounds)}};
  if (vertices > 0) {
    json list = json::array();
    if (auto view = pbr_vertex_view::from_bytes(a.vertices(m))) {
      for (std::size_t i = 0; i < view->size() && i < vertices; ++i) list.push_back(vertex_json((*view)[i]));
    }
    j["vertices"] = std::move(list);
  }
  return j;
}

json material_json(const asset& a, std::uint32_t row, const material_record& m) {
  return json{{"index", row},
              {"name", a.string(m.name_offset)},
              {"flags", m.flags},
              {"baseColorFactor", floats(m.base_color_factor)},
              {"emissiveFactor", floats(m.emissive_factor)},
              {"normalScale", num(m.normal_scale)},
              {"metallicFactor", num(m.metallic_factor)},
              {"roughnessFactor", num(m.roughness_factor)},
              {"occlusionStrength", num(m.occlusion_strength)},
              {"alphaCutoff", num(m.alpha_cutoff)},
              {"textures",
               {{"baseColor", ref(m.base_color_texture)},
                {"normal", ref(m.normal_texture)},
                {"metallic", ref(m.metallic_texture)},
                {"roughness", ref(m.roughness_texture)},
                {"emissive", ref(m.emissive_texture)},
                {"occlusion", ref(m.occlusion_texture)},
                {"height", ref(m.height_texture)}}},
              {"roughnessChannel", channel_name(m.roughness_channel())},
              {"metallicChannel", channel_name(m.metallic_channel())},
              {"heightScale", num(m.height_scale)},
              {"heightMidlevel", num(m.height_midlevel)},
              {"heightRemapMin", num(m.height_remap_min)},
              {"heightRemapMax", num(m.height_remap_max)}};
}

json texture_json(const asset& a, std::uint32_t row, const texture_record& t) {
  return json{{"index", row},
              {"name", a.string(t.name_offset)},
              {"uri", a.string(t.uri_offset)},
              {"textureFormat", texture_format_name(t.texture_format)},
              {"flags", t.flags},
              {"flagNames", texture_flag_names(t.flags)},
              {"width", t.width},
              {"height", t.height},
              {"mipCount", t.mip_count}};
}

/// Unknown core chunks and plugin chunks; plugin envelopes are decoded.
json raw_chunk_json(const asset& a, std::uint32_t row) {
  const chunk_entry& c = a.chunks()[row];
  json j{{"index", row},
         {"chunkType", c.chunk_type},
         {"kind", is_plugin_chunk_type(c.chunk_type) ? "plugin" : "unknown"},
         {"elementCount", c.element_count},
         {"size", c.uncompressed_size}};
#if UNTOLD_TOOLS_HAS_EXTENSIONS
  if (is_plugin_chunk_type(c.chunk_type)) {
    if (auto p = parse_plugin_chunk(a.payload(row)))
      j["plugin"] = json{{"id", p->plugin_id}, {"chunkKind", p->kind}, {"chunkVersion", p->chunk_version},
                         {"payloadSize", p->payload.size()}};
  }
#endif
  return j;
}

#if UNTOLD_TOOLS_HAS_EXTENSIONS
/// Writes every field of a record under its spec name (record_traits); a u32
/// "...Offset" field is a string reference, resolved under the name without
/// "Offset" (nameOffset -> name).
struct field_json_writer {
  const asset& a;
  json& out;

  template <class T>
  static json value(const T& f) {
    if constexpr (std::is_same_v<T, float>) return num(f);
    else if constexpr (std::is_same_v<T, aabb>) return bounds(f);
    else if constexpr (requires { std::tuple_size<T>::value; }) {
      json list = json::array();
      for (const auto& e : f) list.push_back(value(e));
      return list;
    } else return f;
  }
  template <class T>
  void operator()(const T& field, const char* name) {
    out[name] = value(field);
    const std::string_view n(name);
    if constexpr (std::is_same_v<T, std::uint32_t>)
      if (n.size() > 6 && n.ends_with("Offset")) out[std::string(n.substr(0, n.size() - 6))] = a.string(field);
  }
};

/// One extension table, every record with every field; null when absent.
template <class R>
json extension_table_json(const asset& a) {
  if (!a.find_chunk(record_traits<R>::table)) return nullptr;
  json list = json::array();
  for (const R& r : a.table<R>()) {
    json o = json::object();
    field_json_writer w{a, o};
    record_traits<R>::fields(w, r, a.format_version());
    list.push_back(std::move(o));
  }
  return list;
}

/// The extension tables present in the file, by table name.
json extensions_json(const asset& a) {
  static constexpr std::pair<const char*, json (*)(const asset&)> tables[] = {
      {"skeletons", extension_table_json<skeleton_record>},
      {"skeletonJoints", extension_table_json<skeleton_joint_record>},
      {"skins", extension_table_json<skin_record>},
      {"skinJointMappings", extension_table_json<skin_joint_mapping_record>},
      {"animationClips", extension_table_json<animation_clip_record>},
      {"animationChannels", extension_table_json<animation_channel_record>},
      {"translationKeyframes", extension_table_json<translation_keyframe_record>},
      {"rotationKeyframes", extension_table_json<rotation_keyframe_record>},
      {"lights", extension_table_json<light_record>},
      {"cameras", extension_table_json<camera_record>},
      {"colorManagement", extension_table_json<color_management_record>},
      {"colorGradeLUTs", extension_table_json<color_grade_lut_record>},
  };
  json out = json::object();
  for (const auto& [name, dump] : tables)
    if (json table = dump(a); !table.is_null()) out[name] = std::move(table);
  return out;
}
#else
json extensions_json(const asset&) { return json::object(); }
#endif

template <class R, class F>
json table_json(const asset& a, F&& one) {
  json list = json::array();
  std::uint32_t row = 0;
  for (const R& r : a.table<R>()) list.push_back(one(a, row++, r));
  return list;
}

}  // namespace

// ---- error, info, validate ---------------------------------------------------------

json error_json(const error& e) {
  json context = json::object();
  if (e.context.chunk_index != no_index) context["chunk"] = e.context.chunk_index;
  if (e.context.chunk_type != 0) context["chunkType"] = e.context.chunk_type;
  if (e.context.record_index != no_index) context["record"] = e.context.record_index;
  if (e.context.field != nullptr) context["field"] = e.context.field;
  if (e.context.has_value) context["value"] = e.context.value;
  return json{{"rule", e.rule_id()},
              {"name", e.name()},
              {"message", e.message()},
              {"context", std::move(context)},
              {"describe", e.describe()}};
}

json info_json(const std::string& name, byte_span file) {
  json j{{"file", name}, {"fileSize", file.size()}, {"valid", false}, {"error", nullptr}};
  auto header = parse_header(file);
  if (!header) {
    j["error"] = error_json(header.error());
    return j;
  }
  const file_header& h = *header;
  j["formatVersion"] = h.format_version;
  j["fileType"] = file_type_name(h.file_type);
  j["flags"] = h.flags;
  j["headerSize"] = h.header_size;
  j["vertexLayout"] = h.vertex_layout == 1 ? "pbrStaticV1" : "unknown";
  j["counts"] = json{{"chunks", h.chunk_count},
                     {"entities", h.entity_count},
                     {"meshes", h.mesh_count},
                     {"materials", h.material_count},
                     {"textures", h.texture_ref_count}};
  j["worldBounds"] = bounds(h.world_bounds);
  j["rootTransform"] = floats(h.root_transform);
  j["contentHash"] = is_hashed(h) ? json(hex(h.content_hash)) : json(nullptr);
  auto chunks = parse_chunk_table(h, file, file.size());
  if (!chunks) {
    j["error"] = error_json(chunks.error());
    return j;
  }
  json list = json::array();
  std::uint64_t stored = 0, raw = 0;
  for (std::uint32_t row = 0; row < chunks->size(); ++row) {
    const chunk_entry& c = (*chunks)[row];
    stored += c.compressed_size;
    raw += c.uncompressed_size;
    list.push_back(json{{"index", row},
                        {"chunkType", c.chunk_type},
                        {"typeName", chunk_type_name(c.chunk_type)},
                        {"compression", compression_name(c.compression_type)},
                        {"fileOffset", c.file_offset},
                        {"storedSize", c.compressed_size},
                        {"rawSize", c.uncompressed_size},
                        {"ratio", c.uncompressed_size == 0 ? 1.0 : std::round(1000.0 * static_cast<double>(c.compressed_size) / static_cast<double>(c.uncompressed_size)) / 1000.0},
                        {"elementCount", c.element_count}});
  }
  j["chunks"] = std::move(list);
  j["storedBytes"] = stored;
  j["rawBytes"] = raw;

  auto a = open(file);
  if (!a) {
    j["error"] = error_json(a.error());
    return j;
  }
  j["valid"] = true;
  std::uint64_t vertices = 0, indices = 0;
  for (const mesh_record& m : a->meshes()) {
    vertices += m.vertex_count;
    indices += m.index_count;
  }
  j["geometry"] = json{{"vertices", vertices}, {"indices", indices}, {"triangles", indices / 3}};
  return j;
}

std::string info_text(const json& j) {
  std::string s = format("%s\n", j["file"].get<std::string>().c_str());
  s += format("  size           %s bytes\n", show(j["fileSize"]).c_str());
  if (j.contains("formatVersion")) {
    s += format("  format         version %s, %s, vertex layout %s, flags 0x%x\n", show(j["formatVersion"]).c_str(),
                show(j["fileType"]).c_str(), show(j["vertexLayout"]).c_str(), j["flags"].get<unsigned>());
    const json& c = j["counts"];
    s += format("  records        %s entities, %s meshes, %s materials, %s textures\n", show(c["entities"]).c_str(),
                show(c["meshes"]).c_str(), show(c["materials"]).c_str(), show(c["textures"]).c_str());
    if (j.contains("geometry"))
      s += format("  geometry       %s vertices, %s triangles\n", show(j["geometry"]["vertices"]).c_str(),
                  show(j["geometry"]["triangles"]).c_str());
    s += format("  world bounds   %s\n", show_bounds(j["worldBounds"]).c_str());
    s += format("  content hash   %s\n", j["contentHash"].is_null() ? "none" : show(j["contentHash"]).c_str());
  }
  if (j.contains("chunks")) {
    s += format("  chunks         %zu (%s bytes stored, %s raw)\n", j["chunks"].size(), show(j["storedBytes"]).c_str(),
                show(j["rawBytes"]).c_str());
    s += format("    %3s  %-24s %-5s %10s %10s %10s %6s %8s\n", "#", "type", "comp", "offset", "stored", "raw",
                "ratio", "records");
    for (const json& c : j["chunks"]) {
      const std::string type = show(c["typeName"]) + " (" + show(c["chunkType"]) + ")";
      s += format("    %3s  %-24s %-5s %10s %10s %10s %6.3f %8s\n", show(c["index"]).c_str(), type.c_str(),
                  show(c["compression"]).c_str(), show(c["fileOffset"]).c_str(), show(c["storedSize"]).c_str(),
                  show(c["rawSize"]).c_str(), c["ratio"].get<double>(), show(c["elementCount"]).c_str());
    }
  }
  s += j["valid"].get<bool>() ? "  valid          yes\n"
                              : format("  valid          no: %s\n", show(j["error"]["describe"]).c_str());
  return s;
}

json validate_json(const std::string& name, byte_span file, bool deep) {
  open_options options;
  options.deep_checks = deep;
  auto a = open(file, options);
  return json{{"file", name}, {"valid", a.has_value()}, {"error", a ? json(nullptr) : error_json(a.error())}};
}

std::string validate_text(const json& r) {
  if (r["valid"].get<bool>()) return format("ok    %s\n", r["file"].get<std::string>().c_str());
  return format("FAIL  %s: %s\n", r["file"].get<std::string>().c_str(), show(r["error"]["describe"]).c_str());
}

// ---- dump -----------------------------------------------------------------------------

json dump_json(const std::string& name, const asset& a, std::uint32_t vertices) {
  json j{{"file", name}, {"formatVersion", a.format_version()}, {"fileType", file_type_name(a.header().file_type)}};
  j["entities"] = table_json<entity_record>(a, entity_json);
  j["meshes"] = table_json<mesh_record>(
      a, [vertices](const asset& x, std::uint32_t row, const mesh_record& m) { return mesh_json(x, row, m, vertices); });
  j["materials"] = table_json<material_record>(a, material_json);
  j["textures"] = table_json<texture_record>(a, texture_json);
  j["extensions"] = extensions_json(a);
  json raw = json::array();
  for (const std::uint32_t row : a.raw_chunks()) raw.push_back(raw_chunk_json(a, row));
  j["rawChunks"] = std::move(raw);
  return j;
}

namespace {

std::string mesh_line(const json& m) {
  return format("mesh %s '%s': %s vertices, %s indices (%s), material %s, bounds %s", show(m["index"]).c_str(),
                show(m["name"]).c_str(), show(m["vertexCount"]).c_str(), show(m["indexCount"]).c_str(),
                show(m["indexType"]).c_str(), show(m["materialIndex"]).c_str(), show_bounds(m["localBounds"]).c_str());
}

std::string vertex_lines(const json& m, const std::string& indent) {
  std::string s;
  if (!m.contains("vertices")) return s;
  std::size_t i = 0;
  for (const json& v : m["vertices"])
    s += format("%sv%zu p=%s n=%s t=%s uv0=%s uv1=%s c=%s\n", indent.c_str(), i++, show_list(v["position"]).c_str(),
                show_list(v["normal"]).c_str(), show_list(v["tangent"]).c_str(), show_list(v["uv0"]).c_str(),
                show_list(v["uv1"]).c_str(), show_list(v["color0"]).c_str());
  return s;
}

}  // namespace

std::string dump_text(const json& j) {
  std::string s = format("%s: %s, format version %s\n", show(j["file"]).c_str(), show(j["fileType"]).c_str(),
                         show(j["formatVersion"]).c_str());
  const json& entities = j["entities"];
  const json& meshes = j["meshes"];
  // Children by parent entityId, in table order; roots have a null parent.
  std::map<std::int64_t, std::vector<std::size_t>> children;
  for (std::size_t i = 0; i < entities.size(); ++i) {
    const json& p = entities[i]["parentEntityId"];
    children[p.is_null() ? -1 : p.get<std::int64_t>()].push_back(i);
  }
  s += format("entities (%zu)\n", entities.size());
  std::vector<std::pair<std::size_t, int>> stack;  // (row, depth)
  for (auto it = children[-1].rbegin(); it != children[-1].rend(); ++it) stack.emplace_back(*it, 1);
  while (!stack.empty()) {
    const auto [row, depth] = stack.back();
    stack.pop_back();
    const json& e = entities[row];
    const std::string indent(static_cast<std::size_t>(2 * depth), ' ');
    s += format("%s[%s] '%s' %s\n", indent.c_str(), show(e["entityId"]).c_str(), show(e["name"]).c_str(),
                show_transform(e["localTransform"]).c_str());
    const auto first = e["firstMeshRecordIndex"].get<std::size_t>();
    for (std::size_t k = 0; k < e["meshRecordCount"].get<std::size_t>(); ++k)
      if (first + k < meshes.size()) s += indent + "  " + mesh_line(meshes[first + k]) + "\n";
    const auto id = e["entityId"].get<std::int64_t>();
    const auto& kids = children[id];
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.emplace_back(*it, depth + 1);
  }
  s += format("meshes (%zu)\n", meshes.size());
  for (const json& m : meshes) s += "  " + mesh_line(m) + format(", entity %s\n", show(m["entityId"]).c_str()) + vertex_lines(m, "    ");
  s += format("materials (%zu)\n", j["materials"].size());
  for (const json& m : j["materials"]) {
    s += format("  [%s] '%s' baseColor=%s emissive=%s metallic=%s roughness=%s normalScale=%s occlusion=%s alphaCutoff=%s\n",
                show(m["index"]).c_str(), show(m["name"]).c_str(), show_list(m["baseColorFactor"]).c_str(),
                show_list(m["emissiveFactor"]).c_str(), show(m["metallicFactor"]).c_str(),
                show(m["roughnessFactor"]).c_str(), show(m["normalScale"]).c_str(),
                show(m["occlusionStrength"]).c_str(), show(m["alphaCutoff"]).c_str());
    std::string textures;
    for (const auto& [role, index] : m["textures"].items())
      if (!index.is_null()) textures += " " + role + "=" + show(index);
    if (!textures.empty())
      s += format("      textures%s (roughness channel %s, metallic channel %s)\n", textures.c_str(),
                  show(m["roughnessChannel"]).c_str(), show(m["metallicChannel"]).c_str());
  }
  s += format("textures (%zu)\n", j["textures"].size());
  for (const json& t : j["textures"]) {
    std::string flags;
    for (const json& f : t["flagNames"]) {
      if (!flags.empty()) flags += ',';
      flags += show(f);
    }
    s += format("  [%s] '%s' uri=%s %s %sx%s mips=%s flags=%s\n", show(t["index"]).c_str(), show(t["name"]).c_str(),
                show(t["uri"]).c_str(), show(t["textureFormat"]).c_str(), show(t["width"]).c_str(),
                show(t["height"]).c_str(), show(t["mipCount"]).c_str(), flags.empty() ? "-" : flags.c_str());
  }
  for (const auto& [table, records] : j["extensions"].items()) {
    s += format("%s (%zu)\n", table.c_str(), records.size());
    std::size_t i = 0;
    for (const json& r : records) {
      std::string fields;
      for (const auto& [key, value] : r.items())
        fields += " " + key + "=" + (value.is_array() ? show_list(value) : show(value));
      s += format("  [%zu]%s\n", i++, fields.c_str());
    }
  }
  if (!j["rawChunks"].empty()) {
    s += format("raw chunks (%zu)\n", j["rawChunks"].size());
    for (const json& c : j["rawChunks"]) {
      s += format("  chunk %s: type %s (%s), %s bytes", show(c["index"]).c_str(), show(c["chunkType"]).c_str(),
                  show(c["kind"]).c_str(), show(c["size"]).c_str());
      if (c.contains("plugin"))
        s += format(", plugin '%s' kind %s version %s", show(c["plugin"]["id"]).c_str(),
                    show(c["plugin"]["chunkKind"]).c_str(), show(c["plugin"]["chunkVersion"]).c_str());
      s += "\n";
    }
  }
  return s;
}

std::string to_text(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

}  // namespace untold::tools
