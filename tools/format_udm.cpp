// tools/format_udm.cpp - the udm formats in the CLI: magic recognition,
// info/validate/dump as JSON, the importer for cook, and the family's own
// subcommands (see formats.hpp, docs/udm.md).
//
//   untold info|validate|dump [--json] FILE   binary UDM ("UDMB") or UDM ASCII
//   untold cook model.pmdl_b -o model.untold  through import_pmdl
//   untold udm convert IN OUT [--to binary|ascii] [--sort-keys]
//     binary <-> ASCII; the output form follows --to, else OUT's extension
//     ("_b" suffix: binary; .udm/.pmdl/.pmat/...: ASCII), else the opposite
//     of the input's.
#include "formats.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <untold/udm/udm.hpp>

#include "cli_common.hpp"
#include "inspect.hpp"

namespace untold::tools {
namespace {

namespace u = untold::udm;

json base(const std::string& path, std::string_view format) { return json{{"file", path}, {"format", format}}; }

json invalid(json j, const error& e) {
  j["valid"] = false;
  j["error"] = error_json(e);
  return j;
}

std::string_view as_text(byte_span b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

/// A binary file, or ASCII text converted to binary (kept alive in `storage`).
result<u::document> open_any(byte_span file, std::vector<std::byte>& storage, const u::read_options& options = {}) {
  if (u::is_binary_udm(file)) return u::document::parse(file, options);
  u::ascii_read_options ao;
  ao.limits = options.limits;
  auto tree = u::read_ascii(as_text(file), ao);
  if (!tree) return tree.error();
  auto bin = u::write_binary(*tree);
  if (!bin) return bin.error();
  storage = std::move(*bin);
  return u::document::parse(storage, options);
}

// ---- JSON of values ------------------------------------------------------------------

json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");  // JSON has no NaN/infinity
}

json component_json(u::component c, const std::byte* p) {
  switch (c) {
    case u::component::i8: return static_cast<std::int8_t>(*p);
    case u::component::u8: return static_cast<std::uint8_t>(*p);
    case u::component::boolean: return static_cast<std::uint8_t>(*p) != 0;
    case u::component::i16: return load_le_unchecked<std::int16_t>(p);
    case u::component::u16: return load_le_unchecked<std::uint16_t>(p);
    case u::component::i32: return load_le_unchecked<std::int32_t>(p);
    case u::component::u32: return load_le_unchecked<std::uint32_t>(p);
    case u::component::i64: return static_cast<std::int64_t>(load_le_unchecked<std::uint64_t>(p));
    case u::component::u64: return load_le_unchecked<std::uint64_t>(p);
    case u::component::f32: return number(load_le_unchecked<float>(p));
    case u::component::f64: return number(std::bit_cast<double>(load_le_unchecked<std::uint64_t>(p)));
    case u::component::f16: return number(half_to_float(load_le_unchecked<std::uint16_t>(p)));
    case u::component::none: return nullptr;
  }
  return nullptr;
}

/// A trivial value: a scalar, or its components in storage order
/// (quaternions x, y, z, w; matrices column-major).
json trivial_json(u::type t, const std::byte* p) {
  const u::component c = u::component_of(t);
  const std::uint32_t n = u::component_count(t);
  if (t == u::type::nil) return nullptr;
  if (n == 1) return component_json(c, p);
  json a = json::array();
  for (std::uint32_t i = 0; i < n; ++i) a.push_back(component_json(c, p + i * u::component_size(c)));
  return a;
}

json struct_json(const u::struct_layout_view& l, const std::byte* p) {
  json o = json::object();
  for (std::size_t i = 0; i < l.member_count(); ++i) {
    const u::struct_member m = l.member(i);
    o[std::string(m.name)] = trivial_json(m.kind, p + m.offset);
  }
  return o;
}

json base64(byte_span b) {
  std::string s;
  u::detail::base64_encode(s, b);
  return s;
}

/// The property as {"type", ...}: elements as "children" by key, arrays with
/// "valueType", "count" and "values". Recursion is bounded by the document's
/// depth, itself capped by limits.max_depth at parse time.
json property_json(const u::property_view& p) {
  json j = json::object();
  j["type"] = u::name(p.kind());
  const u::type t = p.kind();
  if (u::is_trivial(t)) {
    if (t != u::type::nil) j["value"] = trivial_json(t, p.raw().data());
    return j;
  }
  switch (t) {
    case u::type::string:
    case u::type::reference:
    case u::type::utf8_string: j["value"] = std::string(p.as_string().value()); break;
    case u::type::blob:
      j["size"] = p.raw().size();
      j["base64"] = base64(p.raw());
      break;
    case u::type::blob_lz4:
      j["compressedSize"] = p.stored().size();
      j["size"] = p.raw().size();
      j["base64"] = base64(p.raw());
      break;
    case u::type::struct_: j["value"] = struct_json(p.layout(), p.raw().data()); break;
    case u::type::element: {
      json children = json::object();
      for (u::property_view c : p) children[std::string(c.key())] = property_json(c);
      j["children"] = std::move(children);
      break;
    }
    case u::type::array:
    case u::type::array_lz4: {
      const u::type vt = p.value_type();
      j["valueType"] = u::name(vt);
      j["count"] = p.size();
      if (t == u::type::array_lz4) j["compressedSize"] = p.stored().size();
      json values = json::array();
      if (vt == u::type::struct_) {
        const auto s = p.as_structs().value();
        json members = json::array();
        for (std::size_t i = 0; i < s.layout().member_count(); ++i)
          members.push_back(json{{"name", s.layout().member(i).name}, {"type", u::name(s.layout().member(i).kind)}});
        j["members"] = std::move(members);
        for (std::size_t i = 0; i < s.size(); ++i) values.push_back(struct_json(s.layout(), s.value(i).data()));
      } else if (u::is_trivial(vt)) {
        const std::uint32_t size = u::size_of(vt);
        for (std::size_t i = 0; i < p.size(); ++i) values.push_back(trivial_json(vt, p.raw().data() + i * size));
      } else {
        for (u::property_view c : p) values.push_back(property_json(c));
      }
      j["values"] = std::move(values);
      break;
    }
    default: break;
  }
  return j;
}

// ---- info / validate / dump -------------------------------------------------------------

json sub_meshes_json(const u::pmdl_model& m) {
  json list = json::array();
  for (const u::pmdl_sub_mesh& s : m.sub_meshes)
    list.push_back(json{{"group", s.group},
                        {"mesh", s.mesh},
                        {"subMesh", s.sub_mesh},
                        {"geometry", s.geometry},
                        {"vertices", s.vertex_count()},
                        {"indices", s.index_count},
                        {"indexType", u::name(s.index_type)}});
  return list;
}

json info(const std::string& path, byte_span file, std::string_view format) {
  json j = base(path, format);
  std::vector<std::byte> storage;
  auto doc = open_any(file, storage);
  if (!doc) return invalid(std::move(j), doc.error());
  j["valid"] = true;
  if (u::is_binary_udm(file)) j["version"] = doc->version();  // the text form has no version field
  j["assetType"] = doc->asset_type();
  j["assetVersion"] = doc->asset_version();
  const u::document_stats& s = doc->stats();
  j["properties"] = s.property_count;
  j["depth"] = s.max_depth;
  j["lz4Arrays"] = s.lz4_arrays;
  j["lz4Blobs"] = s.lz4_blobs;
  j["decompressedBytes"] = s.decompressed_bytes;
  if (doc->asset_type() == "PMDL") {
    auto model = u::read_pmdl(*doc);
    if (!model) return invalid(std::move(j), model.error());
    json mj = json::object();
    mj["meshGroups"] = model->group_names.size();
    mj["subMeshes"] = sub_meshes_json(*model);
    mj["bones"] = model->bones.size();
    json mats = json::array();
    for (std::string_view name : model->materials) mats.push_back(name);
    mj["materials"] = std::move(mats);
    mj["animations"] = model->animations.size();
    j["model"] = std::move(mj);
  }
  return j;
}

json validate(const std::string& path, byte_span file, bool deep, std::string_view format) {
  json j = base(path, format);
  std::vector<std::byte> storage;
  auto doc = open_any(file, storage);
  if (!doc) return invalid(std::move(j), doc.error());
  if (deep && doc->asset_type() == "PMDL") {
    // Deep: the model must also import (index ranges, bones, weights).
    auto scene = u::import_pmdl(*doc);
    if (!scene) return invalid(std::move(j), scene.error());
  }
  j["valid"] = true;
  return j;
}

json dump(const std::string& path, byte_span file, std::string_view format) {
  json j = base(path, format);
  std::vector<std::byte> storage;
  auto doc = open_any(file, storage);
  if (!doc) return invalid(std::move(j), doc.error());
  j["valid"] = true;
  if (u::is_binary_udm(file)) j["version"] = doc->version();
  j["root"] = property_json(doc->root());
  return j;
}

result<convert::scene> import_model(const import_request& r) {
  std::vector<std::byte> storage;
  u::read_options ro;
  ro.limits = r.limits;
  auto doc = open_any(r.bytes, storage, ro);
  if (!doc) return doc.error();
  u::pmdl_import_options o;
  o.limits = r.limits;
  auto scene = u::import_pmdl(*doc, o);
  if (!scene) return scene.error();
  scene->name = r.input.stem().string();
  if (!r.animations.empty())
    scene->report.dropped("--animations files", "", "Pragma models carry their animations inside the model",
                          r.animations.size());
  return scene;
}

bool recognise_binary(byte_span head) { return u::is_binary_udm(head); }
bool recognise_ascii(byte_span head) { return u::looks_like_ascii_udm(as_text(head)); }

// ---- untold udm convert -------------------------------------------------------------------

struct convert_args {
  std::string input, output, to;
  bool sort_keys = false;
  cli::common_flags flags;
};

int run_convert(const convert_args& a) {
  // One JSON document on stdout with --json, also on failure; else messages on stderr.
  const auto fail = [&a](int code, const std::string& message, const json& error) {
    if (a.flags.json) cli::print(to_text(json{{"file", a.input}, {"output", a.output}, {"valid", false}, {"error", error}}));
    else cli::complain(message);
    return code;
  };
  std::string io_message;
  json io_error;
  auto in = cli::input::load(a.input, io_message, io_error);
  if (!in) return fail(cli::exit_io, io_message, io_error);
  const byte_span bytes = in->bytes();
  const bool input_binary = u::is_binary_udm(bytes);
  u::property tree;
  std::uint32_t version = u::current_version;
  if (input_binary) {
    auto doc = u::document::parse(bytes);
    if (!doc)
      return fail(cli::exit_invalid, cli::quote_path(a.input) + ": " + doc.error().describe(), error_json(doc.error()));
    version = doc->version();
    tree = u::to_tree(doc->root());
  } else {
    auto t = u::read_ascii(as_text(bytes));
    if (!t) return fail(cli::exit_invalid, cli::quote_path(a.input) + ": " + t.error().describe(), error_json(t.error()));
    tree = std::move(*t);
  }
  bool to_binary = !input_binary;
  if (!a.to.empty()) {
    to_binary = a.to == "binary";
  } else {
    const std::string ext = std::filesystem::path(a.output).extension().string();
    if (ext.size() > 2 && ext.ends_with("_b")) to_binary = true;
    else if (ext == ".udm" || ext == ".pmdl" || ext == ".pmat" || ext == ".pmap" || ext == ".pskel" || ext == ".pani" ||
             ext == ".txt")
      to_binary = false;
  }
  std::vector<std::byte> out;
  if (to_binary) {
    auto bin = u::write_binary(tree, {version});
    if (!bin) return fail(cli::exit_invalid, bin.error().describe(), error_json(bin.error()));
    out = std::move(*bin);
  } else {
    auto text = u::write_ascii(tree, {.sort_keys = a.sort_keys});
    if (!text) return fail(cli::exit_invalid, text.error().describe(), error_json(text.error()));
    out.resize(text->size());
    std::memcpy(out.data(), text->data(), text->size());
  }
  std::string message;
  if (!cli::write_output(a.output, out, message))
    return fail(cli::exit_io, message, json{{"rule", "E-IO-WRITE"}, {"describe", message}});
  const char* form = to_binary ? "binary" : "ascii";
  if (a.flags.json)
    cli::print(to_text(json{{"file", a.input}, {"output", a.output}, {"valid", true}, {"to", form}, {"bytes", out.size()}}));
  else if (a.flags.verbose)
    cli::complain("converted " + cli::quote_path(a.input) + " -> " + cli::quote_path(a.output) + " (" + form + ", " +
                  std::to_string(out.size()) + " bytes)");
  return cli::exit_ok;
}

}  // namespace

void add_udm_formats(std::vector<format_handler>& out) {
  out.push_back({"udm-binary", "Pragma UDM, binary (.pmdl_b, .udm_b ...)", recognise_binary,
                 [](const std::string& p, byte_span f) { return info(p, f, "udm-binary"); },
                 [](const std::string& p, byte_span f, bool deep) { return validate(p, f, deep, "udm-binary"); },
                 [](const std::string& p, byte_span f) { return dump(p, f, "udm-binary"); }, import_model});
  out.push_back({"udm-ascii", "Pragma UDM, ASCII (.udm, .pmdl ...)", recognise_ascii,
                 [](const std::string& p, byte_span f) { return info(p, f, "udm-ascii"); },
                 [](const std::string& p, byte_span f, bool deep) { return validate(p, f, deep, "udm-ascii"); },
                 [](const std::string& p, byte_span f) { return dump(p, f, "udm-ascii"); }, import_model});
}

void add_udm_commands(CLI::App& app, int& exit_code) {
  CLI::App* udm = app.add_subcommand("udm", "Pragma UDM files (docs/udm.md)");
  udm->require_subcommand(1);
  auto args = std::make_shared<convert_args>();
  CLI::App* convert = udm->add_subcommand("convert", "Convert a UDM file between binary and ASCII");
  convert->add_option("IN", args->input, "input file (binary or ASCII UDM; '-' for stdin)")->required();
  convert->add_option("OUT", args->output, "output file")->required();
  convert->add_option("--to", args->to, "output form (default: from OUT's extension, else the other form)")
      ->check(CLI::IsMember({"binary", "ascii"}));
  convert->add_flag("--sort-keys", args->sort_keys, "ASCII: sort keys by name, as Pragma writes them");
  cli::add_common_flags(*convert, args->flags, "print {file, output, to, bytes} (or the error) as JSON");
  convert->callback([args, &exit_code] { exit_code = run_convert(*args); });
}

}  // namespace untold::tools
