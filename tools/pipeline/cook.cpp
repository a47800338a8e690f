// tools/pipeline/cook.cpp - assimp or a foreign importer -> neutral scene -> .untold (see cook.hpp).
#include "cook.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <utility>

#include <meshoptimizer.h>

#include <untold/budget.hpp>
#include <untold/convert/to_untold.hpp>
#include <untold/reader.hpp>
#include <untold/source.hpp>

#include "files.hpp"
#include "formats.hpp"
#include "image_info.hpp"
#include "import_model.hpp"
#include "inspect.hpp"
#include "simplify.hpp"

namespace fs = std::filesystem;

namespace untold::tools {

bool portable_relative_uri(std::string_view uri) {
  if (uri.empty() || uri.front() == '/' || uri.find('\\') != std::string_view::npos ||
      uri.find(':') != std::string_view::npos)
    return false;
  for (const fs::path& part : fs::path(std::string(uri)))
    if (part == "..") return false;
  return true;
}

namespace {

using namespace untold::convert;

// ---- geometry ------------------------------------------------------------------------

/// v (components per vertex) reordered by `remap` (old -> new, ~0u = dropped).
template <class T>
void remap_stream(std::vector<T>& v, std::size_t components, const std::vector<unsigned>& remap, std::size_t unique) {
  if (v.empty()) return;
  std::vector<T> out(unique * components);
  for (std::size_t old = 0; old < remap.size(); ++old) {
    if (remap[old] == ~0u) continue;
    std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(old * components), components,
                out.begin() + static_cast<std::ptrdiff_t>(std::size_t{remap[old]} * components));
  }
  v = std::move(out);
}

// Each triangle rotated (winding kept) the way meshoptimizer's index codec
// hands it back, so the meshopt compressions store every cooked mesh with
// the triangle codec (mesh_codec.hpp keeps indices exact: a triangle it
// would rotate sends the whole mesh to the weaker sequence codec), and a
// file cooked with any --compress holds the same indices. The codec's
// output is a fixed point: rotating again changes nothing.
void rotate_for_index_codec(std::vector<std::uint32_t>& indices, std::size_t vertex_count) {
  if (indices.empty() || indices.size() % 3 != 0) return;
  std::vector<unsigned char> encoded(meshopt_encodeIndexBufferBound(indices.size(), vertex_count));
  encoded.resize(meshopt_encodeIndexBuffer(encoded.data(), encoded.size(), indices.data(), indices.size()));
  std::vector<std::uint32_t> decoded(indices.size());
  if (meshopt_decodeIndexBuffer(decoded.data(), decoded.size(), sizeof(std::uint32_t), encoded.data(), encoded.size()) == 0)
    indices = std::move(decoded);
}

/// Reorders `indices` (a triangle list over `vertex_count` vertices) for
/// the vertex cache in `order`'s flavour; mesh_order::source leaves them.
void order_triangles(std::vector<std::uint32_t>& indices, std::size_t vertex_count, mesh_order order) {
  if (indices.empty()) return;
  if (order == mesh_order::vertex_cache)
    meshopt_optimizeVertexCache(indices.data(), indices.data(), indices.size(), vertex_count);
  else if (order == mesh_order::compression)
    meshopt_optimizeVertexCacheStrip(indices.data(), indices.data(), indices.size(), vertex_count);
}

}  // namespace

std::optional<mesh_order> mesh_order_named(std::string_view name) {
  if (name == "cache") return mesh_order::vertex_cache;
  if (name == "size") return mesh_order::compression;
  if (name == "source") return mesh_order::source;
  return std::nullopt;
}

void optimize_mesh(mesh& m, mesh_order order) {
  const bool cache = order != mesh_order::source;
  if (m.primitive != topology::triangle_list) return;
  const std::size_t count = m.vertex_count();
  if (m.indices.empty()) {
    m.indices.resize(count / 3 * 3);
    for (std::size_t i = 0; i < m.indices.size(); ++i) m.indices[i] = static_cast<std::uint32_t>(i);
  }
  order_triangles(m.indices, count, order);
  std::vector<unsigned> remap(count, ~0u);
  std::size_t unique = 0;
  if (cache) {
    unique = meshopt_optimizeVertexFetchRemap(remap.data(), m.indices.data(), m.indices.size(), count);
  } else {
    std::vector<char> used(count, 0);
    for (const std::uint32_t i : m.indices) used[i] = 1;
    for (const lod_level& l : m.lods)
      for (const std::uint32_t i : l.indices) used[i] = 1;
    for (std::size_t v = 0; v < count; ++v)
      if (used[v]) remap[v] = static_cast<unsigned>(unique++);
    if (unique == count) return;
  }
  // LOD levels may use vertices LOD0 does not (never the case for levels
  // simplified from LOD0, but a source may carry its own): keep them, last.
  for (const lod_level& l : m.lods)
    for (const std::uint32_t i : l.indices)
      if (remap[i] == ~0u) remap[i] = static_cast<unsigned>(unique++);
  for (std::uint32_t& i : m.indices) i = remap[i];
  for (lod_level& l : m.lods)
    for (std::uint32_t& i : l.indices) i = remap[i];
  remap_stream(m.positions, 3, remap, unique);
  remap_stream(m.normals, 3, remap, unique);
  remap_stream(m.tangents, 4, remap, unique);
  remap_stream(m.uv0, 2, remap, unique);
  remap_stream(m.uv1, 2, remap, unique);
  for (auto& uv : m.extra_uvs) remap_stream(uv, 2, remap, unique);
  remap_stream(m.colors, 4, remap, unique);
  remap_stream(m.joints, 1, remap, unique);
  remap_stream(m.weights, 1, remap, unique);
  for (morph_target& t : m.morphs) {
    remap_stream(t.position_deltas, 3, remap, unique);
    remap_stream(t.normal_deltas, 3, remap, unique);
    remap_stream(t.tangent_deltas, 3, remap, unique);
  }
  if (cache) rotate_for_index_codec(m.indices, unique);
}

namespace {

// ---- textures ------------------------------------------------------------------------

/// A file the cook writes once nothing can fail any more.
struct pending_file {
  fs::path path;
  std::vector<std::byte> bytes;  // contents, or ...
  fs::path copy_from;            // ... a file to copy
};

std::string image_extension(std::span<const std::byte> bytes, texture_format format) {
  const auto starts = [&](std::initializer_list<unsigned> magic) {
    if (bytes.size() < magic.size()) return false;
    std::size_t i = 0;
    for (const unsigned b : magic)
      if (std::to_integer<unsigned>(bytes[i++]) != b) return false;
    return true;
  };
  if (starts({0x89, 'P', 'N', 'G'})) return "png";
  if (starts({0xFF, 0xD8, 0xFF})) return "jpg";
  if (starts({'K', 'T', 'X'}) || starts({0xAB, 'K', 'T', 'X'})) return "ktx2";
  if (starts({'D', 'D', 'S', ' '})) return "dds";
  if (starts({'R', 'I', 'F', 'F'})) return "webp";
  // import_assimp stores raw texels as a 32-bit TGA.
  return format == texture_format::rgba8 ? "tga" : "bin";
}

/// Removes the textures `keep` marks false; material slots that used them are cleared.
void remove_textures(scene& s, const std::vector<char>& keep) {
  std::vector<std::uint32_t> index(s.textures.size(), no_ref);
  std::vector<texture> kept;
  for (std::size_t i = 0; i < s.textures.size(); ++i) {
    if (!keep[i]) continue;
    index[i] = static_cast<std::uint32_t>(kept.size());
    kept.push_back(std::move(s.textures[i]));
  }
  s.textures = std::move(kept);
  for (material& m : s.materials) {
    for (texture_slot* t : {&m.base_color_texture, &m.metallic_roughness_texture, &m.normal_texture,
                            &m.occlusion_texture, &m.emissive_texture})
      if (t->used()) t->texture = index[t->texture];
    std::erase_if(m.other_textures, [&](const auto& o) { return index[o.second] == no_ref; });
    for (auto& o : m.other_textures) o.second = index[o.second];
  }
}

/// "texture 'name'" or "texture '#index'" for report entries and warnings.
std::string texture_where(const texture& t, std::size_t index) {
  // Appended, not "#" + std::to_string(i): that trips GCC 12's -Wrestrict at -O3 (a false positive).
  std::string where = "texture '";
  if (t.name.empty())
    where.append("#").append(std::to_string(index));
  else
    where.append(t.name);
  where.append("'");
  return where;
}

/// cook_options::texture_compression: every image that can be read and
/// decoded becomes KTX2 bytes held as an embedded image, which
/// place_textures then writes next to the output (or into it). False, with
/// r.error set, when the encoder does not run.
bool compress_textures(scene& s, const cook_options& options, cook_report& r) {
  std::string problem;
  const std::unique_ptr<texture_encoder> encoder = make_basisu_encoder(options.basisu, *options.texture_compression, problem);
  if (encoder == nullptr) {
    r.failed(problem);
    return false;
  }
  std::vector<char> normal_map(s.textures.size(), 0);
  for (const material& m : s.materials)
    if (m.normal_texture.used() && m.normal_texture.texture < s.textures.size()) normal_map[m.normal_texture.texture] = 1;
  const char* codec = *options.texture_compression == basis_codec::uastc ? "UASTC" : "ETC1S";
  for (std::size_t i = 0; i < s.textures.size(); ++i) {
    texture& t = s.textures[i];
    const std::string where = texture_where(t, i);
    std::vector<std::byte> source = t.embedded;
    if (source.empty()) {
      if (t.uri.empty()) continue;  // place_textures reports it
      auto mapped = mapped_file::open(texture_file(options.input, t));
      if (!mapped) continue;  // place_textures warns that it is missing
      source.assign(mapped->bytes().begin(), mapped->bytes().end());
    }
    rgba8_image image;
    if (auto e = decode_image(source, image)) {
      r.warnings.push_back(where + " not compressed (" + *e + "); kept as it is");
      continue;
    }
    const texture_mode mode = t.srgb ? texture_mode::color : normal_map[i] ? texture_mode::normal : texture_mode::linear_color;
    std::vector<std::byte> ktx;
    if (auto e = encoder->encode(image, t.srgb, mode, ktx)) {
      r.failed(escaped(options.input.string()) + ": " + where + ": " + *e);
      return false;
    }
    ktx2_info info;
    (void)check_ktx2(ktx, &info);  // the encoder checked it
    t.embedded = std::move(ktx);
    t.format = texture_format::unknown;  // a Basis Universal KTX2, transcoded by the engine
    t.width = info.width;
    t.height = info.height;
    t.mip_count = info.levels;
    r.conversion.changed("texture", where,
                         std::string("encoded as ") + codec + " KTX2 with " + std::to_string(info.levels) +
                             " mip levels by " + std::string(encoder->name()) + " (lossy block compression)");
  }
  return true;
}

/// Gives every texture a portable URI relative to the output: embedded
/// images become files next to it, image files are referenced where they
/// are or copied next to it. What cannot be referenced is removed, reported.
void place_textures(scene& s, const cook_options& options, cook_report& r, std::vector<pending_file>& files) {
  const fs::path output_dir = fs::absolute(options.output).parent_path().lexically_normal();
  const std::string stem = options.output.stem().string();
  std::set<std::string> taken;  // URIs given out (copies and embedded images)
  const auto unique_name = [&](std::string base, const std::string& ext) {
    std::string name = base + ext;
    for (int n = 1; taken.count(name) != 0; ++n) name = base + "_" + std::to_string(n) + ext;
    taken.insert(name);
    return name;
  };
  std::vector<char> keep(s.textures.size(), 1);
  std::map<fs::path, std::string> copied;  // source file -> its URI
  for (std::size_t i = 0; i < s.textures.size(); ++i) {
    texture& t = s.textures[i];
    const std::string where = texture_where(t, i);
    if (!t.embedded.empty()) {
      const std::string ext = image_extension(t.embedded, t.format);
      t.uri = unique_name(stem + "_tex" + std::to_string(i), "." + ext);
      if (t.format == texture_format::unknown) t.format = format_from_extension("." + ext);
      if (auto size = sniff_image_size(t.embedded)) {
        t.width = size->width;
        t.height = size->height;
        t.mip_count = 1;
      }
      if (options.embed_textures) continue;  // to_untold stores the bytes (embed_images)
      files.push_back({output_dir / t.uri, std::move(t.embedded), {}});
      t.embedded.clear();
      continue;
    }
    if (t.uri.empty()) {
      keep[i] = 0;
      r.conversion.dropped("texture", where, "it names no image");
      continue;
    }
    const fs::path file = texture_file(options.input, t);
    std::error_code ec;
    const bool exists = fs::is_regular_file(file, ec);
    if (!exists) r.warnings.push_back("image " + escaped(t.uri) + " not found (looked for " + escaped(file.string()) + ")");
    if (exists) {
      // The header's size, and its format when the extension does not say.
      if (auto size = sniff_image_size(file)) {
        t.width = size->width;
        t.height = size->height;
        t.mip_count = 1;
      }
    }
    // --copy-textures and --embed: one normalised name per source file; true
    // when the file already has one (copied or stored once).
    const auto name_next_to_output = [&]() {
      const fs::path absolute = fs::absolute(file, ec).lexically_normal();
      if (auto it = copied.find(absolute); it != copied.end()) {
        t.uri = it->second;
        return true;
      }
      std::string uri = unique_name(sanitized_utf8(file.stem().string()), sanitized_utf8(file.extension().string()));
      if (!portable_relative_uri(uri)) uri = unique_name("image" + std::to_string(i), file.extension().string());
      copied.emplace(absolute, uri);
      t.uri = uri;
      return false;
    };
    if (options.embed_textures && exists) {
      auto mapped = mapped_file::open(file);
      if (!mapped) {
        r.warnings.push_back("image " + escaped(t.uri) + " cannot be read (" + escaped(file.string()) +
                             "): " + mapped.error().describe());
      } else if (!mapped->bytes().empty()) {  // an empty file stays a reference, like a missing one
        t.embedded.assign(mapped->bytes().begin(), mapped->bytes().end());
        (void)name_next_to_output();  // the same file twice: the same image in the chunk
        continue;
      }
    }
    if (options.copy_textures && exists) {
      if (!name_next_to_output() && !fs::equivalent(file, output_dir / t.uri, ec))
        files.push_back({output_dir / t.uri, {}, file});
      continue;
    }
    const fs::path absolute = fs::absolute(file, ec).lexically_normal();
    const std::string relative = absolute.lexically_relative(output_dir).generic_string();
    if (!portable_relative_uri(relative)) {
      keep[i] = 0;
      r.conversion.dropped("texture reference", where,
                           "its URI '" + relative + "' would leave the output directory (--copy-textures copies the image next to the output)");
      continue;
    }
    t.uri = sanitized_utf8(relative);
    taken.insert(t.uri);
  }
  if (std::find(keep.begin(), keep.end(), 0) != keep.end()) remove_textures(s, keep);
}

}  // namespace

fs::path sibling(const fs::path& output, const std::string& suffix) {
  fs::path p = output;
  p.replace_filename(output.stem().string() + "." + suffix + output.extension().string());
  return p;
}

bool write_bytes(const fs::path& path, std::span<const std::byte> bytes, cook_report& r) {
  if (auto failed = write_output(path, bytes)) {
    r.io_failure = true;
    r.error = std::move(failed->message);
    return false;
  }
  r.written.push_back(path);
  return true;
}

/// The --strict failure: the conversion dropped something.
std::string strict_refusal(const fs::path& input, const conversion_report& report) {
  return escaped(input.string()) + ": --strict: the conversion drops content (" +
         std::to_string(report.count(report_entry::kind::dropped)) +
         " dropped entries in the report); nothing written";
}

void count_output(cook_report& r, std::span<const std::byte> file) {
  auto a = untold::open(file);
  if (!a) return;
  r.entities = static_cast<std::uint32_t>(a->entities().size());
  r.meshes = static_cast<std::uint32_t>(a->meshes().size());
  r.materials = static_cast<std::uint32_t>(a->materials().size());
  r.textures = static_cast<std::uint32_t>(a->textures().size());
  for (const mesh_record& m : a->meshes()) {
    r.vertices += m.vertex_count;
    r.triangles += m.index_count / 3;
  }
}

cook_report cook(const cook_options& options) {
  cook_report r;
  const auto fail = [&](std::string message) {
    r.error = std::move(message);
    return r;
  };
  const auto progress = [&](std::string_view stage, float fraction) {
    if (options.progress) options.progress(stage, fraction);
  };
  if (options.output.empty()) return fail("no output path");

  progress("import", 0);
  // One budget for the input, shared by the importer (the glTF importer
  // charges it; assimp allocates on its own) and the writer.
  std::error_code size_error;
  const std::uintmax_t input_bytes = fs::file_size(options.input, size_error);
  untold::budget budget(untold::limits{}, size_error ? 0 : input_bytes);
  model_import_result imported = import_model(options.input, {.budget = &budget});
  progress("import", 1);
  // assimp's message may quote the file's own bytes: escaped like a name.
  if (!imported) return fail(imported.error.find("cannot import") != std::string::npos
                                 ? escaped(imported.error)
                                 : escaped(options.input.string()) + ": cannot import: " + escaped(imported.error));
  scene& s = imported.scene;
  r.conversion = std::move(s.report);
  s.report = {};

  progress("convert", 0);
  std::vector<pending_file> files;
  if (options.texture_compression && options.animations != cook_animations::only && !compress_textures(s, options, r))
    return r;
  if (options.animations != cook_animations::only) place_textures(s, options, r, files);
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    mesh& m = s.meshes[i];
    optimize_mesh(m, options.order);
    if (options.lod_count > 0 && m.primitive == topology::triangle_list) {
      lod_options lod;
      lod.ratios.clear();
      for (std::uint32_t k = 1; k <= options.lod_count; ++k) lod.ratios.push_back(1.0f / static_cast<float>(1u << k));
      const lod_summary summary = generate_lods(m, lod);
      r.conversion.info("LOD levels", "mesh '" + m.name + "'", "did not reduce the triangle count; not written",
                        summary.dropped);
      if (options.order != mesh_order::source)
        for (lod_level& l : m.lods) {
          order_triangles(l.indices, m.vertex_count(), options.order);
          rotate_for_index_codec(l.indices, m.vertex_count());
        }
    }
    progress("convert", static_cast<float>(i + 1) / static_cast<float>(s.meshes.size()));
  }

  to_untold_options o;
  o.budget = &budget;
  o.write.compression = options.compression;
  o.write.vertex_layout = options.vertex_layout;
  o.embed_images = options.embed_textures;
  o.uv_wrap = options.uv_wrap;
  if (options.format_version != 0) o.write.format_version = options.format_version;
  o.content = options.animations == cook_animations::only    ? untold_content::animations_only
              : options.animations == cook_animations::split ? untold_content::without_animations
                                                             : untold_content::everything;
  auto out = to_untold(s, o, r.conversion);
  if (!out) return fail(escaped(options.input.string()) + ": cannot convert: " + out.error().describe());
  std::vector<std::pair<fs::path, std::vector<std::byte>>> outputs;
  outputs.emplace_back(options.output, std::move(out->file));
  for (std::size_t k = 0; k < out->lod_files.size(); ++k)
    outputs.emplace_back(sibling(options.output, "lod" + std::to_string(k + 1)), std::move(out->lod_files[k]));
  if (options.animations == cook_animations::split) {
    to_untold_options a = o;
    a.content = untold_content::animations_only;
    for (std::size_t k = 0; k < s.animations.size(); ++k) {
      scene one;  // the nodes and skeletons the channels address, and one clip
      one.nodes = s.nodes;
      for (node& n : one.nodes) n.meshes.clear();
      one.skeletons = s.skeletons;
      one.animations = {s.animations[k]};
      conversion_report again;  // the clip's losses are in r.conversion already
      auto clip = to_untold(one, a, again);
      if (!clip) return fail(escaped(options.input.string()) + ": cannot convert clip " + std::to_string(k) + ": " +
                             clip.error().describe());
      outputs.emplace_back(sibling(options.output, "clip" + std::to_string(k)), std::move(clip->file));
    }
  }
  progress("convert", 1);

  if (options.strict && r.conversion.lost_anything()) return fail(strict_refusal(options.input, r.conversion));

  progress("write", 0);
  std::error_code ec;
  if (const fs::path dir = options.output.parent_path(); !dir.empty() && !fs::is_directory(dir, ec)) {
    fs::create_directories(dir, ec);  // the CLI asks for --mkdir before it gets here
    if (ec) {
      r.io_failure = true;
      return fail("cannot create " + escaped(dir.string()) + ": " + ec.message());
    }
  }
  for (const auto& [path, bytes] : outputs)
    if (!write_bytes(path, bytes, r)) return r;
  for (const pending_file& f : files) {
    fs::create_directories(f.path.parent_path(), ec);
    if (f.copy_from.empty()) {
      if (!write_bytes(f.path, f.bytes, r)) return r;
      continue;
    }
    if (auto failed = copy_output(f.copy_from, f.path)) {
      r.io_failure = true;
      return fail(std::move(failed->message));
    }
    r.written.push_back(f.path);
  }
  progress("write", 1);
  r.bytes = outputs.front().second.size();
  count_output(r, outputs.front().second);
  if (r.triangles == 0 && options.animations != cook_animations::only)
    r.warnings.push_back("the scene has no triangle geometry");
  return r;
}

cook_report cook_foreign(const format_handler& format, byte_span input, const std::vector<fs::path>& animation_files,
                         const cook_options& options) {
  cook_report r;
  const auto fail = [&](std::string message, bool io_failure = false) {
    r.error = std::move(message);
    r.io_failure = io_failure;
    return r;
  };
  const auto progress = [&](std::string_view stage, float fraction) {
    if (options.progress) options.progress(stage, fraction);
  };
  if (options.output.empty()) return fail("no output path");
  if (options.lod_count != 0)
    r.warnings.push_back("--lod applies to assimp inputs; " + std::string(format.name) + " LOD levels come from the file");
  if (options.copy_textures) r.warnings.push_back("--copy-textures applies to assimp inputs");
  if (options.order != mesh_order::vertex_cache) r.warnings.push_back("--mesh-order applies to assimp inputs");
  if (options.animations == cook_animations::split) r.warnings.push_back("--split-animations applies to assimp inputs");
  if (options.texture_compression) r.warnings.push_back("--texture-compress applies to assimp inputs");

  progress("import", 0);
  import_request request;
  request.input = options.input;
  request.bytes = input;
  request.animations = animation_files;
  // One budget for every input (the model and its clip files), shared by
  // the importer and the writer (untold/budget.hpp).
  std::uint64_t input_bytes = input.size();
  for (const fs::path& a : animation_files) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(a, ec);
    if (!ec) input_bytes += size;
  }
  untold::budget budget(request.limits, input_bytes);
  request.budget = &budget;
  auto imported = format.import(request);
  progress("import", 1);
  if (!imported) {
    // A clip file the importer could not read is an I/O failure.
    const errc code = imported.error().code;
    return fail(escaped(options.input.string()) + ": cannot import: " + imported.error().describe(),
                code == errc::io_open_failed || code == errc::io_read_failed);
  }
  scene& s = *imported;
  r.conversion = std::move(s.report);
  s.report = {};

  progress("convert", 0);
  to_untold_options o;
  o.write.compression = options.compression;
  o.write.vertex_layout = options.vertex_layout;
  if (options.format_version != 0) o.write.format_version = options.format_version;
  if (options.animations == cook_animations::only) o.content = untold_content::animations_only;
  o.embed_images = options.embed_textures;
  o.uv_wrap = options.uv_wrap;
  o.limits = request.limits;
  o.budget = &budget;
  auto out = to_untold(s, o, r.conversion);
  progress("convert", 1);
  if (!out) return fail(escaped(options.input.string()) + ": cannot convert: " + out.error().describe());
  if (options.strict && r.conversion.lost_anything()) return fail(strict_refusal(options.input, r.conversion));

  progress("write", 0);
  if (!write_bytes(options.output, out->file, r)) return r;
  for (std::size_t k = 0; k < out->lod_files.size(); ++k)
    if (!write_bytes(sibling(options.output, "lod" + std::to_string(k + 1)), out->lod_files[k], r)) return r;
  // Embedded images have no file of their own: written where the URI says
  // (with embed_textures they are in the output already).
  for (const texture& t : s.textures) {
    if (t.embedded.empty() || options.embed_textures) continue;
    if (!portable_relative_uri(t.uri)) {
      r.warnings.push_back("embedded image '" + escaped(t.name) + "' not written: its URI '" + escaped(t.uri) +
                           "' leaves the output directory");
      continue;
    }
    const fs::path path = options.output.parent_path() / fs::path(t.uri);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);  // a failure shows in the write
    if (!write_bytes(path, t.embedded, r)) return r;
  }
  progress("write", 1);
  r.bytes = out->file.size();
  count_output(r, out->file);
  return r;
}

}  // namespace untold::tools
