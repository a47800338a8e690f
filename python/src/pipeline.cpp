// python/src/pipeline.cpp - untold._untold: the tool's pipeline (tools/pipeline)
// for Python: validate and info for every format, convert, cook, the tile
// cook and its distributed jobs, and the builder (docs/python.md). Results
// cross as JSON text, which the package turns into Python objects.
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <untold/convert/to_untold.hpp>
#include <untold/format.hpp>

#include "compress_spec.hpp"
#include "convert.hpp"
#include "cook.hpp"
#include "cook_tiles.hpp"
#include "files.hpp"
#include "formats.hpp"
#include "inspect.hpp"
#include "report_json.hpp"

#include "bindings.hpp"

namespace untold::python {
namespace {

namespace fs = std::filesystem;
using tools::json;

std::vector<std::byte> read_or_raise(const std::string& path) {
  auto bytes = tools::read_file_bytes(path);
  if (!bytes) raise_message("E-IO-OPEN io_open_failed: cannot read " + tools::quote_path(path));
  return std::move(*bytes);
}

bool is_untold(byte_span b) {
  return b.size() >= file_magic.size() &&
         std::equal(file_magic.begin(), file_magic.end(), b.begin(), [](std::uint8_t a, std::byte c) { return std::byte{a} == c; });
}

/// What validate and info answer for a file of no format the library reads.
json unrecognised(const std::string& path, byte_span bytes) {
  return json{{"file", path}, {"format", nullptr}, {"valid", false}, {"error", tools::unrecognised_error_json(bytes)}};
}

std::string validate(const std::string& path, bool deep) {
  const auto bytes = read_or_raise(path);
  py::gil_scoped_release unlocked;
  if (is_untold(bytes)) {
    json j = tools::validate_json(path, bytes, deep);
    j["format"] = "untold";
    return tools::to_text(j);
  }
  if (const tools::format_handler* h = tools::recognise(bytes)) return tools::to_text(h->validate(path, bytes, deep));
  return tools::to_text(unrecognised(path, bytes));
}

std::string info(const std::string& path) {
  const auto bytes = read_or_raise(path);
  py::gil_scoped_release unlocked;
  if (is_untold(bytes)) return tools::to_text(tools::info_json(path, bytes));
  if (const tools::format_handler* h = tools::recognise(bytes)) return tools::to_text(h->info(path, bytes));
  return tools::to_text(unrecognised(path, bytes));
}

compression_policy compression_of(const std::string& spec) {
  std::string why;
  const auto c = tools::parse_compression(spec, why);
  if (!c) raise_message(why);
  return tools::uniform_policy(*c);
}

vertex_layout layout_of(const std::string& name) {
  if (name == "static" || name == "pbrStaticV1") return vertex_layout::pbr_static_v1;
  if (name == "quantized" || name == "pbrQuantV1") return vertex_layout::pbr_quant_v1;
  raise_message("unknown vertex layout '" + name + "' (static or quantized)");
}

std::string convert_file(const std::string& input, const std::string& output, const std::string& target,
                         const std::vector<std::string>& animations, bool strict, const std::string& compress) {
  tools::convert_options o;
  o.input = input;
  o.output = output;
  const auto t = target.empty() ? tools::convert_target_of(output) : tools::convert_target_named(target);
  if (!t) raise_message("cannot tell the target format of " + tools::quote_path(output) + "; give target=");
  o.target = *t;
  for (const std::string& a : animations) o.animations.emplace_back(a);
  o.strict = strict;
  o.compression = compression_of(compress);
  tools::cook_report r;
  {
    py::gil_scoped_release unlocked;
    r = tools::convert_file(o);
  }
  if (!r) raise_message(r.error);
  return tools::to_text(tools::cook_report_json(r));
}

std::string cook_file(const std::string& input, const std::string& output, const std::string& compress,
                      const std::string& layout, std::uint32_t lods, bool strict, bool embed_textures,
                      const std::string& order) {
  tools::cook_options o;
  const auto named_order = tools::mesh_order_named(order);
  if (!named_order) raise_message("unknown mesh order '" + order + "' (cache, size or source)");
  o.order = *named_order;
  o.input = input;
  o.output = output;
  o.compression = compression_of(compress);
  o.vertex_layout = layout_of(layout);
  o.lod_count = lods;
  o.strict = strict;
  o.embed_textures = embed_textures;
  const auto bytes = read_or_raise(input);
  if (is_untold(bytes)) raise_message(tools::quote_path(input) + " is already a .untold file");
  tools::cook_report r;
  {
    py::gil_scoped_release unlocked;
    const tools::format_handler* h = tools::recognise(bytes);
    if (h != nullptr && h->import == nullptr)
      r.failed(tools::quote_path(input) + ": cook cannot import this format (" + std::string(h->description) + ")");
    else
      r = h != nullptr ? tools::cook_foreign(*h, bytes, {}, o) : tools::cook(o);
  }
  if (!r) raise_message(r.error);
  return tools::to_text(tools::cook_report_json(r));
}

tools::tile_cook_options tile_options(const std::string& tiles, const std::vector<float>& lod_ratios, float lod_error,
                                      float hlod_ratio, bool hlods, const std::string& compress, const std::string& layout) {
  tools::tile_cook_options o;
  std::string why;
  if (!tools::parse_tiles_spec(tiles, o, why)) raise_message(why);
  if (!lod_ratios.empty()) o.lods.ratios = lod_ratios;
  o.lods.target_error = lod_error;
  o.hlod.ratio = hlod_ratio;
  o.write_hlods = hlods;
  o.compression = compression_of(compress);
  o.vertex_layout = layout_of(layout);
  return o;
}

std::string tile_report_json(const tools::tile_cook_report& r) {
  json tiles = json::array();
  for (const auto& t : r.tiles) tiles.push_back(tools::tile_summary_json(t));
  json written = json::array();
  for (const fs::path& p : r.written) written.push_back(p.string());
  return tools::to_text(json{{"manifest", r.manifest.empty() ? json(nullptr) : json(r.manifest.string())},
                             {"tiles", tiles},
                             {"shared", r.shared ? tools::tile_summary_json(*r.shared) : json(nullptr)},
                             {"source_triangles", r.source_triangles},
                             {"split_draws", r.split_draws},
                             {"bytes", r.total_bytes},
                             {"written", written},
                             {"report", tools::report_json(r.report)}});
}

std::string cook_tiles(const std::string& input, const std::string& output, const tools::tile_cook_options& o) {
  tools::tile_cook_report r;
  {
    py::gil_scoped_release unlocked;
    tools::tile_source source = tools::import_tile_source(input);
    if (!source) r.error = source.error;
    else r = tools::cook_tiles(source.scene, output, o);
  }
  if (!r) raise_message(r.error);
  return tile_report_json(r);
}

std::string plan_tiles(const std::string& input, const std::string& output, const std::string& plan_path,
                       const tools::tile_cook_options& o) {
  tools::tile_plan_result planned;
  {
    py::gil_scoped_release unlocked;
    planned = tools::plan_tile_cook(input, output, plan_path, o);
  }
  if (!planned) raise_message(planned.error);
  return tools::tile_plan_json(planned.plan);
}

std::string run_job(const std::string& plan_path, std::size_t job) {
  tools::tile_cook_report r;
  {
    py::gil_scoped_release unlocked;
    const tools::tile_plan_result planned = tools::read_tile_plan(plan_path);
    if (!planned) r.error = planned.error;
    else r = tools::run_tile_job(planned.plan, job);
  }
  if (!r) raise_message(r.error);
  return tile_report_json(r);
}

// ---- the builder ---------------------------------------------------------------------------

std::vector<float> floats(const py::handle& value, std::size_t width, const char* what) {
  if (value.is_none()) return {};
  const auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(value);
  if (!a) raise_message(std::string(what) + " must be an array of numbers");
  if (a.size() % static_cast<py::ssize_t>(width) != 0)
    raise_message(std::string(what) + " must hold " + std::to_string(width) + " numbers per vertex");
  return std::vector<float>(a.data(), a.data() + a.size());
}

template <std::size_t N>
std::array<float, N> fixed(const py::dict& d, const char* key, std::array<float, N> fallback) {
  if (!d.contains(key)) return fallback;
  const std::vector<float> v = d[key].cast<std::vector<float>>();
  if (v.size() != N) raise_message(std::string(key) + " must hold " + std::to_string(N) + " numbers");
  std::array<float, N> out{};
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}

std::uint32_t ref(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return convert::no_ref;
  return d[key].cast<std::uint32_t>();
}

convert::scene scene_from(const py::dict& s) {
  convert::scene out;
  if (s.contains("name")) out.name = s["name"].cast<std::string>();
  if (s.contains("materials"))
    for (const py::handle& h : s["materials"]) {
      const py::dict m = h.cast<py::dict>();
      convert::material mat;
      if (m.contains("name")) mat.name = m["name"].cast<std::string>();
      mat.base_color = fixed<4>(m, "base_color", mat.base_color);
      mat.emissive = fixed<3>(m, "emissive", mat.emissive);
      if (m.contains("metallic")) mat.metallic = m["metallic"].cast<float>();
      if (m.contains("roughness")) mat.roughness = m["roughness"].cast<float>();
      if (m.contains("double_sided")) mat.double_sided = m["double_sided"].cast<bool>();
      out.materials.push_back(std::move(mat));
    }
  for (const py::handle& h : s["meshes"]) {
    const py::dict m = h.cast<py::dict>();
    convert::mesh mesh;
    if (m.contains("name")) mesh.name = m["name"].cast<std::string>();
    const auto get = [&m](const char* key) { return m.contains(key) ? py::handle(m[key]) : py::handle(py::none()); };
    mesh.positions = floats(get("positions"), 3, "positions");
    mesh.normals = floats(get("normals"), 3, "normals");
    mesh.tangents = floats(get("tangents"), 4, "tangents");
    mesh.uv0 = floats(get("uv0"), 2, "uv0");
    mesh.uv1 = floats(get("uv1"), 2, "uv1");
    mesh.colors = floats(get("colors"), 4, "colors");
    if (m.contains("indices") && !m["indices"].is_none()) {
      const auto idx = py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>::ensure(m["indices"]);
      if (!idx) raise_message("indices must be an array of integers");
      mesh.indices.assign(idx.data(), idx.data() + idx.size());
    }
    mesh.material = ref(m, "material");
    out.meshes.push_back(std::move(mesh));
  }
  if (s.contains("nodes")) {
    for (const py::handle& h : s["nodes"]) {
      const py::dict n = h.cast<py::dict>();
      convert::node node;
      if (n.contains("name")) node.name = n["name"].cast<std::string>();
      node.parent = ref(n, "parent");
      node.local.translation = fixed<3>(n, "translation", node.local.translation);
      node.local.rotation = fixed<4>(n, "rotation", node.local.rotation);
      node.local.scale = fixed<3>(n, "scale", node.local.scale);
      if (n.contains("meshes")) node.meshes = n["meshes"].cast<std::vector<std::uint32_t>>();
      out.nodes.push_back(std::move(node));
    }
  } else {
    for (std::uint32_t i = 0; i < out.meshes.size(); ++i) out.nodes.push_back({.name = out.meshes[i].name, .meshes = {i}});
  }
  return out;
}

py::tuple build(const py::dict& s, const std::string& compress, const std::string& layout, const std::string& type) {
  const convert::scene scene = scene_from(s);
  convert::to_untold_options o;
  o.write.compression = compression_of(compress);
  o.write.vertex_layout = layout_of(layout);
  o.type = type == "shared" ? file_type::shared : type == "lod" ? file_type::lod : type == "hlod" ? file_type::hlod : file_type::tile;
  o.lod_files = false;
  convert::conversion_report report;
  result<convert::untold_output> out = make_error(errc::invalid_argument);
  {
    py::gil_scoped_release unlocked;
    if (auto ok = convert::validate_model(scene); !ok) out = ok.error();
    else out = convert::to_untold(scene, o, report);
  }
  if (!out) raise_error(out.error());
  const auto& file = out->file;
  return py::make_tuple(py::bytes(reinterpret_cast<const char*>(file.data()), file.size()), tools::to_text(tools::report_json(report)));
}

void write_atomic(const std::string& path, py::bytes data) {
  const std::string_view s = data;
  if (auto failed = tools::write_output(path, std::as_bytes(std::span(s)))) raise_error(failed->cause);
}

/// A foreign model (an importer in formats.hpp) as .untold bytes, for untold.open.
py::tuple import_foreign(const std::string& path) {
  const auto bytes = read_or_raise(path);
  const tools::format_handler* h = tools::recognise(bytes);
  if (h == nullptr) {
    const json u = unrecognised(path, bytes);
    raise_message(u["error"]["describe"].get<std::string>());
  }
  if (h->import == nullptr)
    raise_message(tools::quote_path(path) + " is a " + std::string(h->description) + ", not a model: use untold.validate or untold.info");
  tools::import_request request;
  request.input = path;
  request.bytes = bytes;
  auto scene = h->import(request);
  if (!scene) raise_error(scene.error());
  convert::to_untold_options o;
  o.lod_files = false;
  convert::conversion_report report;
  auto out = convert::to_untold(*scene, o, report);
  if (!out) raise_error(out.error());
  return py::make_tuple(py::bytes(reinterpret_cast<const char*>(out->file.data()), out->file.size()), std::string(h->name),
                        tools::to_text(tools::report_json(report)));
}

}  // namespace

void bind_pipeline(py::module_& m) {
  m.def("validate", &validate, py::arg("path"), py::arg("deep") = false);
  m.def("info", &info, py::arg("path"));
  m.def("is_untold", [](const std::string& path) {
    const auto bytes = read_or_raise(path);
    return is_untold(bytes);
  });
  m.def("convert", &convert_file, py::arg("input"), py::arg("output"), py::arg("target") = "",
        py::arg("animations") = std::vector<std::string>{}, py::arg("strict") = false, py::arg("compress") = "none");
  m.def("cook", &cook_file, py::arg("input"), py::arg("output"), py::arg("compress") = "none",
        py::arg("vertex_layout") = "static", py::arg("lods") = 0, py::arg("strict") = false, py::arg("embed_textures") = false,
        py::arg("mesh_order") = "cache");
  py::class_<tools::tile_cook_options>(m, "TileOptions");
  m.def("tile_options", &tile_options, py::arg("tiles"), py::arg("lod_ratios") = std::vector<float>{},
        py::arg("lod_error") = 0.01f, py::arg("hlod_ratio") = 0.1f, py::arg("hlods") = true, py::arg("compress") = "none",
        py::arg("vertex_layout") = "static");
  m.def("cook_tiles", &cook_tiles, py::arg("input"), py::arg("output"), py::arg("options"));
  m.def("plan_tiles", &plan_tiles, py::arg("input"), py::arg("output"), py::arg("plan"), py::arg("options"));
  m.def("run_tile_job", &run_job, py::arg("plan"), py::arg("job"));
  m.def("build", &build, py::arg("scene"), py::arg("compress") = "none", py::arg("vertex_layout") = "static",
        py::arg("file_type") = "tile");
  m.def("write_atomic", &write_atomic, py::arg("path"), py::arg("data"));
  m.def("import_foreign", &import_foreign, py::arg("path"));
}

}  // namespace untold::python

PYBIND11_MODULE(_untold, m) {
  m.doc() = "untold's C++ library and pipeline; use the `untold` package, not this module.";
  untold::python::bind_asset(m);
  untold::python::bind_pipeline(m);
}
