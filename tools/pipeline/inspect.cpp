#include "inspect.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <untold/content_hash.hpp>
#include <untold/reader.hpp>
#include <untold/vertex_quant.hpp>

#if __has_include(<untold/extensions.hpp>)
#include <untold/extensions.hpp>
#define UNTOLD_TOOLS_HAS_EXTENSIONS 1
#else
#define UNTOLD_TOOLS_HAS_EXTENSIONS 0
#endif

namespace untold::tools {

namespace {

// ---- JSON building blocks ------------------------------------------------------------


template <std::size_t N>
json floats(const std::array<float, N>& v) {
  json a = json::array();
  for (const float f : v) a.push_back(float_json(f));
  return a;
}

json bounds(const aabb& b) { return json_object({{"min", floats(b.min)}, {"max", floats(b.max)}}); }

/// A u32 reference: null for NONE.
json ref(std::uint32_t v) { return v == none ? json(nullptr) : json(v); }

/// A string reference: null for NONE.
json str(const asset& a, std::uint32_t offset) { return offset == none ? json(nullptr) : json(a.string(offset)); }

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

/// A JSON value as text ("-" for null; a string escaped: names come from the file).
std::string show(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_number_float()) return format("%g", v.get<double>());
  if (v.is_string()) return escaped(v.get<std::string>());
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

/// A float as text dumps show it ("%g"; "-" when not finite).
std::string show_float(float f) { return std::isfinite(f) ? format("%g", static_cast<double>(f)) : "-"; }

/// "t=(x y z)", plus the 3x3 linear part (rows) when it is not the identity.
std::string show_transform(const mat4& m) {
  std::string s = "t=(" + show_float(m[12]) + " " + show_float(m[13]) + " " + show_float(m[14]) + ")";
  bool identity = true;
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r)
      if (m[c * 4 + r] != (r == c ? 1.0f : 0.0f)) identity = false;
  if (!identity) {
    s += " m=[";
    for (int r = 0; r < 3; ++r)
      s += (r ? "; " : "") + show_float(m[r]) + " " + show_float(m[4 + r]) + " " + show_float(m[8 + r]);
    s += "]";
  }
  return s;
}

// ---- tables (one function each) ----------------------------------------------------------

json entity_json(const asset& a, std::uint32_t row, const entity_record& e) {
  return json_object({{"index", row},
                      {"entityId", e.entity_id},
                      {"parentEntityId", ref(e.parent_entity_id)},
                      {"name", str(a, e.name_offset)},
                      {"flags", e.flags},
                      {"firstMeshRecordIndex", e.first_mesh_record_index},
                      {"meshRecordCount", e.mesh_record_count},
                      {"localTransform", floats(e.local_transform)},
                      {"localBounds", bounds(e.local_bounds)},
                      {"worldBounds", bounds(e.world_bounds)}});
}

/// entity_json as the text json::dump(2) would print at `indent` spaces
/// (floats in their shortest form); the streamed dump's hot path for huge
/// entity tables, with no json value per record.
std::string entity_json_text(const asset& a, std::uint32_t row, const entity_record& e, std::size_t indent) {
  std::string s = "{";
  const auto key = [&](const char* k, std::size_t depth) {
    s.append(s.size() == 1 ? "\n" : ",\n").append(indent + 2 * depth, ' ').append("\"").append(k).append("\": ");
  };
  const auto number = [&](float f) {
    if (!std::isfinite(f)) {
      s += "null";
      return;
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, f);
    const std::string_view text(buf, static_cast<std::size_t>(r.ptr - buf));
    s += text;
    if (text.find_first_of(".e") == std::string_view::npos) s += ".0";  // as nlohmann prints a float
  };
  const auto floats_at = [&](const float* v, std::size_t n, std::size_t depth) {
    s += "[";
    for (std::size_t i = 0; i < n; ++i) {
      s.append(i == 0 ? "\n" : ",\n").append(indent + 2 * (depth + 1), ' ');
      number(v[i]);
    }
    s.append("\n").append(indent + 2 * depth, ' ').append("]");
  };
  const auto box = [&](const aabb& b) {
    s += "{\n";
    s.append(indent + 4, ' ').append("\"min\": ");
    floats_at(b.min.data(), 3, 2);
    s.append(",\n").append(indent + 4, ' ').append("\"max\": ");
    floats_at(b.max.data(), 3, 2);
    s.append("\n").append(indent + 2, ' ').append("}");
  };
  key("index", 1);
  s += std::to_string(row);
  key("entityId", 1);
  s += std::to_string(e.entity_id);
  key("parentEntityId", 1);
  s += e.parent_entity_id == none ? "null" : std::to_string(e.parent_entity_id);
  key("name", 1);
  s += str(a, e.name_offset).dump(-1, ' ', false, json::error_handler_t::replace);
  key("flags", 1);
  s += std::to_string(e.flags);
  key("firstMeshRecordIndex", 1);
  s += std::to_string(e.first_mesh_record_index);
  key("meshRecordCount", 1);
  s += std::to_string(e.mesh_record_count);
  key("localTransform", 1);
  floats_at(e.local_transform.data(), 16, 1);
  key("localBounds", 1);
  box(e.local_bounds);
  key("worldBounds", 1);
  box(e.world_bounds);
  s.append("\n").append(indent, ' ').append("}");
  return s;
}

json vertex_json(const pbr_vertex& v) {
  return json_object({{"position", floats(v.position)}, {"normal", floats(v.normal)}, {"tangent", floats(v.tangent)},
                      {"uv0", floats(v.uv0)},           {"uv1", floats(v.uv1)},       {"color0", floats(v.color0)}});
}

json mesh_json(const asset& a, std::uint32_t row, const mesh_record& m, std::uint32_t vertices) {
  json j = json_object({{"index", row},
                        {"name", str(a, m.mesh_name_offset)},
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
                        {"localBounds", bounds(m.local_bounds)}});
  if (vertices > 0) {
    json list = json::array();
    const byte_span bytes = a.vertices(m);
    const std::uint32_t layout = a.header().vertex_layout, stride = vertex_stride_of(layout);
    for (std::size_t i = 0; stride != 0 && i < bytes.size() / stride && i < vertices; ++i)
      list.push_back(vertex_json(decode_stored_vertex(bytes, i, layout, m.local_bounds)));
    j["vertices"] = std::move(list);
  }
  return j;
}

json material_json(const asset& a, std::uint32_t row, const material_record& m) {
  return json_object({{"index", row},
                      {"name", str(a, m.name_offset)},
                      {"flags", m.flags},
                      {"baseColorFactor", floats(m.base_color_factor)},
                      {"emissiveFactor", floats(m.emissive_factor)},
                      {"normalScale", float_json(m.normal_scale)},
                      {"metallicFactor", float_json(m.metallic_factor)},
                      {"roughnessFactor", float_json(m.roughness_factor)},
                      {"occlusionStrength", float_json(m.occlusion_strength)},
                      {"alphaCutoff", float_json(m.alpha_cutoff)},
                      {"alphaMode", m.alpha_mode() == untold::alpha_mode::opaque ? json("opaque")
                                    : m.alpha_mode() == untold::alpha_mode::mask ? json("mask")
                                    : m.alpha_mode() == untold::alpha_mode::blend ? json("blend")
                                                                          : json(nullptr)},
                      {"transmissionFactor", float_json(m.transmission_factor)},
                      {"textures", json_object({{"baseColor", ref(m.base_color_texture)},
                                                {"normal", ref(m.normal_texture)},
                                                {"metallic", ref(m.metallic_texture)},
                                                {"roughness", ref(m.roughness_texture)},
                                                {"emissive", ref(m.emissive_texture)},
                                                {"occlusion", ref(m.occlusion_texture)},
                                                {"height", ref(m.height_texture)}})},
                      {"roughnessChannel", channel_name(m.roughness_channel())},
                      {"metallicChannel", channel_name(m.metallic_channel())},
                      {"heightScale", float_json(m.height_scale)},
                      {"heightMidlevel", float_json(m.height_midlevel)},
                      {"heightRemapMin", float_json(m.height_remap_min)},
                      {"heightRemapMax", float_json(m.height_remap_max)}});
}

json texture_json(const asset& a, std::uint32_t row, const texture_record& t) {
  return json_object({{"index", row},
                      {"name", str(a, t.name_offset)},
                      {"uri", str(a, t.uri_offset)},
                      {"textureFormat", texture_format_name(t.texture_format)},
                      {"flags", t.flags},
                      {"flagNames", texture_flag_names(t.flags)},
                      {"width", t.width},
                      {"height", t.height},
                      {"mipCount", t.mip_count}});
}

/// Unknown core chunks and plugin chunks; plugin envelopes are decoded.
json raw_chunk_json(const asset& a, std::uint32_t row) {
  const chunk_entry& c = a.chunks()[row];
  json j = json_object({{"index", row},
                        {"chunkType", c.chunk_type},
                        {"typeName", chunk_type_name(c.chunk_type)},
                        {"kind", is_plugin_chunk_type(c.chunk_type) ? "plugin" : "unknown"},
                        {"elementCount", c.element_count},
                        {"size", c.uncompressed_size}});
#if UNTOLD_TOOLS_HAS_EXTENSIONS
  if (is_plugin_chunk_type(c.chunk_type)) {
    if (auto p = parse_plugin_chunk(a.payload(row)))
      j["plugin"] = json_object({{"id", p->plugin_id}, {"chunkKind", p->kind}, {"chunkVersion", p->chunk_version},
                                 {"payloadSize", p->payload.size()}});
  }
#endif
  return j;
}

#if UNTOLD_TOOLS_HAS_EXTENSIONS
/// Writes every field of a record under its spec name (record_traits); a u32
/// "...Offset" field is a string reference, resolved under the name without
/// "Offset" (nameOffset -> name). A NONE reference ("...Offset", "...Index",
/// "...Id" fields) is null, and so is its resolved string.
struct field_json_writer {
  const asset& a;
  json& out;

  template <class T>
  static json value(const T& f) {
    if constexpr (std::is_same_v<T, float>) return float_json(f);
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
    if constexpr (std::is_same_v<T, std::uint32_t>) {
      if (field == none && (n.ends_with("Offset") || n.ends_with("Index") || n.ends_with("Id"))) out[name] = nullptr;
      if (n.size() > 6 && n.ends_with("Offset")) out[std::string(n.substr(0, n.size() - 6))] = str(a, field);
    }
  }
};

#endif

/// asset::block_digests() in info --json.
const char* digest_status_name(digest_status s) {
  switch (s) {
    case digest_status::absent: return "none";
    case digest_status::current: return "current";
    case digest_status::stale: return "stale";
    case digest_status::unchecked: return "unchecked";
  }
  return "?";
}

/// ", version N" after the block digests' status, and for versions before 3
/// what it costs and how to upgrade.
std::string digest_version_text(const json& version) {
  if (!version.is_number_unsigned()) return "";
  const auto v = version.get<std::uint32_t>();
  std::string s = ", version " + std::to_string(v);
  if (v < integrity_chunk_version)
    s += " (no tree under the contentHash: a full check hashes the file again; untold recompress writes version " +
         std::to_string(integrity_chunk_version) + ")";
  return s;
}

/// The info line for info --json's "blockDigests".
std::string digest_status_text(const json& status) {
  const std::string s = show(status);
  if (s == "current") return "current (verified)";
  if (s == "stale")
    return "stale: computed for another contentHash (a tool that does not know them rewrote the file); ignored, "
           "the whole-file contentHash was verified instead";
  return s;
}

}  // namespace

// ---- error, info, validate ---------------------------------------------------------

std::string first_bytes(byte_span bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < bytes.size() && i < 8; ++i) {
    const auto b = static_cast<unsigned>(bytes[i]);
    if (i != 0) s += ' ';
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

std::string escaped(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  untold::detail::append_escaped(s, text);
  return s;
}

json error_json(const error& e) {
  json context = json::object();
  if (e.context.chunk_index != no_index) context["chunk"] = e.context.chunk_index;
  if (e.context.chunk_type != 0) context["chunkType"] = e.context.chunk_type;
  if (e.context.record_index != no_index) context["record"] = e.context.record_index;
  if (e.context.field != nullptr) context["field"] = e.context.field;
  if (e.context.has_value) context["value"] = e.context.value;
  return json_object({{"rule", e.rule_id()},
                      {"name", e.name()},
                      {"message", e.message()},
                      {"context", std::move(context)},
                      {"describe", e.describe()}});
}

namespace {

/// A row of the chunk table; `with_ratio` adds stored / raw size (info shows it, dump not).
json chunk_json(const chunk_entry& c, std::uint32_t row, bool with_ratio = false) {
  json j = json_object({{"index", row},
                        {"chunkType", c.chunk_type},
                        {"typeName", chunk_type_name(c.chunk_type)},
                        {"compression", compression_name(c.compression_type)},
                        {"fileOffset", c.file_offset},
                        {"storedSize", c.compressed_size},
                        {"rawSize", c.uncompressed_size}});
  if (with_ratio)
    j["ratio"] = c.uncompressed_size == 0 ? 1.0
                                          : std::round(1000.0 * static_cast<double>(c.compressed_size) /
                                                       static_cast<double>(c.uncompressed_size)) / 1000.0;
  j["elementCount"] = c.element_count;
  return j;
}

}  // namespace

json info_json(const std::string& name, byte_span file) {
  json j = json_object({{"file", name}, {"format", "untold"}, {"fileSize", file.size()}, {"valid", false}, {"error", nullptr}});
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
  j["vertexLayout"] = vertex_layout_name(h.vertex_layout);
  j["counts"] = json_object({{"chunks", h.chunk_count},
                             {"entities", h.entity_count},
                             {"meshes", h.mesh_count},
                             {"materials", h.material_count},
                             {"textures", h.texture_ref_count}});
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
    list.push_back(chunk_json(c, row, true));
  }
  j["chunks"] = std::move(list);
  j["storedBytes"] = stored;
  j["rawBytes"] = raw;

  auto a = open(file, {.integrity = integrity::strict});  // "valid" covers every byte, spec 5's contentHash too
  if (!a) {
    j["error"] = error_json(a.error());
    return j;
  }
  j["valid"] = true;
  j["blockDigests"] = digest_status_name(a->block_digests());
  if (a->block_digests() == digest_status::current || a->block_digests() == digest_status::stale) {
    // The chunk's version says whether integrity::full needs the serial
    // contentHash pass (versions 1, 2) or not (3: a tree under it).
    const auto row = find_integrity_chunk(a->chunks());
    if (row && *row != none)
      if (const auto digests = parse_integrity_chunk(a->payload(*row), a->chunks(), *row))
        j["blockDigestsVersion"] = digests->version;
  }
  std::uint64_t vertices = 0, indices = 0;
  for (const mesh_record& m : a->meshes()) {
    vertices += m.vertex_count;
    indices += m.index_count;
  }
  j["geometry"] = json_object({{"vertices", vertices}, {"indices", indices}, {"triangles", indices / 3}});
  return j;
}

std::string info_text(const json& j) {
  std::string s = format("%s\n", show(j["file"]).c_str());
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
    if (j.contains("blockDigests"))
      s += format("  block digests  %s%s\n", digest_status_text(j["blockDigests"]).c_str(),
                  digest_version_text(j.value("blockDigestsVersion", json())).c_str());
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
                              : format("  valid          no: %s\n", j["error"]["describe"].get<std::string>().c_str());
  return s;
}

json validate_json(const std::string& name, byte_span file, bool deep) {
  open_options options;
  options.deep_checks = deep;
  // A validator checks every byte, not only what an open reads, and the
  // contentHash as spec 5 defines it, where the block digests prove it too.
  options.integrity = integrity::strict;
  auto a = open(file, options);
  return json_object({{"file", name},
                      {"format", "untold"},
                      {"valid", a.has_value()},
                      {"error", a ? json(nullptr) : error_json(a.error())}});
}

/// describe() strings are already text output (error::describe escapes the
/// names it quotes; the tool's own messages quote paths through escaped()).
std::string validate_text(const json& r) {
  if (r["valid"].get<bool>()) return format("ok    %s\n", show(r["file"]).c_str());
  return format("FAIL  %s: %s\n", show(r["file"]).c_str(), r["error"]["describe"].get<std::string>().c_str());
}

// ---- dump -----------------------------------------------------------------------------
//
// Streamed record by record: memory stays bounded by the largest record, and
// text and JSON are linear in the file (an entity chain 10^6 deep included).

namespace {

/// The header part of a dump: everything before the record tables.
json dump_head(const std::string& name, const asset& a) {
  const file_header& h = a.header();
  json chunks = json::array();
  for (std::uint32_t row = 0; row < a.chunks().size(); ++row) chunks.push_back(chunk_json(a.chunks()[row], row));
  return json_object({{"file", name},
                      {"format", "untold"},
                      {"valid", true},
                      {"formatVersion", a.format_version()},
                      {"fileType", file_type_name(h.file_type)},
                      {"vertexLayout", vertex_layout_name(h.vertex_layout)},
                      {"flags", h.flags},
                      {"chunks", std::move(chunks)}});
}

/// One record table of a dump: its key, size and a record -> json function.
struct dump_table {
  const char* key;
  std::size_t count;
  std::function<json(std::size_t)> record;
};

std::vector<dump_table> core_tables(const asset& a, std::uint32_t vertices) {
  const auto row = [](std::size_t i) { return static_cast<std::uint32_t>(i); };
  return {
      {"entities", a.entities().size(), [&a, row](std::size_t i) { return entity_json(a, row(i), a.entities()[i]); }},
      {"meshes", a.meshes().size(),
       [&a, row, vertices](std::size_t i) { return mesh_json(a, row(i), a.meshes()[i], vertices); }},
      {"materials", a.materials().size(),
       [&a, row](std::size_t i) { return material_json(a, row(i), a.materials()[i]); }},
      {"textures", a.textures().size(), [&a, row](std::size_t i) { return texture_json(a, row(i), a.textures()[i]); }},
  };
}

#if UNTOLD_TOOLS_HAS_EXTENSIONS
const char* light_type_name(std::uint32_t t) {
  switch (t) {
    case 1: return "directional";
    case 2: return "point";
    case 3: return "spot";
    case 4: return "area";
  }
  return nullptr;
}

template <class R>
dump_table extension_table(const asset& a, const char* key) {
  return {key, a.table<R>().size(), [&a](std::size_t i) {
            json o = json::object();
            field_json_writer w{a, o};
            const R record = a.table<R>()[i];
            record_traits<R>::fields(w, record, a.format_version());
            if constexpr (std::is_same_v<R, light_record>) {
              const char* n = light_type_name(record.light_type);
              o["lightTypeName"] = n != nullptr ? json(n) : json(nullptr);
            }
            return o;
          }};
}

/// The extension tables present in the file.
std::vector<dump_table> extension_tables(const asset& a) {
  std::vector<dump_table> all;
  const auto add = [&](dump_table t, chunk_type type) {
    if (a.find_chunk(type)) all.push_back(std::move(t));
  };
  add(extension_table<skeleton_record>(a, "skeletons"), chunk_type::skeleton_table);
  add(extension_table<skeleton_joint_record>(a, "skeletonJoints"), chunk_type::skeleton_joint_table);
  add(extension_table<skin_record>(a, "skins"), chunk_type::skin_table);
  add(extension_table<skin_joint_mapping_record>(a, "skinJointMappings"), chunk_type::skin_joint_mapping_table);
  add(extension_table<animation_clip_record>(a, "animationClips"), chunk_type::animation_clip_table);
  add(extension_table<animation_channel_record>(a, "animationChannels"), chunk_type::animation_channel_table);
  add(extension_table<translation_keyframe_record>(a, "translationKeyframes"), chunk_type::translation_keyframe_table);
  add(extension_table<rotation_keyframe_record>(a, "rotationKeyframes"), chunk_type::rotation_keyframe_table);
  add(extension_table<light_record>(a, "lights"), chunk_type::light_table);
  add(extension_table<camera_record>(a, "cameras"), chunk_type::camera_table);
  add(extension_table<color_management_record>(a, "colorManagement"), chunk_type::color_management_table);
  add(extension_table<color_grade_lut_record>(a, "colorGradeLUTs"), chunk_type::color_grade_lut_table);
  add(extension_table<morph_target_record>(a, "morphTargets"), chunk_type::morph_target_table);
  add(extension_table<morph_target_entry>(a, "morphTargetEntries"), chunk_type::morph_target_data);
  add(extension_table<morph_driver_record>(a, "morphDrivers"), chunk_type::morph_driver_table);
  add(extension_table<muscle_record>(a, "muscles"), chunk_type::muscle_table);
  return all;
}
#else
std::vector<dump_table> extension_tables(const asset&) { return {}; }
#endif

json raw_chunks_json(const asset& a) {
  json raw = json::array();
  for (const std::uint32_t row : a.raw_chunks()) raw.push_back(raw_chunk_json(a, row));
  return raw;
}

}  // namespace

json dump_json(const std::string& name, const asset& a, std::uint32_t vertices) {
  std::string text;
  write_dump_json(name, a, vertices, [&text](std::string_view s) { text.append(s); });
  return json::parse(text);
}

void write_dump_json(const std::string& name, const asset& a, std::uint32_t vertices, const text_sink& out) {
  document_stream js(out);
  js.open(nullptr, '{');
  const json head = dump_head(name, a);  // named: items() must not outlive it
  for (const auto& [key, value] : head.items()) js.value(key.c_str(), value);
  const auto table = [&js](const dump_table& t) {
    js.open(t.key, '[');
    for (std::size_t i = 0; i < t.count; ++i) js.value(nullptr, t.record(i));
    js.close(']');
  };
  for (const dump_table& t : core_tables(a, vertices)) {
    if (std::string_view(t.key) != "entities") {
      table(t);
      continue;
    }
    js.open(t.key, '[');
    const auto entities = a.entities();
    for (std::uint32_t row = 0; row < entities.size(); ++row)
      js.text(nullptr, entity_json_text(a, row, entities[row], js.current_indent()));
    js.close(']');
  }
  js.open("extensions", '{');
  for (const dump_table& t : extension_tables(a)) table(t);
  js.close('}');
  js.value("rawChunks", raw_chunks_json(a));
  js.close('}');
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

/// Indentation of the entity tree stops growing at this depth (deeper lines
/// say their depth instead), so the text stays linear in the entity count.
constexpr std::size_t max_tree_indent = 32;

/// The entity hierarchy, parents before children, children in table order;
/// iterative, O(entities + meshes).
void write_entity_tree(const asset& a, const text_sink& out) {
  const auto entities = a.entities();
  const std::size_t n = entities.size();
  std::unordered_map<std::uint32_t, std::uint32_t> row_of;
  row_of.reserve(n);
  for (std::uint32_t row = 0; row < n; ++row) row_of.emplace(entities[row].entity_id, row);
  // Children of each row as one flat array (counting sort keeps table order).
  std::vector<std::uint32_t> parent(n, none), first(n + 1, 0), children(n);
  std::vector<std::uint32_t> roots;
  for (std::uint32_t row = 0; row < n; ++row) {
    const auto it = row_of.find(entities[row].parent_entity_id);
    if (entities[row].parent_entity_id == none || it == row_of.end()) roots.push_back(row);
    else {
      parent[row] = it->second;
      ++first[it->second + 1];
    }
  }
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
  for (std::uint32_t row = 0; row < n; ++row)
    if (parent[row] != none) children[fill[parent[row]]++] = row;

  out(format("entities (%zu)\n", n));
  const auto meshes = a.meshes();
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;  // (row, depth)
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.emplace_back(*it, 1);
  while (!stack.empty()) {
    const auto [row, depth] = stack.back();
    stack.pop_back();
    const entity_record e = entities[row];
    std::string indent(2 * std::min(depth, max_tree_indent), ' ');
    std::string line = indent;
    if (depth > max_tree_indent) line += format("(depth %zu) ", depth);
    // Appended, not "[" + std::to_string(...): that trips GCC 12's -Wrestrict at -O3 (a false positive).
    line.append("[").append(std::to_string(e.entity_id)).append("] '");
    line.append(e.name_offset == none ? std::string("-") : escaped(a.string(e.name_offset)));
    line.append("' ").append(show_transform(e.local_transform)).append("\n");
    for (std::uint32_t k = 0; k < e.mesh_record_count; ++k) {
      const std::size_t m = std::size_t{e.first_mesh_record_index} + k;
      if (m < meshes.size()) line += indent + "  " + mesh_line(mesh_json(a, static_cast<std::uint32_t>(m), meshes[m], 0)) + "\n";
    }
    out(line);
    for (std::uint32_t c = first[row + 1]; c > first[row]; --c) stack.emplace_back(children[c - 1], depth + 1);
  }
}

}  // namespace

void write_dump_text(const std::string& name, const asset& a, std::uint32_t vertices, const text_sink& out) {
  const json head = dump_head(name, a);
  out(format("%s: %s, format version %s, vertex layout %s, flags 0x%x\n", show(head["file"]).c_str(),
             show(head["fileType"]).c_str(), show(head["formatVersion"]).c_str(), show(head["vertexLayout"]).c_str(),
             head["flags"].get<unsigned>()));
  out(format("chunks (%zu)\n", head["chunks"].size()));
  for (const json& c : head["chunks"])
    out(format("  [%s] %s (%s) %s, %s bytes stored, %s raw, %s records\n", show(c["index"]).c_str(),
               show(c["typeName"]).c_str(), show(c["chunkType"]).c_str(), show(c["compression"]).c_str(),
               show(c["storedSize"]).c_str(), show(c["rawSize"]).c_str(), show(c["elementCount"]).c_str()));
  write_entity_tree(a, out);

  const auto meshes = a.meshes();
  out(format("meshes (%zu)\n", meshes.size()));
  for (std::uint32_t row = 0; row < meshes.size(); ++row) {
    const json m = mesh_json(a, row, meshes[row], vertices);
    out("  " + mesh_line(m) + format(", entity %s\n", show(m["entityId"]).c_str()) + vertex_lines(m, "    "));
  }
  const auto materials = a.materials();
  out(format("materials (%zu)\n", materials.size()));
  for (std::uint32_t row = 0; row < materials.size(); ++row) {
    const json m = material_json(a, row, materials[row]);
    std::string s =
        format("  [%s] '%s' baseColor=%s emissive=%s metallic=%s roughness=%s normalScale=%s occlusion=%s alphaCutoff=%s "
               "alphaMode=%s transmission=%s\n",
               show(m["index"]).c_str(), show(m["name"]).c_str(), show_list(m["baseColorFactor"]).c_str(),
               show_list(m["emissiveFactor"]).c_str(), show(m["metallicFactor"]).c_str(),
               show(m["roughnessFactor"]).c_str(), show(m["normalScale"]).c_str(),
               show(m["occlusionStrength"]).c_str(), show(m["alphaCutoff"]).c_str(), show(m["alphaMode"]).c_str(),
               show(m["transmissionFactor"]).c_str());
    std::string textures;
    for (const auto& [role, index] : m["textures"].items())
      if (!index.is_null()) textures += " " + role + "=" + show(index);
    if (!textures.empty())
      s += format("      textures%s (roughness channel %s, metallic channel %s)\n", textures.c_str(),
                  show(m["roughnessChannel"]).c_str(), show(m["metallicChannel"]).c_str());
    out(s);
  }
  const auto textures = a.textures();
  out(format("textures (%zu)\n", textures.size()));
  for (std::uint32_t row = 0; row < textures.size(); ++row) {
    const json t = texture_json(a, row, textures[row]);
    std::string flags;
    for (const json& f : t["flagNames"]) {
      if (!flags.empty()) flags += ',';
      flags += show(f);
    }
    out(format("  [%s] '%s' uri=%s %s %sx%s mips=%s flags=%s\n", show(t["index"]).c_str(), show(t["name"]).c_str(),
               show(t["uri"]).c_str(), show(t["textureFormat"]).c_str(), show(t["width"]).c_str(),
               show(t["height"]).c_str(), show(t["mipCount"]).c_str(), flags.empty() ? "-" : flags.c_str()));
  }
  for (const dump_table& t : extension_tables(a)) {
    out(format("%s (%zu)\n", t.key, t.count));
    for (std::size_t i = 0; i < t.count; ++i) {
      std::string fields;
      const json record = t.record(i);  // named: items() must not outlive it
      for (const auto& [key, value] : record.items())
        fields += " " + key + "=" + (value.is_array() ? show_list(value) : show(value));
      out(format("  [%zu]%s\n", i, fields.c_str()));
    }
  }
  const json raw = raw_chunks_json(a);
  if (!raw.empty()) {
    out(format("raw chunks (%zu)\n", raw.size()));
    for (const json& c : raw) {
      std::string s = format("  chunk %s: type %s (%s, %s), %s bytes", show(c["index"]).c_str(),
                             show(c["chunkType"]).c_str(), show(c["typeName"]).c_str(), show(c["kind"]).c_str(),
                             show(c["size"]).c_str());
      if (c.contains("plugin"))
        s += format(", plugin '%s' kind %s version %s", show(c["plugin"]["id"]).c_str(),
                    show(c["plugin"]["chunkKind"]).c_str(), show(c["plugin"]["chunkVersion"]).c_str());
      out(s + "\n");
    }
  }
}

json float_json(float f) {
  if (!std::isfinite(f)) return nullptr;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

std::string to_text(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

// ---- the text layout and the document stream -------------------------------------------

namespace {

// Keys and strings come from the file (UDM keys, bone and entry names): escaped.
void append_scalar_text(std::string& s, const json& v) {
  if (v.is_string()) {
    untold::detail::append_escaped(s, v.get_ref<const std::string&>());
  } else if (v.is_number_integer()) {  // what dump() prints, without its string
    char digits[24];
    const auto end = v.is_number_unsigned() ? std::to_chars(digits, digits + sizeof digits, v.get<std::uint64_t>()).ptr
                                            : std::to_chars(digits, digits + sizeof digits, v.get<std::int64_t>()).ptr;
    s.append(digits, end);
  } else {
    s.append(v.dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

// Short arrays of scalars (vectors, colours) stay on one line, and so do
// small flat objects (a vertex element, a chunk row) as key=value pairs.
bool flat(const json& v, std::size_t most) {
  return v.size() <= most && std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_primitive(); });
}

std::string index_key(std::size_t index) {
  std::string key = "[";  // appended: "[" + std::string(...) trips GCC 12's -Wrestrict at -O3
  key.append(std::to_string(index)).append("]");
  return key;
}

/// Appends the line of member `key` at `depth`; true when its members follow on lines of their own.
bool append_member_line(std::string& s, std::string_view key, const json& v, std::size_t depth) {
  // Indentation stops growing at 32 levels so the text stays linear in the input.
  s.append(2 * std::min<std::size_t>(depth, 32), ' ').append(key).append(":");
  if (v.is_object() && !v.empty() && flat(v, 8)) {
    for (const auto& [k, e] : v.items()) {
      s.append(" ");
      untold::detail::append_escaped(s, k);
      s.append("=");
      append_scalar_text(s, e);
    }
    s.append("\n");
    return false;
  }
  if (v.is_primitive() || (v.is_array() && flat(v, 16)) || v.empty()) {
    s.append(" ");
    if (v.is_primitive()) append_scalar_text(s, v);
    else s.append(v.dump(-1, ' ', false, json::error_handler_t::replace));
    s.append("\n");
    return false;
  }
  s.append("\n");
  return true;
}

/// Member `key` (already escaped) with value `v` at `depth`, in json_as_text's layout; iterative, whatever the depth.
void append_as_text(std::string& s, std::string_view key, const json& v, std::size_t depth) {
  struct frame {
    json::const_iterator it, end;
    bool array;
    std::size_t index;
    std::size_t depth;
  };
  std::vector<frame> stack;
  if (append_member_line(s, key, v, depth)) stack.push_back({v.begin(), v.end(), v.is_array(), 0, depth + 1});
  while (!stack.empty()) {
    frame& f = stack.back();
    if (f.it == f.end) {
      stack.pop_back();
      continue;
    }
    const std::string member_key = f.array ? index_key(f.index) : escaped(f.it.key());
    const json& member = *f.it;
    ++f.it;
    ++f.index;
    const std::size_t member_depth = f.depth;  // `f` dangles once the stack grows
    if (append_member_line(s, member_key, member, member_depth))
      stack.push_back({member.begin(), member.end(), member.is_array(), 0, member_depth + 1});
  }
}

}  // namespace

std::string json_as_text(const json& root) {
  std::string s;
  if (!root.is_structured()) {
    append_scalar_text(s, root);
    s += '\n';
    return s;
  }
  std::size_t index = 0;
  for (auto it = root.begin(); it != root.end(); ++it, ++index)
    append_as_text(s, root.is_array() ? index_key(index) : escaped(it.key()), *it, 0);
  return s;
}

void document_stream::item(const char* key) {
  if (frames_.empty()) return;
  out_(frames_.back().empty ? "\n" : ",\n");
  frames_.back().empty = false;
  indent();
  if (key != nullptr && !frames_.back().array) {
    out_(json(key).dump());
    out_(": ");
  }
}

std::string document_stream::text_key(const char* key) {
  frame& parent = frames_.back();
  const std::size_t index = parent.index++;
  return parent.array ? index_key(index) : escaped(key != nullptr ? key : "");
}

void document_stream::flush_text_headers() {
  for (std::size_t i = 1; i < frames_.size(); ++i) {
    if (!frames_[i].empty) continue;
    out_(std::string(2 * std::min<std::size_t>(i - 1, 32), ' ') + frames_[i].key + ":\n");
    frames_[i].empty = false;
  }
}

void document_stream::open(const char* key, char bracket) {
  if (form_ == syntax::json) {
    item(key);
    out_(std::string_view(&bracket, 1));
    frames_.push_back({bracket == '[', true, 0, {}});
    return;
  }
  std::string shown = frames_.empty() ? std::string() : text_key(key);
  frames_.push_back({bracket == '[', true, 0, std::move(shown)});
}

void document_stream::close(char bracket) {
  const frame done = std::move(frames_.back());
  frames_.pop_back();
  if (form_ == syntax::json) {
    if (!done.empty) {
      out_("\n");
      indent();
    }
    out_(std::string_view(&bracket, 1));
    if (frames_.empty()) out_("\n");
    return;
  }
  if (frames_.empty() || !done.empty) return;
  // An empty member: json_as_text shows it as "key: []" (or {}).
  flush_text_headers();
  std::string line(2 * std::min<std::size_t>(frames_.size() - 1, 32), ' ');
  line.append(done.key).append(": ").append(1, done.array ? '[' : '{').append(1, bracket);
  out_(line + "\n");
}

void document_stream::value(const char* key, const json& v) {
  if (form_ == syntax::text) {
    if (frames_.empty()) {
      out_(json_as_text(v));
      return;
    }
    const std::string shown = text_key(key);
    flush_text_headers();
    std::string s;
    append_as_text(s, shown, v, frames_.size() - 1);
    out_(s);
    return;
  }
  if (frames_.empty()) {  // a whole document
    out_(to_text(v));
    return;
  }
  item(key);
  const std::string text = v.dump(2, ' ', false, json::error_handler_t::replace);
  // Appended, not "\n" + std::string(...): that trips GCC 12's -Wrestrict at -O3 (a false positive).
  std::string pad = "\n";
  pad.append(2 * frames_.size(), ' ');
  // Line by line, re-indented on the way out (no second copy of a large value).
  for (std::size_t at = 0;;) {
    const std::size_t nl = text.find('\n', at);
    out_(std::string_view(text).substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    if (nl == std::string::npos) break;
    out_(pad);
    at = nl + 1;
  }
}

void document_stream::members(const json& object) {
  for (auto it = object.begin(); it != object.end(); ++it) value(it.key().c_str(), *it);
}

void document_stream::text(const char* key, std::string_view rendered) {
  item(key);
  out_(rendered);
}

}  // namespace untold::tools
