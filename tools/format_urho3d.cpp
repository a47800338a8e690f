// tools/format_urho3d.cpp - the urho3d formats in the CLI: magic recognition,
// info/validate/dump as JSON, the importer for cook, and the family's own
// subcommands (see formats.hpp, docs/urho3d.md).
//
//   untold pak list FILE [--json] [-q] [-v]
//   untold pak extract FILE [NAME...] [-o DIR] [--max-total-bytes N] [--json] [-q] [-v]
//   untold pak create DIR -o OUT.pak [--compress] [--level N] [--no-trailing-size] [--json] [-q] [-v]
// Messages, exit codes (0 ok, 1 invalid, 2 usage, 3 I/O) and -q/-v/--json
// come from cli_common.hpp, like every other command.
#include "formats.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <untold/source.hpp>
#include <untold/urho3d/urho3d.hpp>

#include "cli_common.hpp"
#include "inspect.hpp"

namespace untold::tools {
namespace {

namespace u3 = untold::urho3d;
namespace fs = std::filesystem;

using cli::exit_invalid;
using cli::exit_io;
using cli::exit_ok;

json floats(std::span<const float> v) {
  json a = json::array();
  for (float f : v) a.push_back(f);
  return a;
}

json base(const std::string& path, std::string_view format) { return json{{"file", path}, {"format", format}}; }

json invalid(json j, const error& e) {
  j["valid"] = false;
  j["error"] = error_json(e);
  return j;
}

/// The whole file, or nullopt (message with the system's reason printed).
std::optional<std::vector<std::byte>> read_all(const fs::path& path) {
  std::string message;
  json ignored;
  auto in = cli::input::load(path.string(), message, ignored);
  if (!in) {
    cli::complain(message);
    return std::nullopt;
  }
  return std::vector<std::byte>(in->bytes().begin(), in->bytes().end());
}

bool write_all(const fs::path& path, byte_span bytes) {
  std::string message;
  if (cli::write_output(path, bytes, message)) return true;
  cli::complain(message);
  return false;
}

// ---- model ---------------------------------------------------------------------------

json elements_json(const u3::vertex_buffer& vb) {
  json list = json::array();
  for (const u3::vertex_element& e : vb.elements)
    list.push_back(json{{"semantic", u3::name(e.semantic)}, {"index", e.index}, {"type", u3::name(e.type)},
                        {"offset", e.offset}});
  return list;
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
    const auto element = [](const u3::vertex_element& e) {
      return json{{"semantic", u3::name(e.semantic)}, {"index", e.index}, {"type", u3::name(e.type)}, {"offset", e.offset}};
    };
    return json{{"vertices", vb.vertex_count}, {"vertexSize", vb.vertex_size}, {"elementCount", vb.elements.size()},
                {"elements", first_items(std::span(vb.elements), element, cut)}};
  }, cut);
  j["indexBufferCount"] = m.index_buffers.size();
  j["indexBuffers"] = first_items(std::span(m.index_buffers), [](const u3::index_buffer& ib) {
    return json{{"indices", ib.index_count}, {"indexSize", ib.index_size}};
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
  json j = base(path, "urho3d-model");
  auto m = u3::open_model(file);
  if (!m) return invalid(j, m.error());
  j["valid"] = true;
  j.update(model_counts(*m));
  return j;
}

json model_validate(const std::string& path, byte_span file, bool deep) {
  json j = base(path, "urho3d-model");
  auto m = u3::open_model(file, {.deep_checks = deep});
  if (!m) return invalid(j, m.error());
  j["valid"] = true;
  j["deep"] = deep;
  return j;
}

json model_dump(const std::string& path, byte_span file) {
  json j = base(path, "urho3d-model");
  auto m = u3::open_model(file);
  if (!m) return invalid(j, m.error());
  j["valid"] = true;
  j["id"] = u3::model_id(m->kind);
  if (m->kind == u3::model_kind::umd3) j["version"] = m->version;
  json vbs = json::array();
  for (const u3::vertex_buffer& vb : m->vertex_buffers) {
    json v{{"vertices", vb.vertex_count}, {"vertexSize", vb.vertex_size}, {"elements", elements_json(vb)},
           {"morphRangeStart", vb.morph_range_start}, {"morphRangeCount", vb.morph_range_count}};
    if (m->kind == u3::model_kind::umdl) v["legacyMask"] = vb.legacy_mask;
    vbs.push_back(std::move(v));
  }
  j["vertexBuffers"] = vbs;
  json ibs = json::array();
  for (const u3::index_buffer& ib : m->index_buffers)
    ibs.push_back(json{{"indices", ib.index_count}, {"indexSize", ib.index_size}});
  j["indexBuffers"] = ibs;
  json geos = json::array();
  for (const u3::geometry& g : m->geometries) {
    json lods = json::array();
    for (const u3::lod_level& l : g.lods)
      lods.push_back(json{{"distance", l.distance}, {"primitive", u3::name(l.primitive)},
                          {"vertexBuffer", l.vertex_buffer}, {"indexBuffer", l.index_buffer},
                          {"indexStart", l.index_start}, {"indexCount", l.index_count}});
    geos.push_back(json{{"boneMapping", g.bone_mapping}, {"lods", lods}});
  }
  j["geometries"] = geos;
  json morphs = json::array();
  for (const u3::morph& mo : m->morphs) {
    json buffers = json::array();
    for (const u3::morph_buffer& mb : mo.buffers)
      buffers.push_back(json{{"vertexBuffer", mb.buffer}, {"mask", mb.mask}, {"vertices", mb.vertex_count}});
    json x{{"name", mo.name}, {"buffers", buffers}};
    if (m->has_morph_weights()) x["weight"] = mo.weight;
    morphs.push_back(std::move(x));
  }
  j["morphs"] = morphs;
  json bones = json::array();
  for (std::size_t i = 0; i < m->bones.size(); ++i) {
    const u3::bone& b = m->bones[i];
    json x{{"name", b.name},
           {"parent", b.is_root(static_cast<std::uint32_t>(i)) ? json(nullptr) : json(b.parent)},
           {"position", floats(b.position)},
           {"rotationWXYZ", floats(b.rotation)},
           {"scale", floats(b.scale)},
           {"offsetMatrix3x4", floats(b.offset_matrix)}};
    if ((b.collision_mask & u3::collision_sphere) != 0) x["radius"] = b.radius;
    if ((b.collision_mask & u3::collision_box) != 0) x["box"] = json{{"min", floats(b.box_min)}, {"max", floats(b.box_max)}};
    bones.push_back(std::move(x));
  }
  j["bones"] = bones;
  j["boundingBox"] = json{{"min", floats(m->bounds_min)}, {"max", floats(m->bounds_max)}};
  json centers = json::array();
  for (const auto& c : m->geometry_centers) centers.push_back(floats(c));
  j["geometryCenters"] = centers;
  return j;
}

result<convert::scene> model_import(const import_request& request) {
  std::vector<std::vector<std::byte>> files;
  for (const fs::path& p : request.animations) {
    auto bytes = read_all(p);
    if (!bytes) {
      error e = make_error(errc::io_read_failed);
      e.context.field = "animations";
      return e.with_subject(p.filename().string());
    }
    files.push_back(std::move(*bytes));
  }
  std::vector<byte_span> spans(files.begin(), files.end());
  auto s = u3::import_files(request.bytes, spans, request.input.stem().string(),
                            {.limits = request.limits, .budget = request.budget});
  if (!s) return s.error();
  return s;
}

// ---- animation -----------------------------------------------------------------------

json animation_info(const std::string& path, byte_span file) {
  json j = base(path, "urho3d-animation");
  auto a = u3::open_animation(file);
  if (!a) return invalid(j, a.error());
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
  json j = base(path, "urho3d-animation");
  auto a = u3::open_animation(file, {.deep_checks = deep});
  if (!a) return invalid(j, a.error());
  j["valid"] = true;
  j["deep"] = deep;
  return j;
}

json animation_dump(const std::string& path, byte_span file) {
  json j = animation_info(path, file);
  if (!j["valid"].get<bool>()) return j;
  auto a = u3::open_animation(file);
  json tracks = json::array();
  for (const u3::track& t : a->tracks) {
    json keys = json::array();
    for (std::uint32_t k = 0; k < t.keyframe_count; ++k) {
      const u3::keyframe key = t.key(k);
      json x{{"time", key.time}};
      if ((t.mask & u3::channel_position) != 0) x["position"] = floats(key.position);
      if ((t.mask & u3::channel_rotation) != 0) x["rotationWXYZ"] = floats(key.rotation);
      if ((t.mask & u3::channel_scale) != 0) x["scale"] = floats(key.scale);
      keys.push_back(std::move(x));
    }
    json x{{"name", t.name}, {"mask", t.mask}, {"keyframes", keys}};
    if (a->has_weights()) x["weight"] = t.weight;
    tracks.push_back(std::move(x));
  }
  j["tracks"] = tracks;
  json variants = json::array();
  for (const u3::variant_track& t : a->variant_tracks)
    variants.push_back(json{{"name", t.name}, {"type", t.type}, {"interpolation", t.interpolation},
                            {"tension", t.tension}, {"weight", t.weight}, {"keyframes", t.keyframe_count},
                            {"keyBytes", t.keys.size()}, {"tangentBytes", t.tangents.size()}});
  j["variantTracks"] = variants;
  return j;
}

// ---- package -------------------------------------------------------------------------

json package_info(const std::string& path, byte_span file) {
  json j = base(path, "urho3d-package");
  auto p = u3::open_package(file);
  if (!p) return invalid(j, p.error());
  j["valid"] = true;
  j["id"] = p->kind == u3::package_kind::ulz4 ? "ULZ4" : "UPAK";
  j["entries"] = p->entries.size();
  j["uncompressedBytes"] = p->total_uncompressed();
  j["checksum"] = p->checksum;
  j["trailingSize"] = p->has_trailing_size;
  return j;
}

json package_validate(const std::string& path, byte_span file, bool deep) {
  json j = base(path, "urho3d-package");
  // Checksums are part of validity: every entry is decoded and checked (deep or not).
  auto p = u3::open_package(file, {.deep_checks = true});
  if (!p) return invalid(j, p.error());
  j["valid"] = true;
  j["deep"] = deep;
  return j;
}

json package_dump(const std::string& path, byte_span file) {
  json j = package_info(path, file);
  if (!j["valid"].get<bool>()) return j;
  auto p = u3::open_package(file);
  json entries = json::array();
  for (const u3::package_entry& e : p->entries)
    entries.push_back(json{{"name", e.name}, {"offset", e.offset}, {"size", e.size}, {"storedSize", e.stored_size},
                           {"checksum", e.checksum}, {"blocks", e.blocks}});
  j["entryList"] = entries;
  return j;
}

// ---- shader and script ----------------------------------------------------------------

json shader_info(const std::string& path, byte_span file) {
  json j = base(path, "urho3d-shader");
  auto sh = u3::open_shader(file);
  if (!sh) return invalid(j, sh.error());
  j["valid"] = true;
  j["shaderType"] = sh->type == u3::shader_vertex ? "vertex" : "pixel";
  j["shaderModel"] = sh->model;
  j["parameters"] = sh->parameters.size();
  j["textureUnits"] = sh->texture_units.size();
  j["bytecodeBytes"] = sh->bytecode.size();
  return j;
}

json shader_validate(const std::string& path, byte_span file, bool deep) {
  json j = base(path, "urho3d-shader");
  auto sh = u3::open_shader(file);
  if (!sh) return invalid(j, sh.error());
  j["valid"] = true;
  j["deep"] = deep;
  return j;
}

json shader_dump(const std::string& path, byte_span file) {
  json j = shader_info(path, file);
  if (!j["valid"].get<bool>()) return j;
  auto sh = u3::open_shader(file);
  if (sh->model == 4) j["elementHash"] = sh->element_hash;
  json params = json::array();
  for (const u3::shader_parameter& p : sh->parameters) {
    if (sh->model == 4)
      params.push_back(json{{"name", p.name}, {"buffer", p.index}, {"offset", p.offset}, {"size", p.size}});
    else
      params.push_back(json{{"name", p.name}, {"register", p.index}, {"registers", p.register_count}});
  }
  j["parameterList"] = params;
  json units = json::array();
  for (const u3::texture_unit& u : sh->texture_units) units.push_back(json{{"name", u.name}, {"sampler", u.sampler}});
  j["textureUnitList"] = units;
  return j;
}

json script_info(const std::string& path, byte_span file) {
  json j = base(path, "urho3d-script");
  auto sc = u3::open_script(file);
  if (!sc) return invalid(j, sc.error());
  j["valid"] = true;
  j["bytecodeBytes"] = sc->bytecode.size();
  return j;
}
json script_validate(const std::string& path, byte_span file, bool deep) {
  json j = script_info(path, file);
  j["deep"] = deep;
  return j;
}

// ---- untold pak ----------------------------------------------------------------------

struct pak_args {
  std::string file;
  std::vector<std::string> names;
  std::string out_dir = ".";
  std::string source_dir;
  std::string output;
  bool compress = false;
  int level = 9;
  bool no_trailing_size = false;
  std::uint64_t max_total_bytes = 0;  // 0: the library's default (1 GiB)
  cli::common_flags flags;
};

void print_json(const json& j) { cli::print(to_text(j)); }

int pak_list(const pak_args& a) {
  auto bytes = read_all(a.file);
  if (!bytes) return exit_io;
  auto p = u3::open_package(*bytes);
  if (!p) {
    if (a.flags.json) print_json(invalid(base(a.file, "urho3d-package"), p.error()));
    else cli::complain(cli::quote_path(a.file) + ": " + p.error().describe());
    return exit_invalid;
  }
  if (a.flags.json) {
    print_json(package_dump(a.file, *bytes));
    return exit_ok;
  }
  std::printf("%s: %s, %zu entries, %llu bytes uncompressed\n", cli::escaped(a.file).c_str(),
              p->kind == u3::package_kind::ulz4 ? "ULZ4" : "UPAK", p->entries.size(),
              static_cast<unsigned long long>(p->total_uncompressed()));
  for (const u3::package_entry& e : p->entries)
    std::printf("%12u %12llu  %08x  %s\n", e.size, static_cast<unsigned long long>(e.stored_size), e.checksum,
                cli::escaped(e.name).c_str());
  return exit_ok;
}

// ---- untold pak extract: check everything, write into a temporary
// directory, move into place, never through a symbolic link -------------

/// An open file descriptor, closed on scope exit (the library's, source.hpp).
using descriptor = untold::detail::posix_fd;

/// Splits an entry name (a safe relative path: U3D-PAK-NAME) at its last '/'.
std::pair<std::string, std::string> split_name(std::string_view name) {
  const std::size_t slash = name.rfind('/');
  if (slash == std::string_view::npos) return {"", std::string(name)};
  return {std::string(name.substr(0, slash)), std::string(name.substr(slash + 1))};
}

/// The directory `relative` ('/'-separated, may be empty) under the open
/// directory `root`, each component opened with O_NOFOLLOW (a symbolic link
/// is never followed: ELOOP) and, with `create`, made when absent. An
/// invalid descriptor and errno on failure; `failed` names the component.
descriptor open_tree(int root, std::string_view relative, bool create, std::string& failed) {
  descriptor dir(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  std::size_t start = 0;
  while (dir.get() >= 0 && start < relative.size()) {
    const std::size_t slash = std::min(relative.find('/', start), relative.size());
    const std::string part(relative.substr(start, slash - start));
    failed = std::string(relative.substr(0, slash));
    constexpr int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int next = ::openat(dir.get(), part.c_str(), flags);
    if (next < 0 && errno == ENOENT && create && (::mkdirat(dir.get(), part.c_str(), 0777) == 0 || errno == EEXIST))
      next = ::openat(dir.get(), part.c_str(), flags);
    struct stat st {};
    if (next < 0 && errno == ENOTDIR && ::fstatat(dir.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode))
      errno = ELOOP;  // O_DIRECTORY reports a link as "not a directory": say what it is
    const int failure = errno;
    dir = descriptor(next);  // closes the parent
    errno = failure;
    start = slash + 1;
  }
  return dir;
}

/// "'out/a/b': is a symbolic link (not followed)" for a failed open_tree or leaf.
std::string refusal(const fs::path& out_dir, const std::string& where, int os_error) {
  const std::string path = (out_dir / where).string();
  if (os_error == ELOOP) return cli::quote_path(path) + ": is a symbolic link (pak extract never follows one)";
  return cli::quote_path(path) + ": " + std::strerror(os_error);
}

/// The output directory may hold each wanted entry: every existing
/// component of its directory is a directory (not a symbolic link), the
/// file itself absent or a regular file. Nothing is written. Empty: fine.
std::string check_targets(int out, const fs::path& out_dir, std::span<const u3::package_entry* const> entries) {
  for (const u3::package_entry* e : entries) {
    const auto [parent, leaf] = split_name(e->name);
    std::string failed;
    descriptor dir = open_tree(out, parent, false, failed);
    if (dir.get() < 0) {
      const int os_error = errno;
      if (os_error == ENOENT) continue;  // made when the entry moves in
      return refusal(out_dir, failed, os_error);
    }
    struct stat st {};
    if (::fstatat(dir.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      const int os_error = errno;
      if (os_error == ENOENT) continue;
      return refusal(out_dir, std::string(e->name), os_error);
    }
    if (S_ISLNK(st.st_mode)) return refusal(out_dir, std::string(e->name), ELOOP);
    if (!S_ISREG(st.st_mode)) return refusal(out_dir, std::string(e->name), S_ISDIR(st.st_mode) ? EISDIR : EEXIST);
  }
  return {};
}

/// Writes `data` as the new file `leaf` in `dir` (O_EXCL, O_NOFOLLOW);
/// false with errno on failure.
bool write_new_file(int dir, const std::string& leaf, byte_span data) {
  const int fd = ::openat(dir, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  for (std::size_t done = 0; done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int failure = n < 0 ? errno : EIO;
      ::close(fd);
      errno = failure;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0;  // a deferred write error shows here
}

int pak_extract(const pak_args& a) {
  auto bytes = read_all(a.file);
  if (!bytes) return exit_io;
  json report = base(a.file, "urho3d-package");
  const auto fail = [&](const error& e) {
    if (a.flags.json) print_json(invalid(report, e));
    else cli::complain(cli::quote_path(a.file) + ": " + e.describe());
    return exit_invalid;
  };
  const auto io_fail = [&](const std::string& message) {
    cli::complain(message);
    return exit_io;
  };
  // The limits `validate` applies; --max-total-bytes raises them on purpose.
  untold::limits lim;
  if (a.max_total_bytes != 0) {
    lim.max_total_bytes = a.max_total_bytes;
    lim.max_chunk_bytes = std::max(lim.max_chunk_bytes, a.max_total_bytes);
    lim.memory_floor = std::max(lim.memory_floor, a.max_total_bytes);  // one entry is held at a time
  }
  // 1. The whole package, before anything is written: structure and names,
  // every entry's blocks and checksum, the package checksum, the limits.
  untold::budget budget(lim, bytes->size());
  auto p = u3::open_package(*bytes, {.limits = lim, .deep_checks = true, .budget = &budget});
  if (!p) return fail(p.error());
  std::vector<const u3::package_entry*> wanted;
  if (a.names.empty()) {
    for (const u3::package_entry& e : p->entries) wanted.push_back(&e);
  } else {
    for (const std::string& n : a.names) {
      const u3::package_entry* e = p->find(n);
      if (e == nullptr) return fail(make_error(errc::invalid_argument).at_field("NAME").with_subject(n));
      if (std::find(wanted.begin(), wanted.end(), e) == wanted.end()) wanted.push_back(e);
    }
  }
  if (auto s = u3::check_extract_paths(wanted); !s) return fail(s.error());

  // 2. The output directory (the user's path is followed; nothing below it is).
  const fs::path out_dir(a.out_dir);
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return io_fail("cannot create " + cli::quote_path(out_dir.string()) + ": " + ec.message());
  descriptor out(::open(out_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (const int os_error = errno; out.get() < 0)
    return io_fail("cannot open " + cli::quote_path(out_dir.string()) + ": " + std::strerror(os_error));
  if (std::string problem = check_targets(out.get(), out_dir, wanted); !problem.empty())
    return io_fail("cannot extract into " + problem);

  // 3. Every entry into a fresh temporary directory inside the output one:
  // a failure leaves the output directory as it was.
  std::string pattern = (out_dir / ".untold-extract-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    const int os_error = errno;
    return io_fail("cannot create a temporary directory in " + cli::quote_path(out_dir.string()) + ": " +
                   std::strerror(os_error));
  }
  const fs::path temp(pattern);
  struct cleanup {
    fs::path dir;
    ~cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);  // does not follow symbolic links
    }
  } remove_temp{temp};
  descriptor staging(::open(temp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (const int os_error = errno; staging.get() < 0)
    return io_fail("cannot open " + cli::quote_path(temp.string()) + ": " + std::strerror(os_error));
  std::vector<std::byte> data;
  json extracted = json::array();
  for (const u3::package_entry* e : wanted) {
    if (auto s = u3::extract_entry(*p, *e, data, lim); !s) return fail(s.error());  // verified above: not expected
    const auto [parent, leaf] = split_name(e->name);
    std::string failed;
    descriptor dir = open_tree(staging.get(), parent, true, failed);
    if (dir.get() < 0 || !write_new_file(dir.get(), leaf, data)) {
      const int os_error = errno;
      return io_fail("cannot write " + cli::quote_path((temp / std::string(e->name)).string()) + ": " +
                     std::strerror(os_error));
    }
    extracted.push_back(json{{"name", std::string(e->name)}, {"path", (out_dir / std::string(e->name)).string()},
                             {"size", data.size()}});
  }
  // 4. Move each file into place: directories opened without following a
  // link, the file renamed over a regular file of the same name.
  for (const u3::package_entry* e : wanted) {
    const auto [parent, leaf] = split_name(e->name);
    std::string failed;
    descriptor to = open_tree(out.get(), parent, true, failed);
    if (to.get() < 0) {
      const int os_error = errno;
      return io_fail("cannot extract into " + refusal(out_dir, failed, os_error));
    }
    descriptor from = open_tree(staging.get(), parent, false, failed);
    if (from.get() < 0 || ::renameat(from.get(), leaf.c_str(), to.get(), leaf.c_str()) != 0) {
      const int os_error = errno;
      return io_fail("cannot move " + cli::quote_path((out_dir / std::string(e->name)).string()) + " into place: " +
                     std::strerror(os_error));
    }
    const std::string target = (out_dir / std::string(e->name)).string();
    if (a.flags.verbose) cli::complain("extracted " + cli::quote_path(target));
    if (!a.flags.quiet && !a.flags.json) std::printf("%s\n", cli::escaped(target).c_str());
  }
  if (a.flags.json) {
    report["valid"] = true;
    report["extracted"] = std::move(extracted);
    print_json(report);
  }
  return exit_ok;
}

int pak_create(const pak_args& a) {
  std::error_code ec;
  if (!fs::is_directory(a.source_dir, ec)) {
    cli::complain("cannot read " + cli::quote_path(a.source_dir) + ": " +
                  (ec ? ec.message() : std::string(fs::exists(a.source_dir) ? "Not a directory" : "No such file or directory")));
    return exit_io;
  }
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(a.source_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file()) names.push_back(fs::relative(it->path(), a.source_dir).generic_string());
  if (ec) {
    cli::complain("cannot list " + cli::quote_path(a.source_dir) + ": " + ec.message());
    return exit_io;
  }
  std::sort(names.begin(), names.end());  // deterministic order, whatever the file system
  std::vector<std::vector<std::byte>> contents;
  contents.reserve(names.size());
  for (const std::string& n : names) {
    auto bytes = read_all(fs::path(a.source_dir) / n);
    if (!bytes) return exit_io;
    contents.push_back(std::move(*bytes));
  }
  std::vector<u3::package_input> inputs;
  for (std::size_t i = 0; i < names.size(); ++i) inputs.push_back({names[i], contents[i]});
  auto pak = u3::write_package(inputs, {.compress = a.compress, .level = a.level, .trailing_size = !a.no_trailing_size});
  if (!pak) {
    if (a.flags.json) print_json(invalid(base(a.output, "urho3d-package"), pak.error()));
    else cli::complain(pak.error().describe());
    return exit_invalid;
  }
  if (!write_all(a.output, *pak)) return exit_io;
  if (a.flags.json) {
    json j = base(a.output, "urho3d-package");
    j["valid"] = true;
    j["entries"] = names.size();
    j["bytes"] = pak->size();
    j["compressed"] = a.compress;
    print_json(j);
  } else if (!a.flags.quiet) {
    std::printf("%s: %zu entries, %zu bytes\n", cli::escaped(a.output).c_str(), names.size(), pak->size());
  }
  return exit_ok;
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
                 script_info, script_validate, script_info, nullptr});
}

void add_urho3d_commands(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<pak_args>();
  CLI::App* pak = app.add_subcommand("pak", "List, extract or create Urho3D packages (.pak: UPAK, ULZ4)");
  pak->require_subcommand(1, 1);

  CLI::App* list = pak->add_subcommand("list", "List a package's entries (size, stored size, SDBM checksum, name)");
  list->add_option("FILE", args->file, "the .pak")->required();
  cli::add_common_flags(*list, args->flags, "print the package as a JSON object");
  list->callback([args, &exit_code] { exit_code = pak_list(*args); });

  CLI::App* extract = pak->add_subcommand("extract", "Extract entries (all, or the named ones), checking checksums");
  extract->add_option("FILE", args->file, "the .pak")->required();
  extract->add_option("NAME", args->names, "entry names (default: every entry)");
  extract->add_option("-o,--output", args->out_dir, "directory to extract into (default: .)");
  extract->add_option("--max-total-bytes", args->max_total_bytes,
                      "allow the entries to decode to this many bytes in total (default 1 GiB, as validate; "
                      "also lifts the per-entry cap)")
      ->check(CLI::PositiveNumber);
  cli::add_common_flags(*extract, args->flags, "print {file, extracted: [{name, path, size}]} as JSON");
  extract->callback([args, &exit_code] { exit_code = pak_extract(*args); });

  CLI::App* create = pak->add_subcommand("create", "Pack a directory (entries sorted by path)");
  create->add_option("DIR", args->source_dir, "the directory to pack")->required();
  create->add_option("-o,--output", args->output, "the .pak to write")->required();
  create->add_flag("--compress", args->compress, "ULZ4: LZ4HC blocks of 32 KiB");
  create->add_option("--level", args->level, "LZ4HC level (default 9, like Urho3D's PackageTool)")->check(CLI::Range(1, 12));
  create->add_flag("--no-trailing-size", args->no_trailing_size, "do not append the package size");
  cli::add_common_flags(*create, args->flags, "print {file, entries, bytes, compressed} as JSON");
  create->callback([args, &exit_code] { exit_code = pak_create(*args); });
}

}  // namespace untold::tools
