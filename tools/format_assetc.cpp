// tools/format_assetc.cpp - the assetc formats in the CLI: magic recognition,
// info/validate/dump as JSON, and the family's own subcommands
// `untold check DIR` and `untold pack info FILE` (see formats.hpp,
// docs/assetc.md). `untold build` lives in the compiler's own files.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/assetc/assetc.hpp>
#include <untold/source.hpp>

#include "formats.hpp"
#include "inspect.hpp"

namespace untold::tools {
namespace {

namespace ua = untold::assetc;

constexpr int exit_ok = 0;
constexpr int exit_invalid = 1;
constexpr int exit_io = 3;

/// The CLI is an offline tool: a pack of a whole game may hold far more than
/// the library's default 1024 entries (limits::max_chunks).
ua::open_options cli_options(bool deep = false) {
  ua::open_options o;
  o.limits.max_chunks = 1u << 20;
  o.deep_checks = deep;
  return o;
}

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
  return json{{"min", float_array(b.min)}, {"max", float_array(b.max)}, {"center", float_array(b.center)}, {"radius", b.radius}};
}

json base(const std::string& path, std::string_view format, byte_span file) {
  return json{{"file", path}, {"format", format}, {"fileSize", file.size()}, {"valid", true}};
}

template <class R>
json invalid(json j, const R& r) {
  j["valid"] = false;
  j["error"] = error_json(r.error());
  return j;
}

// ---- .hmesh ---------------------------------------------------------------------------

json hmesh_summary(const ua::hmesh& m) {
  const ua::mesh_desc& d = m.desc();
  json j{{"version", m.header().version},
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
         {"lods", m.lod_count()}};
  std::size_t unknown = 0;
  for (std::size_t i = 0; i < m.chunks().size(); ++i) unknown += m.is_unknown(i) ? 1 : 0;
  j["unknownChunks"] = unknown;
  if (const auto b = m.bounds()) j["bounds"] = bounds_json(*b);
  return j;
}

json hmesh_info(const std::string& path, byte_span file) {
  json j = base(path, "assetc-hmesh", file);
  auto m = ua::open_hmesh(file, cli_options());
  if (!m) return invalid(std::move(j), m);
  j.update(hmesh_summary(*m));
  return j;
}

json hmesh_dump(const std::string& path, byte_span file) {
  json j = base(path, "assetc-hmesh", file);
  auto m = ua::open_hmesh(file, cli_options());
  if (!m) return invalid(std::move(j), m);
  j.update(hmesh_summary(*m));
  json chunks = json::array();
  for (const ua::chunk_entry& e : m->chunks())
    chunks.push_back(json{{"fourcc", fourcc_text(e.fourcc)}, {"flags", e.flags}, {"offset", e.offset}, {"size", e.size},
                          {"known", ua::catalogue_id(e.fourcc).has_value()}});
  j["chunkTable"] = std::move(chunks);
  json subs = json::array();
  for (const ua::submesh& s : m->submeshes()) {
    subs.push_back(json{{"firstIndex", s.first_index},
                        {"indexCount", s.index_count},
                        {"firstMeshlet", s.first_meshlet},
                        {"meshletCount", s.meshlet_count},
                        {"materialSlot", s.material_slot == ua::no_material ? json("none") : json(s.material_slot)},
                        {"baseVertex", s.base_vertex},
                        {"bounds", bounds_json(s.bounds)}});
  }
  for (std::size_t s = 0; s < subs.size(); ++s) {
    json lods = json::array();
    for (const ua::mesh_lod l : m->lods(s)) lods.push_back(json{{"firstIndex", l.first_index}, {"indexCount", l.index_count}});
    subs[s]["lods"] = std::move(lods);
  }
  j["submeshTable"] = std::move(subs);
  json mats = json::array();
  for (const std::uint64_t h : m->materials()) mats.push_back(hex64(h));
  j["materialRefs"] = std::move(mats);
  json joints = json::array();
  for (const ua::joint& jt : m->skeleton())
    joints.push_back(json{{"parent", jt.parent},
                          {"bindT", float_array(jt.bind_translation)},
                          {"bindR", float_array(jt.bind_rotation)},
                          {"bindS", float_array(jt.bind_scale)}});
  j["skeleton"] = std::move(joints);
  json lets = json::array();
  for (const ua::meshlet& l : m->meshlets())
    lets.push_back(json{{"vertexOffset", l.vertex_offset}, {"vertexCount", l.vertex_count},
                        {"triangleOffset", l.triangle_offset}, {"triangleCount", l.triangle_count}});
  j["meshletTable"] = std::move(lets);
  return j;
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
  return json{{"version", h.version()},
              {"materials", h.size()},
              {"textureSlots", std::move(used)},
              {"alphaModes", json{{"opaque", alpha[0]}, {"mask", alpha[1]}, {"blend", alpha[2]}}},
              {"doubleSided", double_sided}};
}

json hmat_info(const std::string& path, byte_span file) {
  json j = base(path, "assetc-hmat", file);
  auto h = ua::open_hmat(file, cli_options());
  if (!h) return invalid(std::move(j), h);
  j.update(hmat_summary(*h));
  return j;
}

json hmat_dump(const std::string& path, byte_span file) {
  json j = base(path, "assetc-hmat", file);
  auto h = ua::open_hmat(file, cli_options());
  if (!h) return invalid(std::move(j), h);
  j.update(hmat_summary(*h));
  constexpr const char* alpha_names[] = {"opaque", "mask", "blend", "invalid"};
  json rows = json::array();
  for (const ua::material& m : h->rows()) {
    json r{{"baseColor", float_array(m.base_color)}, {"emissive", float_array(m.emissive)},
           {"metallic", m.metallic},                 {"roughness", m.roughness},
           {"normalScale", m.normal_scale},          {"occlusionStrength", m.occlusion_strength},
           {"alphaCutoff", m.alpha_cutoff},          {"alphaMode", alpha_names[m.alpha_mode_bits()]},
           {"doubleSided", m.double_sided()}};
    const auto t = m.textures();
    for (std::size_t i = 0; i < t.size(); ++i) r[ua::material_texture_slots[i]] = t[i] == 0 ? json(nullptr) : json(hex64(t[i]));
    rows.push_back(std::move(r));
  }
  j["rows"] = std::move(rows);
  return j;
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
  return json{{"version", ua::hman_version}, {"entries", h.size()}, {"kinds", std::move(k)},
              {"colorspaces", json{{"linear", h.size() - srgb}, {"srgb", srgb}}}};
}

json hman_info(const std::string& path, byte_span file) {
  json j = base(path, "assetc-hman", file);
  auto h = ua::open_hman(file, cli_options());
  if (!h) return invalid(std::move(j), h);
  j.update(hman_summary(*h));
  return j;
}

json hman_dump(const std::string& path, byte_span file) {
  json j = base(path, "assetc-hman", file);
  auto h = ua::open_hman(file, cli_options());
  if (!h) return invalid(std::move(j), h);
  j.update(hman_summary(*h));
  json entries = json::array();
  for (const ua::manifest_entry& e : h->entries())
    entries.push_back(json{{"hash", hex64(e.hash)}, {"kind", manifest_kind_name(e.kind)},
                           {"colorspace", e.colorspace == 1 ? "srgb" : "linear"}, {"path", e.path}});
  j["entryTable"] = std::move(entries);
  return j;
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
  for (const auto& [name, v] : kinds) k[name] = json{{"files", v.first}, {"bytes", v.second}};
  return json{{"version", ua::hpack_version},
              {"entries", p.size()},
              {"layout", json{{"header", l.header}, {"toc", l.toc}, {"payload", l.payload}, {"padding", l.padding}}},
              {"kinds", std::move(k)}};
}

json hpack_entries(const ua::hpack& p) {
  json entries = json::array();
  for (const ua::pack_entry& e : p.entries())
    entries.push_back(json{{"path", e.path}, {"kind", ua::pack_kind_name(e.kind)}, {"size", e.size}, {"offset", e.offset}});
  return entries;
}

json hpack_info(const std::string& path, byte_span file) {
  json j = base(path, "assetc-hpack", file);
  auto p = ua::open_hpack(file, cli_options());
  if (!p) return invalid(std::move(j), p);
  j.update(hpack_summary(*p));
  return j;
}

json hpack_dump(const std::string& path, byte_span file) {
  json j = hpack_info(path, file);
  if (!j["valid"].get<bool>()) return j;
  j["entryTable"] = hpack_entries(*ua::open_hpack(file, cli_options()));
  return j;
}

// ---- .hanim ---------------------------------------------------------------------------

json hanim_summary(const ua::hanim& a) {
  std::uint64_t keys = 0;
  float longest = 0;
  for (const ua::anim_channel& c : a.all_channels()) keys += c.key_count;
  for (const ua::anim_clip& c : a.clips()) longest = std::max(longest, c.duration);
  return json{{"version", ua::hanim_version}, {"clips", a.clips().size()}, {"channels", a.all_channels().size()},
              {"keys", keys}, {"longestDuration", longest}};
}

json hanim_info(const std::string& path, byte_span file) {
  json j = base(path, "assetc-hanim", file);
  auto a = ua::open_hanim(file, cli_options());
  if (!a) return invalid(std::move(j), a);
  j.update(hanim_summary(*a));
  return j;
}

json hanim_dump(const std::string& path, byte_span file) {
  json j = base(path, "assetc-hanim", file);
  auto a = ua::open_hanim(file, cli_options());
  if (!a) return invalid(std::move(j), a);
  j.update(hanim_summary(*a));
  json clips = json::array();
  for (std::size_t c = 0; c < a->clips().size(); ++c) {
    json channels = json::array();
    for (const ua::anim_channel& ch : a->channels(c)) {
      json keys = json::array();
      for (std::size_t k = 0; k < ch.key_count; ++k) {
        json v = json::array();
        for (std::size_t i = 0; i < ch.components; ++i) v.push_back(ch.value(k, i));
        keys.push_back(json{{"time", ch.time(k)}, {"value", std::move(v)}});
      }
      channels.push_back(json{{"joint", ch.joint},
                              {"path", ua::anim_path_name(static_cast<std::uint8_t>(ch.path))},
                              {"interp", ua::anim_interp_name(static_cast<std::uint8_t>(ch.interp))},
                              {"components", ch.components},
                              {"keys", std::move(keys)}});
    }
    clips.push_back(json{{"name", a->clips()[c].name}, {"duration", a->clips()[c].duration}, {"channels", std::move(channels)}});
  }
  j["clipTable"] = std::move(clips);
  return j;
}

// ---- validate, shared -----------------------------------------------------------------

template <auto Open>
json validate_with(const std::string& path, byte_span file, bool deep, std::string_view format) {
  json j{{"file", path}, {"format", format}, {"valid", true}};
  auto r = Open(file, cli_options(deep));
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

// ---- untold check DIR -----------------------------------------------------------------

void print(const json& j) { std::fputs(to_text(j).c_str(), stdout); }

/// The report of `untold check`, streamed: each problem is printed as soon as
/// check_files finds it (text: "FILE: <describe>"; JSON: one element of
/// "problems"), so memory does not grow with the number of problems; the
/// counts follow them.
class check_printer {
 public:
  check_printer(const std::string& where, bool deep, bool as_json) : json_(as_json) {
    if (!json_) return;
    js_.open(nullptr, '{');
    js_.value("dir", where);
    js_.value("deep", deep);
    js_.open("problems", '[');
  }
  void problem(std::string_view file, const error& e) {
    if (json_) js_.value(nullptr, json{{"file", std::string(file)}, {"error", error_json(e)}});
    else std::printf("%s: %s\n", escaped(file).c_str(), e.describe().c_str());
  }
  int finish(std::size_t files, const ua::check_report& r) {
    if (json_) {
      js_.close(']');
      const json counts{{"ok", r.ok()},
                        {"files", files},
                        {"meshes", r.meshes},
                        {"materials", r.materials},
                        {"manifests", r.manifests},
                        {"animations", r.animations},
                        {"packs", r.packs},
                        {"textureRefs", r.texture_refs},
                        {"manifestEntries", r.manifest_entries},
                        {"problemCount", r.problem_count}};
      for (const auto& [key, value] : counts.items()) js_.value(key.c_str(), value);
      js_.close('}');
    } else {
      std::printf("%zu meshes, %zu material tables, %zu manifests (%zu entries), %zu animations, %zu packs; %zu texture refs: %s\n",
                  r.meshes, r.materials, r.manifests, r.manifest_entries, r.animations, r.packs, r.texture_refs,
                  r.ok() ? "ok" : (std::to_string(r.problem_count) + " problem(s)").c_str());
    }
    return r.ok() ? exit_ok : exit_invalid;
  }
  [[nodiscard]] ua::problem_sink sink() {
    return [this](std::string_view file, const error& e) { problem(file, e); };
  }

 private:
  bool json_;
  text_sink out_ = [](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); };
  json_stream js_{out_};
};

/// `untold check runtime.hpack`: the same rules over the pack's entries, under
/// one budget for the pack.
int run_check_pack(const std::string& path, bool deep, bool as_json) {
  auto file = mapped_file::open(path);
  if (!file) {
    std::fprintf(stderr, "untold: check: %s: %s\n", escaped(path).c_str(), file.error().describe().c_str());
    return exit_io;
  }
  ua::open_options options = cli_options(deep);
  budget spend(options.limits, file->bytes().size());
  options.budget = &spend;
  check_printer printer(path, deep, as_json);
  auto p = ua::open_hpack(file->bytes(), options);
  if (!p) {
    ua::check_report r;
    r.packs = 1;
    r.problem_count = 1;
    printer.problem(path, p.error());
    return printer.finish(1, r);
  }
  std::vector<std::string> paths;
  for (const ua::pack_entry& e : p->entries()) paths.emplace_back(e.path);
  const ua::check_report r = ua::check_files(
      paths, [&p](std::string_view rel) { return p->bytes(rel); }, options, printer.sink());
  return printer.finish(paths.size(), r);
}

/// `untold check DIR`: every file of the tree, mapped when first read, under
/// one budget for the bytes of the whole tree.
int run_check(const std::string& dir, bool deep, bool as_json) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) return run_check_pack(dir, deep, as_json);
  if (!fs::is_directory(dir, ec)) {
    std::fprintf(stderr, "untold: check: %s is neither a directory nor a .hpack\n", ("'" + escaped(dir) + "'").c_str());
    return exit_io;
  }
  std::vector<std::string> paths;
  std::uint64_t tree_bytes = 0;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(dir);
    // The build cache is not part of the runtime tree.
    if (it->is_directory(ec) && rel.filename().string().starts_with(".assetc-cache")) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    paths.push_back(rel.generic_string());
    std::error_code size_ec;
    const std::uintmax_t size = it->file_size(size_ec);
    if (!size_ec) tree_bytes += size;
  }
  if (ec) {
    std::fprintf(stderr, "untold: check: cannot list '%s': %s\n", escaped(dir).c_str(), ec.message().c_str());
    return exit_io;
  }
  std::sort(paths.begin(), paths.end());
  std::map<std::string, mapped_file, std::less<>> open_files;
  const auto lookup = [&](std::string_view rel) -> std::optional<byte_span> {
    auto it = open_files.find(rel);
    if (it == open_files.end()) {
      auto f = mapped_file::open(fs::path(dir) / fs::path(std::string(rel)));
      if (!f) return std::nullopt;
      it = open_files.emplace(std::string(rel), std::move(*f)).first;
    }
    return it->second.bytes();
  };
  ua::open_options options = cli_options(deep);
  budget spend(options.limits, tree_bytes);
  options.budget = &spend;
  check_printer printer(dir, deep, as_json);
  const ua::check_report r = ua::check_files(paths, lookup, options, printer.sink());
  return printer.finish(paths.size(), r);
}

// ---- untold pack info FILE ------------------------------------------------------------

std::string percent(std::uint64_t part, std::uint64_t whole) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%5.1f%%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

int run_pack_info(const std::string& path, bool as_json) {
  auto file = mapped_file::open(path);
  if (!file) {
    std::fprintf(stderr, "untold: pack info: %s: %s\n", escaped(path).c_str(), file.error().describe().c_str());
    return exit_io;
  }
  auto p = ua::open_hpack(file->bytes(), cli_options());
  if (!p) {
    if (as_json) print(json{{"file", path}, {"valid", false}, {"error", error_json(p.error())}});
    else std::fprintf(stderr, "untold: pack info: %s: %s\n", escaped(path).c_str(), p.error().describe().c_str());
    return exit_invalid;
  }
  if (as_json) {
    json j = base(path, "assetc-hpack", file->bytes());
    j.update(hpack_summary(*p));
    j["entryTable"] = hpack_entries(*p);
    print(j);
    return exit_ok;
  }
  const ua::pack_layout l = p->layout();
  std::printf("%s: .hpack v%u, %zu entries, %llu bytes\n\nlayout\n", escaped(path).c_str(), ua::hpack_version, p->size(),
              static_cast<unsigned long long>(l.file));
  const std::pair<const char*, std::uint64_t> parts[] = {
      {"header", l.header}, {"toc", l.toc}, {"payload", l.payload}, {"padding", l.padding}};
  for (const auto& [name, bytes] : parts)
    std::printf("  %-8s %12llu  %s\n", name, static_cast<unsigned long long>(bytes), percent(bytes, l.file).c_str());
  std::printf("\nby kind\n");
  std::map<std::uint8_t, std::pair<std::size_t, std::uint64_t>> kinds;
  for (const ua::pack_entry& e : p->entries()) {
    kinds[e.kind].first += 1;
    kinds[e.kind].second += e.size;
  }
  for (const auto& [kind, v] : kinds)
    std::printf("  %-10s %6zu files %12llu bytes\n", std::string(ua::pack_kind_name(kind)).c_str(), v.first,
                static_cast<unsigned long long>(v.second));
  std::printf("\nentries\n  %-10s %12s %12s  path\n", "kind", "size", "offset");
  for (const ua::pack_entry& e : p->entries())
    std::printf("  %-10s %12llu %12llu  %s\n", std::string(ua::pack_kind_name(e.kind)).c_str(),
                static_cast<unsigned long long>(e.size), static_cast<unsigned long long>(e.offset),
                escaped(e.path).c_str());
  return exit_ok;
}

}  // namespace

void add_assetc_formats(std::vector<format_handler>& out) {
  out.push_back({"assetc-hmesh", "assetc mesh (.hmesh v2)", &has_magic<ua::hmesh_magic>, &hmesh_info,
                 [](const std::string& p, byte_span f, bool deep) { return validate_with<&ua::open_hmesh>(p, f, deep, "assetc-hmesh"); },
                 &hmesh_dump, nullptr});
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

void add_assetc_commands(CLI::App& app, int& exit_code) {
  struct check_args {
    std::string dir;
    bool deep = false;
    bool json = false;
  };
  auto c = std::make_shared<check_args>();
  CLI::App* check = app.add_subcommand("check", "Cross-file integrity of an assetc runtime directory (like `assetc check`)");
  check->add_option("DIR", c->dir, "the runtime directory (.hmesh, .hmat, .hman, .hanim, .ktx2 ...) or a .hpack of it")
      ->required();
  check->add_flag("--deep", c->deep, "also the value-level checks of every file");
  check->add_flag("--json", c->json, "print a JSON object");
  check->callback([c, &exit_code] { exit_code = run_check(c->dir, c->deep, c->json); });

  struct pack_args {
    std::string file;
    bool json = false;
  };
  auto p = std::make_shared<pack_args>();
  CLI::App* pack = app.add_subcommand("pack", "assetc .hpack bundles");
  pack->require_subcommand(1, 1);
  CLI::App* info = pack->add_subcommand("info", "Layout breakdown, per-kind summary and entry listing of a .hpack");
  info->add_option("FILE", p->file, "the .hpack")->required();
  info->add_flag("--json", p->json, "print a JSON object");
  info->callback([p, &exit_code] { exit_code = run_pack_info(p->file, p->json); });
}

}  // namespace untold::tools
