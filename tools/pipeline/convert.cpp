// tools/pipeline/convert.cpp - input -> convert::scene -> target (see convert.hpp).
#include "convert.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <system_error>
#include <utility>

#include <untold/budget.hpp>
#include <untold/convert/from_untold.hpp>
#include <untold/convert/to_pmdl.hpp>
#include <untold/convert/to_untold.hpp>
#include <untold/convert/to_urho3d.hpp>
#include <untold/reader.hpp>
#include <untold/source.hpp>

#include "files.hpp"
#include "format_assetc.hpp"
#include "formats.hpp"
#include "gltf_export.hpp"
#include "import_model.hpp"
#include "inspect.hpp"

namespace fs = std::filesystem;

namespace untold::tools {

namespace {

using namespace untold::convert;

bool is_untold_file(byte_span bytes) noexcept {
  return bytes.size() >= file_magic.size() &&
         std::equal(file_magic.begin(), file_magic.end(), bytes.begin(),
                    [](std::uint8_t m, std::byte b) { return std::byte{m} == b; });
}

/// The scene's counts as the report states them for targets other than .untold.
void count_scene(cook_report& r, const scene& s) {
  r.entities = static_cast<std::uint32_t>(s.nodes.size());
  r.meshes = static_cast<std::uint32_t>(s.meshes.size());
  r.materials = static_cast<std::uint32_t>(s.materials.size());
  r.textures = static_cast<std::uint32_t>(s.textures.size());
  for (const mesh& m : s.meshes) {
    r.vertices += m.vertex_count();
    r.triangles += (m.indices.empty() ? m.vertex_count() : m.indices.size()) / 3;
  }
}

}  // namespace

std::string_view name(convert_target t) noexcept {
  switch (t) {
    case convert_target::untold: return "untold";
    case convert_target::urho3d: return "urho3d";
    case convert_target::glb: return "glb";
    case convert_target::gltf: return "gltf";
    case convert_target::assetc: return "assetc";
    case convert_target::pmdl: return "pmdl";
  }
  return "unknown";
}

std::optional<convert_target> convert_target_named(std::string_view name) noexcept {
  if (name == "untold") return convert_target::untold;
  if (name == "urho3d" || name == "mdl") return convert_target::urho3d;
  if (name == "glb") return convert_target::glb;
  if (name == "gltf") return convert_target::gltf;
  if (name == "assetc" || name == "hmesh") return convert_target::assetc;
  if (name == "pmdl") return convert_target::pmdl;
  return std::nullopt;
}

std::optional<convert_target> convert_target_of(const fs::path& output) {
  const std::string e = lower_extension(output);
  if (e == ".untold") return convert_target::untold;
  if (e == ".mdl") return convert_target::urho3d;
  if (e == ".glb") return convert_target::glb;
  if (e == ".gltf") return convert_target::gltf;
  if (e == ".hmesh") return convert_target::assetc;
  if (e == ".pmdl_b") return convert_target::pmdl;
  return std::nullopt;
}

std::string import_refusal(std::string_view command, const fs::path& input, byte_span bytes,
                           std::span<const fs::path> animations) {
  const format_handler* foreign = recognise(bytes);
  if (foreign != nullptr && foreign->import == nullptr)
    return quote_path(input.string()) + ": " + std::string(command) + " cannot import this format (" +
           std::string(foreign->description) + ")";
  if (foreign == nullptr && !is_untold_file(bytes) && !animations.empty())
    return "--animations is for formats that keep clips in separate files (Urho3D .ani, ...)";
  return {};
}

std::uint64_t inputs_size(std::uint64_t file_bytes, std::span<const fs::path> animations) {
  std::uint64_t total = file_bytes;
  for (const fs::path& a : animations) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(a, ec);
    if (!ec) total = untold::budget::sum(total, size);
  }
  return total;
}

scene_import import_scene(std::string_view command, const fs::path& input, byte_span bytes,
                          std::span<const fs::path> animations, const untold::limits& limits, untold::budget& budget) {
  scene_import out;
  const auto fail = [&out](std::string message, bool io_failure = false) {
    out.error = std::move(message);
    out.io_failure = io_failure;
    return std::move(out);
  };
  if (std::string refusal = import_refusal(command, input, bytes, animations); !refusal.empty())
    return fail(std::move(refusal));
  const format_handler* foreign = recognise(bytes);
  if (foreign == nullptr && is_untold_file(bytes)) {
    auto opened = untold::open(bytes, {.limits = limits, .deep_checks = true});
    if (!opened) return fail(quote_path(input.string()) + ": " + opened.error().describe());
    auto imported = from_untold(*opened, {}, {.limits = limits, .budget = &budget});
    if (!imported) return fail(quote_path(input.string()) + ": cannot import: " + imported.error().describe());
    out.scene = std::move(*imported);
  } else if (foreign != nullptr) {
    import_request request;
    request.input = input;
    request.bytes = bytes;
    request.animations.assign(animations.begin(), animations.end());
    request.limits = limits;
    request.budget = &budget;
    auto imported = foreign->import(request);
    if (!imported) {
      const errc code = imported.error().code;  // a clip file that cannot be read is an I/O failure
      return fail(quote_path(input.string()) + ": cannot import: " + imported.error().describe(),
                  code == errc::io_open_failed || code == errc::io_read_failed);
    }
    out.scene = std::move(*imported);
  } else {
    model_import_result imported = import_model(input, {.limits = limits, .budget = &budget});
    // assimp's message may quote the file's own bytes: escaped like a name.
    if (!imported) return fail(quote_path(input.string()) + ": cannot import: " + escaped(imported.error));
    out.scene = std::move(imported.scene);
  }
  return out;
}

cook_report convert_file(const convert_options& options) {
  if (options.output.empty()) return cook_report{}.failed("no output path");
  cook_report r;
  const auto fail = [&r](std::string message, bool io_failure = false) {
    return r.failed(std::move(message), io_failure);
  };
  const auto progress = [&options](std::string_view stage, float fraction) {
    if (options.progress) options.progress(stage, fraction);
  };
  auto bytes = read_file(options.input, options.limits.max_total_bytes);  // larger: R-LIMITS
  if (!bytes) {
    const bool io = bytes.error().code != errc::limit_exceeded;
    return fail(quote_path(options.input.string()) + ": " + bytes.error().describe(), io);
  }
  const byte_span input(*bytes);
  if (std::string refusal = import_refusal("convert", options.input, input, options.animations); !refusal.empty())
    return fail(std::move(refusal));
  const format_handler* foreign = recognise(input);

  // .untold is cook's: the same file `untold cook` writes (textures placed,
  // meshes optimised) from every input cook reads.
  if (options.target == convert_target::untold && !is_untold_file(input)) {
    cook_options c;
    c.input = options.input;
    c.output = options.output;
    c.strict = options.strict;
    c.compression = options.compression;
    c.progress = options.progress;
    return foreign != nullptr ? cook_foreign(*foreign, input, options.animations, c) : cook(c);
  }

  // One budget for every input (the file and its clip files), shared by the importer and the writer.
  untold::budget budget(options.limits, inputs_size(input.size(), options.animations));
  progress("import", 0);
  scene_import imported = import_scene("convert", options.input, input, options.animations, options.limits, budget);
  if (!imported) return fail(std::move(imported.error), imported.io_failure);
  scene s = std::move(imported.scene);
  progress("import", 1);
  r.conversion = std::move(s.report);
  s.report = {};

  // Every target's bytes, made (and read back by the writer) before anything is written.
  progress("convert", 0);
  std::vector<std::pair<fs::path, std::vector<std::byte>>> outputs;
  const fs::path dir = options.output.parent_path();
  switch (options.target) {
    case convert_target::untold: {  // from a .untold input (the others went to cook above)
      to_untold_options o;
      o.limits = options.limits;
      o.budget = &budget;
      o.write.compression = options.compression;
      auto out = to_untold(s, o, r.conversion);
      if (!out) return fail(quote_path(options.input.string()) + ": cannot convert: " + out.error().describe());
      outputs.emplace_back(options.output, std::move(out->file));
      for (std::size_t k = 0; k < out->lod_files.size(); ++k)
        outputs.emplace_back(sibling(options.output, "lod" + std::to_string(k + 1)), std::move(out->lod_files[k]));
      break;
    }
    case convert_target::urho3d: {
      auto out = to_urho3d(s, {.limits = options.limits, .budget = &budget}, r.conversion);
      if (!out) return fail(quote_path(options.input.string()) + ": cannot convert: " + out.error().describe());
      outputs.emplace_back(options.output, std::move(out->model));
      for (auto& [file_name, clip] : out->animations) outputs.emplace_back(dir / file_name, std::move(clip));
      const std::string& list = out->material_list;
      const auto* text = reinterpret_cast<const std::byte*>(list.data());
      outputs.emplace_back(fs::path(options.output).replace_extension(".txt"),
                           std::vector<std::byte>(text, text + list.size()));
      break;
    }
    case convert_target::glb:
    case convert_target::gltf: {
      gltf_export_options o;
      o.container = options.target == convert_target::glb ? gltf_container::glb : gltf_container::gltf;
      o.image_directory = options.input.parent_path();
      o.limits = options.limits;
      o.budget = &budget;
      auto out = gltf_serialize(s, options.output.filename().string(), o);
      if (!out) return fail(quote_path(options.input.string()) + ": cannot convert: " + out.error().describe());
      r.conversion.entries.insert(r.conversion.entries.end(), out->report.entries.begin(), out->report.entries.end());
      for (gltf_file& f : out->files) outputs.emplace_back(dir / f.name, std::move(f.bytes));
      break;
    }
    case convert_target::assetc: {
      auto out = assetc_convert_outputs(s, options.input, options.output, options.limits, budget, r.conversion);
      if (!out) return fail(quote_path(options.input.string()) + ": cannot convert: " + out.error().describe());
      for (auto& file : *out) outputs.push_back(std::move(file));
      break;
    }
    case convert_target::pmdl: {
      auto out = to_pmdl(s, {.limits = options.limits, .budget = &budget}, r.conversion);
      if (!out) return fail(quote_path(options.input.string()) + ": cannot convert: " + out.error().describe());
      outputs.emplace_back(options.output, std::move(*out));
      break;
    }
  }
  progress("convert", 1);
  if (options.strict && r.conversion.lost_anything()) return fail(strict_refusal(options.input, r.conversion));

  progress("write", 0);
  for (const auto& [path, file] : outputs) {
    std::error_code ec;  // side files in a directory of their own (assetc's OUT/tex_N.ktx2); a failure shows in the write
    if (path.parent_path() != dir) fs::create_directories(path.parent_path(), ec);
    if (!write_bytes(path, file, r)) return r;
  }
  progress("write", 1);
  r.bytes = outputs.front().second.size();
  if (options.target == convert_target::untold) count_output(r, outputs.front().second);
  else count_scene(r, s);
  return r;
}

}  // namespace untold::tools
