// python/src/asset.cpp - untold._untold: opened files as zero-copy numpy arrays,
// the vertex decoders and the streaming planner (docs/python.md).
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <untold/io.hpp>
#include <untold/packing.hpp>
#include <untold/reader.hpp>
#include <untold/remote/manifest.hpp>
#include <untold/remote/stream_plan.hpp>
#include <untold/scene.hpp>
#include <untold/streaming.hpp>
#include <untold/vertex.hpp>
#include <untold/vertex_quant.hpp>

#include "bindings.hpp"

namespace untold::python {
namespace {

/// The bytes an asset views: a mapped file or bytes made in memory (a
/// foreign format converted on open). Never moves once made, so the
/// asset's spans and the numpy arrays over them stay valid while it lives.
struct opened {
  std::optional<mapped_file> file;
  std::vector<std::byte> owned;
  std::optional<untold::asset> asset;
  std::string format;  // "untold", or the foreign format's name

  [[nodiscard]] byte_span bytes() const { return file ? file->bytes() : byte_span(owned); }
};

}  // namespace

py::object& error_class() {
  static py::object cls;
  return cls;
}

std::string rule_in(std::string_view message) {
  std::size_t best = std::string_view::npos;
  std::string_view found;
#define UNTOLD_PY_RULE(fam, n, id, msg)                                                   \
  if (const std::size_t at = message.find(std::string(id) + " " + #n + ":"); at < best) { \
    best = at;                                                                            \
    found = id;                                                                           \
  }
  UNTOLD_ERROR_TABLE(UNTOLD_PY_RULE)
#undef UNTOLD_PY_RULE
  return std::string(found);
}

namespace {

[[noreturn]] void raise_with(const std::string& message, const std::string& rule, py::dict context) {
  py::object cls = error_class();
  if (!cls) throw std::runtime_error(message);
  py::object e = cls(message, rule, context);
  PyErr_SetObject(cls.ptr(), e.ptr());
  throw py::error_already_set();
}

}  // namespace

void raise_error(const error& e) {
  py::dict context;
  const error_context& c = e.context;
  if (c.chunk_index != no_index) context["chunk"] = c.chunk_index, context["chunk_type"] = c.chunk_type;
  if (c.record_index != no_index) context["record"] = c.record_index;
  if (c.field != nullptr) context["field"] = c.field;
  if (c.has_value) {
    if (c.value_is_float) {
      float f = 0;
      const auto bits = static_cast<std::uint32_t>(c.value);
      std::memcpy(&f, &bits, sizeof f);
      context["value"] = f;
    } else {
      context["value"] = c.value;
    }
  }
  if (c.has_limit) context["limit"] = c.limit;
  if (c.offset != no_offset) context["offset"] = c.offset;
  if (!e.subject().empty()) context["subject"] = std::string(e.subject());
  context["name"] = std::string(e.name());
  raise_with(e.describe(), std::string(e.rule_id()), context);
}

void raise_message(const std::string& message) { raise_with(message, rule_in(message), py::dict()); }

namespace {

using holder = std::shared_ptr<opened>;

/// A read-only numpy array over `bytes` (inside the holder's file) that keeps
/// `owner` (the Python Asset) alive.
py::array view(const py::dtype& dtype, std::vector<py::ssize_t> shape, std::vector<py::ssize_t> strides, byte_span bytes,
               const py::object& owner) {
  py::array a(dtype, std::move(shape), std::move(strides), static_cast<const void*>(bytes.data()), owner);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

py::dtype dtype_of(const py::list& fields) { return py::dtype::from_args(fields); }

/// PBR_STATIC_V1 (docs/vertex.md): normal and tangent stay packed 10:10:10:2 (u4).
py::dtype static_vertex_dtype() {
  py::list f;
  f.append(py::make_tuple("position", "<f4", py::make_tuple(3)));
  f.append(py::make_tuple("normal", "<u4"));
  f.append(py::make_tuple("tangent", "<u4"));
  f.append(py::make_tuple("uv0", "<f2", py::make_tuple(2)));
  f.append(py::make_tuple("uv1", "<f2", py::make_tuple(2)));
  f.append(py::make_tuple("color0", "u1", py::make_tuple(4)));
  return dtype_of(f);
}

/// PBR_QUANT_V1: unorm16 position + handedness, octahedral snorm8 normal and tangent.
py::dtype quant_vertex_dtype() {
  py::list f;
  f.append(py::make_tuple("position", "<u2", py::make_tuple(3)));
  f.append(py::make_tuple("handedness", "<u2"));
  f.append(py::make_tuple("normal", "i1", py::make_tuple(2)));
  f.append(py::make_tuple("tangent", "i1", py::make_tuple(2)));
  f.append(py::make_tuple("uv0", "<f2", py::make_tuple(2)));
  f.append(py::make_tuple("uv1", "<f2", py::make_tuple(2)));
  f.append(py::make_tuple("color0", "u1", py::make_tuple(4)));
  return dtype_of(f);
}

/// The decoded vertex (untold::pbr_vertex, 72 bytes).
py::dtype decoded_vertex_dtype() {
  py::list f;
  f.append(py::make_tuple("position", "<f4", py::make_tuple(3)));
  f.append(py::make_tuple("normal", "<f4", py::make_tuple(3)));
  f.append(py::make_tuple("tangent", "<f4", py::make_tuple(4)));
  f.append(py::make_tuple("uv0", "<f4", py::make_tuple(2)));
  f.append(py::make_tuple("uv1", "<f4", py::make_tuple(2)));
  f.append(py::make_tuple("color0", "<f4", py::make_tuple(4)));
  return dtype_of(f);
}

py::dtype keyframe_dtype(bool rotation) {
  py::list f;
  f.append(py::make_tuple("time", "<f4"));
  if (rotation) {
    f.append(py::make_tuple("rotation", "<f4", py::make_tuple(4)));
  } else {
    f.append(py::make_tuple("translation", "<f4", py::make_tuple(3)));
    f.append(py::make_tuple("reserved", "<u4"));
  }
  return dtype_of(f);
}

const mesh_record mesh_at(const opened& o, std::size_t i) {
  const auto meshes = o.asset->meshes();
  if (i >= meshes.size()) throw py::index_error("mesh " + std::to_string(i) + " of " + std::to_string(meshes.size()));
  return meshes[i];
}

py::dict mesh_dict(const opened& o, std::size_t i) {
  const mesh_record m = mesh_at(o, i);
  py::dict d;
  d["index"] = i;
  d["name"] = std::string(o.asset->string(m.mesh_name_offset));
  d["entity_id"] = m.entity_id;
  d["material"] = m.material_index == none ? py::object(py::none()) : py::object(py::int_(m.material_index));
  d["vertex_count"] = m.vertex_count;
  d["index_count"] = m.index_count;
  d["index_type"] = m.index_type == 1 ? "uint16" : "uint32";
  d["vertex_stride"] = m.vertex_stride_bytes;
  d["bounds_min"] = py::make_tuple(m.local_bounds.min[0], m.local_bounds.min[1], m.local_bounds.min[2]);
  d["bounds_max"] = py::make_tuple(m.local_bounds.max[0], m.local_bounds.max[1], m.local_bounds.max[2]);
  return d;
}

/// untold.open: a .untold file mapped, or a foreign model converted in memory (pipeline.cpp).
holder open_untold(const std::string& path, bool deep) {
  auto o = std::make_shared<opened>();
  auto file = mapped_file::open(path);
  if (!file) raise_error(file.error());
  o->file.emplace(std::move(*file));
  open_options options;
  options.deep_checks = deep;
  // Every byte verified at open (block digests or contentHash): the arrays
  // handed out are views, with no later access to verify them on.
  options.integrity = integrity::full;
  auto a = untold::open(o->file->bytes(), options);
  if (!a) raise_error(a.error());
  o->asset.emplace(std::move(*a));
  o->format = "untold";
  return o;
}

holder open_bytes(std::vector<std::byte> bytes, std::string format) {
  auto o = std::make_shared<opened>();
  o->owned = std::move(bytes);
  auto a = untold::open(byte_span(o->owned), open_options{.deep_checks = true});
  if (!a) raise_error(a.error());
  o->asset.emplace(std::move(*a));
  o->format = std::move(format);
  return o;
}

py::array unpack_1010102(const py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>& packed) {
  const auto n = static_cast<py::ssize_t>(packed.size());
  py::array_t<float> out({n, py::ssize_t{4}});
  const std::uint32_t* in = packed.data();
  float* dst = out.mutable_data();
  for (py::ssize_t i = 0; i < n; ++i) {
    const std::uint32_t v = in[i];
    for (int c = 0; c < 3; ++c) dst[i * 4 + c] = dequantize_snorm10((v >> (10 * c)) & 0x3FFu);
    dst[i * 4 + 3] = (v & 0x80000000u) != 0 ? -1.0f : 1.0f;
  }
  return out;
}

/// The streaming planner over a tile manifest (untold/remote/stream_plan.hpp).
struct planner_holder {
  remote::stream_world world;
  std::unique_ptr<streaming::planner> planner;
};

}  // namespace

void bind_asset(py::module_& m) {
  m.def("_set_error_class", [](py::object cls) { error_class() = std::move(cls); });
  m.def("_rule_in", &rule_in, "The first rule id named in a message (as error::describe() writes it), or ''.");

  py::class_<opened, holder>(m, "Asset", "An opened, validated file; arrays are zero-copy views that keep it alive.")
      .def_property_readonly("format", [](const opened& o) { return o.format; })
      .def_property_readonly("format_version", [](const opened& o) { return o.asset->format_version(); })
      .def_property_readonly("file_type", [](const opened& o) {
        switch (o.asset->file_type()) {
          case file_type::tile: return "tile";
          case file_type::lod: return "lod";
          case file_type::hlod: return "hlod";
          case file_type::shared: return "shared";
          case file_type::animation: return "animation";
        }
        return "unknown";
      })
      .def_property_readonly("vertex_layout", [](const opened& o) { return std::string(vertex_layout_name(o.asset->header().vertex_layout)); })
      .def_property_readonly("size", [](const opened& o) { return o.bytes().size(); })
      .def_property_readonly("mesh_count", [](const opened& o) { return o.asset->meshes().size(); })
      .def("mesh", &mesh_dict, py::arg("index"), "Mesh record `index` as a dict.")
      .def_property_readonly("material_names", [](const opened& o) {
        std::vector<std::string> names;
        for (const material_record& r : o.asset->materials()) names.emplace_back(o.asset->string(r.name_offset));
        return names;
      })
      .def("vertices", [](py::object self, std::size_t i) {
        const opened& o = self.cast<const opened&>();
        const mesh_record rec = mesh_at(o, i);
        const bool quant = o.asset->header().vertex_layout == static_cast<std::uint32_t>(vertex_layout::pbr_quant_v1);
        const byte_span bytes = o.asset->vertices(rec);
        const py::dtype dt = quant ? quant_vertex_dtype() : static_vertex_dtype();
        return view(dt, {static_cast<py::ssize_t>(rec.vertex_count)}, {static_cast<py::ssize_t>(rec.vertex_stride_bytes)}, bytes, self);
      }, py::arg("mesh"), "Mesh `mesh`'s stored vertices: a read-only structured array over the file's bytes.")
      .def("indices", [](py::object self, std::size_t i) {
        const opened& o = self.cast<const opened&>();
        const mesh_record rec = mesh_at(o, i);
        const bool wide = rec.index_type == 2;
        const py::dtype dt(wide ? "<u4" : "<u2");
        return view(dt, {static_cast<py::ssize_t>(rec.index_count)}, {static_cast<py::ssize_t>(wide ? 4 : 2)},
                    o.asset->indices(rec), self);
      }, py::arg("mesh"), "Mesh `mesh`'s indices: a read-only uint16 or uint32 array over the file's bytes.")
      .def("decode_vertices", [](const opened& o, std::size_t i) {
        const mesh_record rec = mesh_at(o, i);
        const byte_span bytes = o.asset->vertices(rec);
        py::array out(decoded_vertex_dtype(), std::vector<py::ssize_t>{static_cast<py::ssize_t>(rec.vertex_count)});
        auto* dst = static_cast<pbr_vertex*>(out.mutable_data());
        for (std::size_t v = 0; v < rec.vertex_count; ++v)
          dst[v] = decode_stored_vertex(bytes, v, o.asset->header().vertex_layout, rec.local_bounds);
        return out;
      }, py::arg("mesh"), "Mesh `mesh`'s vertices decoded to float32 (a new array; either layout).")
      .def_property_readonly("clip_count", [](const opened& o) { return o.asset->table<animation_clip_record>().size(); })
      .def("clip", [](py::object self, std::uint32_t clip) {
        const opened& o = self.cast<const opened&>();
        const auto c = resolve_clip(*o.asset, clip);
        if (!c) throw py::index_error("no clip " + std::to_string(clip));
        py::list channels;
        for (const resolved_channel& ch : c->channels) {
          py::dict d;
          d["joint_path"] = std::string(ch.joint_path);
          d["translations"] = view(keyframe_dtype(false), {static_cast<py::ssize_t>(ch.translations.size())},
                                   {static_cast<py::ssize_t>(ch.translations.stride())}, ch.translations.bytes(), self);
          d["rotations"] = view(keyframe_dtype(true), {static_cast<py::ssize_t>(ch.rotations.size())},
                                {static_cast<py::ssize_t>(ch.rotations.stride())}, ch.rotations.bytes(), self);
          channels.append(d);
        }
        py::dict out;
        out["name"] = std::string(c->name);
        out["duration"] = c->record.duration;
        out["channels"] = channels;
        return out;
      }, py::arg("clip"), "Clip `clip`: name, duration and per channel the keyframes as read-only arrays over the file.");

  m.def("open_untold", &open_untold, py::arg("path"), py::arg("deep") = false);
  m.def("open_bytes", [](py::bytes data, std::string format) {
    const std::string_view s = data;
    std::vector<std::byte> bytes(s.size());
    std::memcpy(bytes.data(), s.data(), s.size());
    return open_bytes(std::move(bytes), std::move(format));
  });
  m.def("unpack_1010102", &unpack_1010102, py::arg("packed"),
        "10:10:10:2 snorm words (PBR_STATIC_V1 normal/tangent) to float32 (N, 4): xyz and w = handedness (+1/-1).");

  py::class_<planner_holder>(m, "StreamPlanner", "untold::streaming::planner over a tile manifest.")
      .def(py::init([](const std::string& manifest, const std::string& mode, std::uint32_t max_in_flight) {
             auto parsed = remote::read_manifest_file(manifest);
             if (!parsed) raise_message(manifest + ": " + parsed.error().describe());
             auto h = std::make_unique<planner_holder>();
             h->world = remote::make_stream_world(*parsed);
             streaming::planner_options o;
             o.mode = mode == "whole_file" ? streaming::transfer_mode::whole_file : streaming::transfer_mode::ranges;
             o.max_in_flight = max_in_flight;
             h->planner = std::make_unique<streaming::planner>(h->world.tiles, o);
             return h;
           }),
           py::arg("manifest"), py::arg("mode") = "ranges", py::arg("max_in_flight") = 4)
      .def_property_readonly("tile_ids", [](const planner_holder& h) { return h.world.ids; })
      .def("tick", [](planner_holder& h, std::array<double, 3> camera, double now, std::optional<std::uint64_t> budget,
                      const std::vector<std::pair<std::uint64_t, std::string>>& results) {
        std::vector<streaming::request_result> done;
        for (const auto& [request, outcome] : results)
          done.push_back({.request = request,
                          .outcome = outcome == "failed"      ? streaming::request_outcome::failed
                                     : outcome == "cancelled" ? streaming::request_outcome::cancelled
                                                              : streaming::request_outcome::completed,
                          .resident_bytes = 0});
        streaming::tick_input in;
        in.camera = camera;
        in.now = now;
        if (budget) in.memory_budget = *budget;
        in.results = done;
        py::list out;
        for (const streaming::action& a : h.planner->tick(in)) {
          py::dict d;
          d["kind"] = std::string(streaming::name(a.kind));
          d["tile"] = a.tile;
          d["tile_id"] = a.tile < h.world.ids.size() ? h.world.ids[a.tile] : std::string();
          d["level"] = a.level == streaming::no_level ? py::object(py::none()) : py::object(py::int_(a.level));
          d["path"] = std::string(h.world.path(a.tile, a.level));
          d["request"] = a.request;
          out.append(d);
        }
        return out;
      }, py::arg("camera"), py::arg("now"), py::arg("memory_budget") = py::none(), py::arg("results") = std::vector<std::pair<std::uint64_t, std::string>>{},
         "One planner tick: camera (x, y, z), time in seconds, optional byte budget, and the requests that ended "
         "as (request, 'completed'|'failed'|'cancelled'). Returns the actions as dicts.")
      .def("shown", [](const planner_holder& h, std::uint32_t t) {
        const std::uint16_t s = h.planner->shown(t);
        return s == streaming::no_level ? py::object(py::none()) : py::object(py::int_(s));
      }, py::arg("tile"))
      .def_property_readonly("resident_bytes", [](const planner_holder& h) { return h.planner->resident_bytes(); });
}

}  // namespace untold::python
