// tools/pipeline/format_assetc.cpp - the assetc formats: magic recognition,
// info/validate/dump as JSON, the .hmesh importer (with its siblings) and
// convert's assetc outputs (see formats.hpp, docs/assetc.md). The
// family's own commands are tools/cli/check.cpp (`untold check DIR`),
// pack.cpp (`untold pack info FILE`) and build.cpp (the compiler).
#include "format_assetc.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <untold/assetc/assetc.hpp>
#include <untold/assetc/import.hpp>
#include <untold/source.hpp>

#include "formats.hpp"
#include "inspect.hpp"

namespace untold::tools {

namespace fs = std::filesystem;

assetc::open_options assetc_open_options(bool deep) {
  assetc::open_options o;
  o.limits.max_chunks = 1u << 20;
  o.deep_checks = deep;
  return o;
}

namespace {

namespace ua = untold::assetc;

std::string hex64(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string fourcc_text(std::uint32_t code) { return std::string(ua::fourcc_chars(code).data(), 4); }

json float_array(std::span<const float> v) {
  json a = json::array();
  for (const float f : v) a.push_back(f);
  return a;
}

json bounds_json(const ua::mesh_bounds& b) {
  return json_object({{"min", float_array(b.min)}, {"max", float_array(b.max)}, {"center", float_array(b.center)}, {"radius", b.radius}});
}

json assetc_json(const std::string& path, std::string_view format, byte_span file) {
  return json_object({{"file", path}, {"format", format}, {"fileSize", file.size()}, {"valid", true}});
}

template <class R>
json invalid_result(json j, const R& r) {
  return invalid_json(std::move(j), r.error());
}

// ---- .hmesh ---------------------------------------------------------------------------

json hmesh_summary(const ua::hmesh& m) {
  const ua::mesh_desc& d = m.desc();
  json j = json_object({{"version", m.header().version},
                        {"chunks", m.chunks().size()},
                        {"vertices", d.vertex_count},
                        {"indices", d.index_count},
                        {"triangles", d.index_count / 3},
                        {"indexWidth", d.index_width},
                        {"tangents", (d.flags & ua::desc_flag_tangents) != 0},
                        {"meshlets", d.meshlet_count},
                        {"meshletMaxVertices", d.meshlet_max_vertices},
                        {"meshletMaxTriangles", d.meshlet_max_triangles},
                        {"submeshes", d.submesh_count},
                        {"materials", d.material_count},
                        {"joints", m.skeleton().size()},
                        {"skinned", m.has(ua::chunk_id::skin)},
                        {"lods", m.lod_count()}});
  std::size_t unknown = 0;
  for (std::size_t i = 0; i < m.chunks().size(); ++i) unknown += m.is_unknown(i) ? 1 : 0;
  j["unknownChunks"] = unknown;
  if (const auto b = m.bounds()) j["bounds"] = bounds_json(*b);
  return j;
}

json hmesh_info(const std::string& path, byte_span file) {
  json j = assetc_json(path, "assetc-hmesh", file);
  auto m = ua::open_hmesh(file, assetc_open_options());
  if (!m) return invalid_result(std::move(j), m);
  j.update(hmesh_summary(*m));
  return j;
}

std::optional<json> hmesh_dump(const std::string& path, byte_span file, document_stream& out) {
  json head = assetc_json(path, "assetc-hmesh", file);
  auto m = ua::open_hmesh(file, assetc_open_options());
  if (!m) return invalid_result(std::move(head), m);
  head.update(hmesh_summary(*m));
  out.open(nullptr, '{');
  out.members(head);
  out.list("chunkTable", m->chunks(), [](const ua::chunk_entry& e) {
    return json_object({{"fourcc", fourcc_text(e.fourcc)}, {"flags", e.flags}, {"offset", e.offset}, {"size", e.size},
                        {"known", ua::catalogue_id(e.fourcc).has_value()}});
  });
  out.open("submeshTable", '[');
  for (std::size_t i = 0; i < m->submeshes().size(); ++i) {
    const ua::submesh& s = m->submeshes()[i];
    out.open(nullptr, '{');
    out.members(json_object({{"firstIndex", s.first_index},
                             {"indexCount", s.index_count},
                             {"firstMeshlet", s.first_meshlet},
                             {"meshletCount", s.meshlet_count},
                             {"materialSlot", s.material_slot == ua::no_material ? json("none") : json(s.material_slot)},
                             {"baseVertex", s.base_vertex},
                             {"bounds", bounds_json(s.bounds)}}));
    out.list("lods", m->lods(i), [](const ua::mesh_lod l) {
      return json_object({{"firstIndex", l.first_index}, {"indexCount", l.index_count}});
    });
    out.close('}');
  }
  out.close(']');
  out.list("materialRefs", m->materials(), [](std::uint64_t h) { return json(hex64(h)); });
  out.list("skeleton", m->skeleton(), [](const ua::joint& jt) {
    return json_object({{"parent", jt.parent},
                        {"bindT", float_array(jt.bind_translation)},
                        {"bindR", float_array(jt.bind_rotation)},
                        {"bindS", float_array(jt.bind_scale)}});
  });
  out.list("meshletTable", m->meshlets(), [](const ua::meshlet& l) {
    return json_object({{"vertexOffset", l.vertex_offset}, {"vertexCount", l.vertex_count},
                        {"triangleOffset", l.triangle_offset}, {"triangleCount", l.triangle_count}});
  });
  out.close('}');
  return std::nullopt;
}

// ---- .hmat ----------------------------------------------------------------------------

json hmat_summary(const ua::hmat& h) {
  std::array<std::size_t, 5> slots{};
  std::array<std::size_t, 3> alpha{};
  std::size_t double_sided = 0;
  for (const ua::material& m : h.rows()) {
    const auto t = m.textures();
    for (std::size_t i = 0; i < t.size(); ++i) slots[i] += t[i] != 0 ? 1 : 0;
    alpha[m.alpha_mode_bits()] += 1;
    double_sided += m.double_sided() ? 1 : 0;
  }
  json used;
  for (std::size_t i = 0; i < slots.size(); ++i) used[ua::material_texture_slots[i]] = slots[i];
  return json_object({{"version", h.version()},
                      {"materials", h.size()},
                      {"textureSlots", std::move(used)},
                      {"alphaModes", json_object({{"opaque", alpha[0]}, {"mask", alpha[1]}, {"blend", alpha[2]}})},
                      {"doubleSided", double_sided}});
}

json hmat_info(const std::string& path, byte_span file) {
  json j = assetc_json(path, "assetc-hmat", file);
  auto h = ua::open_hmat(file, assetc_open_options());
  if (!h) return invalid_result(std::move(j), h);
  j.update(hmat_summary(*h));
  return j;
}

std::optional<json> hmat_dump(const std::string& path, byte_span file, document_stream& out) {
  json j = assetc_json(path, "assetc-hmat", file);
  auto h = ua::open_hmat(file, assetc_open_options());
  if (!h) return invalid_result(std::move(j), h);
  j.update(hmat_summary(*h));
  constexpr const char* alpha_names[] = {"opaque", "mask", "blend", "invalid"};
  out.open(nullptr, '{');
  out.members(j);
  out.open("rows", '[');
  for (const ua::material& m : h->rows()) {
    json r = json_object({{"baseColor", float_array(m.base_color)}, {"emissive", float_array(m.emissive)},
                          {"metallic", m.metallic},                 {"roughness", m.roughness},
                          {"normalScale", m.normal_scale},          {"occlusionStrength", m.occlusion_strength},
                          {"alphaCutoff", m.alpha_cutoff},          {"alphaMode", alpha_names[m.alpha_mode_bits()]},
                          {"doubleSided", m.double_sided()}});
    const auto t = m.textures();
    for (std::size_t i = 0; i < t.size(); ++i) r[ua::material_texture_slots[i]] = t[i] == 0 ? json(nullptr) : json(hex64(t[i]));
    out.value(nullptr, r);
  }
  out.close(']');
  out.close('}');
  return std::nullopt;
}

// ---- .hman ----------------------------------------------------------------------------

constexpr std::string_view manifest_kind_name(std::uint8_t k) {
  constexpr std::string_view names[] = {"texture", "mesh", "material", "lut", "shader", "embed", "animation", "font"};
  return k < 8 ? names[k] : "unknown";
}

json hman_summary(const ua::hman& h) {
  std::map<std::string, std::size_t> kinds;
  std::size_t srgb = 0;
  for (const ua::manifest_entry& e : h.entries()) {
    ++kinds[std::string(manifest_kind_name(e.kind))];
    srgb += e.colorspace == 1 ? 1 : 0;
  }
  json k = json::object();
  for (const auto& [name, n] : kinds) k[name] = n;
  return json_object({{"version", ua::hman_version}, {"entries", h.size()}, {"kinds", std::move(k)},
                      {"colorspaces", json_object({{"linear", h.size() - srgb}, {"srgb", srgb}})}});
}

json hman_info(const std::string& path, byte_span file) {
  json j = assetc_json(path, "assetc-hman", file);
  auto h = ua::open_hman(file, assetc_open_options());
  if (!h) return invalid_result(std::move(j), h);
  j.update(hman_summary(*h));
  return j;
}

std::optional<json> hman_dump(const std::string& path, byte_span file, document_stream& out) {
  json head = assetc_json(path, "assetc-hman", file);
  auto h = ua::open_hman(file, assetc_open_options());
  if (!h) return invalid_result(std::move(head), h);
  head.update(hman_summary(*h));
  out.open(nullptr, '{');
  out.members(head);
  out.list("entryTable", h->entries(), [](const ua::manifest_entry& e) {
    return json_object({{"hash", hex64(e.hash)}, {"kind", manifest_kind_name(e.kind)},
                        {"colorspace", e.colorspace == 1 ? "srgb" : "linear"}, {"path", e.path}});
  });
  out.close('}');
  return std::nullopt;
}

// ---- .hpack ---------------------------------------------------------------------------

json hpack_summary(const ua::hpack& p) {
  const ua::pack_layout l = p.layout();
  std::map<std::string, std::pair<std::size_t, std::uint64_t>> kinds;
  for (const ua::pack_entry& e : p.entries()) {
    auto& k = kinds[std::string(ua::pack_kind_name(e.kind))];
    k.first += 1;
    k.second += e.size;
  }
  json k = json::object();
  for (const auto& [name, v] : kinds) k[name] = json_object({{"files", v.first}, {"bytes", v.second}});
  return json_object({{"version", ua::hpack_version},
                      {"entries", p.size()},
                      {"layout", json_object({{"header", l.header}, {"toc", l.toc}, {"payload", l.payload}, {"padding", l.padding}})},
                      {"kinds", std::move(k)}});
}

json hpack_info(const std::string& path, byte_span file) {
  json j = assetc_json(path, "assetc-hpack", file);
  auto p = ua::open_hpack(file, assetc_open_options());
  if (!p) return invalid_result(std::move(j), p);
  j.update(hpack_summary(*p));
  return j;
}

std::optional<json> hpack_dump(const std::string& path, byte_span file, document_stream& out) {
  json head = hpack_info(path, file);
  if (!head["valid"].get<bool>()) return head;
  const auto p = ua::open_hpack(file, assetc_open_options());
  out.open(nullptr, '{');
  out.members(head);
  out.list("entryTable", p->entries(), [](const ua::pack_entry& e) {
    return json_object({{"path", e.path}, {"kind", ua::pack_kind_name(e.kind)}, {"size", e.size}, {"offset", e.offset}});
  });
  out.close('}');
  return std::nullopt;
}

// ---- .hanim ---------------------------------------------------------------------------

json hanim_summary(const ua::hanim& a) {
  std::uint64_t keys = 0;
  float longest = 0;
  for (const ua::anim_channel& c : a.all_channels()) keys += c.key_count;
  for (const ua::anim_clip& c : a.clips()) longest = std::max(longest, c.duration);
  return json_object({{"version", ua::hanim_version}, {"clips", a.clips().size()}, {"channels", a.all_channels().size()},
                      {"keys", keys}, {"longestDuration", longest}});
}

json hanim_info(const std::string& path, byte_span file) {
  json j = assetc_json(path, "assetc-hanim", file);
  auto a = ua::open_hanim(file, assetc_open_options());
  if (!a) return invalid_result(std::move(j), a);
  j.update(hanim_summary(*a));
  return j;
}

std::optional<json> hanim_dump(const std::string& path, byte_span file, document_stream& out) {
  json head = assetc_json(path, "assetc-hanim", file);
  auto a = ua::open_hanim(file, assetc_open_options());
  if (!a) return invalid_result(std::move(head), a);
  head.update(hanim_summary(*a));
  out.open(nullptr, '{');
  out.members(head);
  out.open("clipTable", '[');
  for (std::size_t c = 0; c < a->clips().size(); ++c) {
    out.open(nullptr, '{');
    out.value("name", a->clips()[c].name);
    out.value("duration", a->clips()[c].duration);
    out.open("channels", '[');
    for (const ua::anim_channel& ch : a->channels(c)) {
      out.open(nullptr, '{');
      out.value("joint", ch.joint);
      out.value("path", ua::anim_path_name(static_cast<std::uint8_t>(ch.path)));
      out.value("interp", ua::anim_interp_name(static_cast<std::uint8_t>(ch.interp)));
      out.value("components", ch.components);
      out.open("keys", '[');
      for (std::size_t k = 0; k < ch.key_count; ++k) {
        json v = json::array();
        for (std::size_t i = 0; i < ch.components; ++i) v.push_back(ch.value(k, i));
        out.value(nullptr, json_object({{"time", ch.time(k)}, {"value", std::move(v)}}));
      }
      out.close(']');
      out.close('}');
    }
    out.close(']');
    out.close('}');
  }
  out.close(']');
  out.close('}');
  return std::nullopt;
}

// ---- import: .hmesh and its siblings -> scene ------------------------------------------

/// A sibling file's bytes, or none when there is no such file.
result<std::vector<std::byte>> optional_file(const fs::path& p) {
  std::error_code ec;
  if (p.empty() || !fs::is_regular_file(p, ec)) return std::vector<std::byte>{};
  auto bytes = read_file(p);
  if (!bytes) {
    if (bytes.error().code == errc::io_empty_file) return std::vector<std::byte>{};
    error e = bytes.error();  // E-IO-OPEN / E-IO-READ, naming the file
    return e.with_subject(p.filename().string());
  }
  return bytes;
}

/// The manifest of the tree a .hmesh lies in: STEM.hman beside it (what
/// convert writes), else the nearest assets.hman (what `untold build`
/// writes at the tree's root) in its directory or an ancestor.
fs::path manifest_of(const fs::path& hmesh) {
  std::error_code ec;
  const fs::path own = fs::path(hmesh).replace_extension(".hman");
  if (fs::is_regular_file(own, ec)) return own;
  for (fs::path dir = fs::absolute(hmesh, ec).parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "assets.hman", ec)) return dir / "assets.hman";
    if (dir == dir.parent_path()) break;
  }
  return {};
}

/// The .hmesh at request.input with STEM.hmat, STEM.hanim (or the one
/// --animations file) and the tree's manifest; texture uris become relative
/// to the .hmesh's directory.
result<convert::scene> hmesh_import(const import_request& request) {
  if (request.animations.size() > 1)
    return make_error(errc::invalid_argument).at_field("animations").with_value(request.animations.size()).with_limit(1);
  const fs::path& in = request.input;
  const fs::path manifest = manifest_of(in);
  auto hmat = optional_file(fs::path(in).replace_extension(".hmat"));
  if (!hmat) return hmat.error();
  auto hanim = optional_file(request.animations.empty() ? fs::path(in).replace_extension(".hanim") : request.animations[0]);
  if (!hanim) return hanim.error();
  auto hman = optional_file(manifest);
  if (!hman) return hman.error();
  // The caller's budget covers the .hmesh and --animations; siblings found
  // here are inputs too, so with any the import gets a budget for all the files.
  const std::uint64_t siblings = untold::budget::sum(untold::budget::sum(hmat->size(), hman->size()),
                                                     request.animations.empty() ? hanim->size() : 0);
  untold::budget own(request.limits, request.bytes.size() + hmat->size() + hanim->size() + hman->size());
  untold::budget& budget = siblings == 0 ? untold::budget::own_or_shared(request.budget, own) : own;
  auto s = ua::import_files({.hmesh = request.bytes, .hmat = *hmat, .hanim = *hanim, .hman = *hman},
                            in.stem().string(), {.limits = request.limits, .budget = &budget});
  if (!s) return s.error();
  std::error_code ec;
  const fs::path root = fs::absolute(manifest, ec).parent_path();
  const fs::path here = fs::absolute(in, ec).parent_path();
  for (convert::texture& t : s->textures)
    if (!t.uri.empty()) t.uri = (root / t.uri).lexically_normal().lexically_relative(here).generic_string();
  return s;
}

}  // namespace

namespace {

// ---- validate, shared -----------------------------------------------------------------

template <auto Open>
json validate_with(const std::string& path, byte_span file, bool deep, std::string_view format) {
  json j = json_object({{"file", path}, {"format", format}, {"valid", true}});
  auto r = Open(file, assetc_open_options(deep));
  if (!r) {
    j["valid"] = false;
    j["error"] = error_json(r.error());
  }
  return j;
}

template <std::uint32_t Magic>
bool has_magic(byte_span head) {
  return ua::magic_of(head) == Magic;
}

}  // namespace

void add_assetc_formats(std::vector<format_handler>& out) {
  out.push_back({"assetc-hmesh", "assetc mesh (.hmesh v2)", &has_magic<ua::hmesh_magic>, &hmesh_info,
                 [](const std::string& p, byte_span f, bool deep) { return validate_with<&ua::open_hmesh>(p, f, deep, "assetc-hmesh"); },
                 &hmesh_dump, &hmesh_import});
  out.push_back({"assetc-hmat", "assetc material table (.hmat v1)", &has_magic<ua::hmat_magic>, &hmat_info,
                 [](const std::string& p, byte_span f, bool deep) { return validate_with<&ua::open_hmat>(p, f, deep, "assetc-hmat"); },
                 &hmat_dump, nullptr});
  out.push_back({"assetc-hman", "assetc manifest (.hman v1)", &has_magic<ua::hman_magic>, &hman_info,
                 [](const std::string& p, byte_span f, bool deep) { return validate_with<&ua::open_hman>(p, f, deep, "assetc-hman"); },
                 &hman_dump, nullptr});
  out.push_back({"assetc-hpack", "assetc pack (.hpack v2)", &has_magic<ua::hpack_magic>, &hpack_info,
                 [](const std::string& p, byte_span f, bool deep) { return validate_with<&ua::open_hpack>(p, f, deep, "assetc-hpack"); },
                 &hpack_dump, nullptr});
  out.push_back({"assetc-hanim", "assetc animation clips (.hanim v1)", &has_magic<ua::hanim_magic>, &hanim_info,
                 [](const std::string& p, byte_span f, bool deep) { return validate_with<&ua::open_hanim>(p, f, deep, "assetc-hanim"); },
                 &hanim_dump, nullptr});
}

}  // namespace untold::tools
