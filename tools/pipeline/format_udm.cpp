// tools/pipeline/format_udm.cpp - the udm formats: magic recognition,
// info/validate/dump as JSON and the importer for cook (see formats.hpp,
// docs/udm.md). `untold udm convert` is tools/cli/udm.cpp.
//
//   untold info|validate|dump [--json] FILE   binary UDM ("UDMB") or UDM ASCII
//   untold cook model.pmdl_b -o model.untold  through import_pmdl
// Every command gives its input one budget (untold/budget.hpp, from the
// default limits and the input's size) that the reader, the converter and
// the printer all charge before they allocate, loop or print: a small file
// cannot make them hold, visit or print more than a multiple of its size
// (UDM-LIMITS).
#include "formats.hpp"

#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <untold/budget.hpp>
#include <untold/udm/udm.hpp>

#include "inspect.hpp"

namespace untold::tools {
namespace {

namespace u = untold::udm;

std::string_view as_text(byte_span b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

/// A binary file, or ASCII text converted to binary (kept alive in
/// `storage`), every stage charging `charged`.
result<u::document> open_any(byte_span file, std::vector<std::byte>& storage, budget& charged,
                             const limits& lim = {}) {
  u::open_options ro;
  ro.limits = lim;
  ro.budget = &charged;
  if (u::is_binary_udm(file)) return u::open_document(file, ro);
  const std::uint64_t before = charged.memory().used;
  std::uint64_t tree_bytes = 0;
  {
    u::ascii_open_options ao;
    ao.limits = lim;
    ao.budget = &charged;
    auto tree = u::open_ascii(as_text(file), ao);
    if (!tree) return tree.error();
    tree_bytes = charged.memory().used - before;
    // Not verified here: the document is parsed from these bytes right below.
    auto bin = u::write_binary(*tree, {.verify = false, .limits = lim, .budget = &charged});
    if (!bin) return bin.error();
    storage = std::move(*bin);
  }
  charged.release_memory(tree_bytes);  // the tree is gone
  return u::open_document(storage, ro);
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

// What printing costs. A JSON value held in the tree (an ordered_json in an
// array, or with its key as an object member), and an upper bound of its
// printed line at JSON depth d: to_text indents 2 per level, then a key,
// punctuation and a number; strings are escaped, up to 6 bytes per byte
// (\u00XX). The text mode prints less.
constexpr std::uint64_t json_value_bytes = sizeof(std::pair<const std::string, json>);
constexpr std::uint64_t json_line_bytes = 48;

/// Charges `values` JSON values at JSON depth `depth`, with `text` bytes of
/// strings among them, before they are built.
status charge_json(budget& b, std::uint64_t values, std::uint64_t depth, std::uint64_t text = 0) {
  UNTOLD_TRY(b.charge_items(values, json_value_bytes, "json values", errc::udm_limit));
  UNTOLD_TRY(b.charge_memory(text, "json values", errc::udm_limit));
  const std::uint64_t lines = budget::product(values, 2 * depth + json_line_bytes);
  return b.charge_output(budget::sum(lines, budget::product(text, 6)), "json text", errc::udm_limit);
}

/// The JSON values of one trivial value (a scalar, or an array of its components).
constexpr std::uint64_t trivial_values(u::type t) noexcept {
  const std::uint32_t n = u::component_count(t);
  return n > 1 ? n + 1 : 1;
}
/// The JSON values and key bytes of one struct value.
void struct_cost(const u::struct_layout_view& l, std::uint64_t& values, std::uint64_t& text) {
  values = 1;
  text = 0;
  for (std::size_t i = 0; i < l.member_count(); ++i) {
    values += trivial_values(l.member(i).kind);
    text += l.member(i).name.size();
  }
}

/// The property as {"type", ...}: elements as "children" by key, arrays with
/// "valueType", "count" and "values". `depth` is the JSON depth of `j`.
/// Every value is charged to `charged` before it is built (UDM-LIMITS).
/// Recursion is bounded by the document's depth, itself capped by
/// limits.max_depth at parse time.
status property_json(const u::property_view& p, json& j, budget& charged, std::uint64_t depth) {
  UNTOLD_TRY(charge_json(charged, 3, depth + 1, p.key().size()));  // the object, its key, "type"
  j = json::object();
  j["type"] = u::name(p.kind());
  const u::type t = p.kind();
  if (u::is_trivial(t)) {
    UNTOLD_TRY(charge_json(charged, trivial_values(t), depth + 2));
    if (t != u::type::nil) j["value"] = trivial_json(t, p.raw().data());
    return {};
  }
  switch (t) {
    case u::type::string:
    case u::type::reference:
    case u::type::utf8_string:
      UNTOLD_TRY(charge_json(charged, 1, depth + 1, p.raw().size()));
      j["value"] = std::string(p.as_string().value());
      break;
    case u::type::blob:
    case u::type::blob_lz4:
      UNTOLD_TRY(charge_json(charged, 3, depth + 1, (p.raw().size() + 2) / 3 * 4));
      if (t == u::type::blob_lz4) j["compressedSize"] = p.stored().size();
      j["size"] = p.raw().size();
      j["base64"] = base64(p.raw());
      break;
    case u::type::struct_: {
      std::uint64_t values = 0, text = 0;
      struct_cost(p.layout(), values, text);
      UNTOLD_TRY(charge_json(charged, values, depth + 2, text));
      j["value"] = struct_json(p.layout(), p.raw().data());
      break;
    }
    case u::type::element: {
      json children = json::object();
      for (u::property_view c : p) {
        json child;
        UNTOLD_TRY(property_json(c, child, charged, depth + 2));
        children[std::string(c.key())] = std::move(child);
      }
      j["children"] = std::move(children);
      break;
    }
    case u::type::array:
    case u::type::array_lz4: {
      const u::type vt = p.value_type();
      UNTOLD_TRY(charge_json(charged, 4, depth + 1));
      j["valueType"] = u::name(vt);
      j["count"] = p.size();
      if (t == u::type::array_lz4) j["compressedSize"] = p.stored().size();
      json values = json::array();
      if (vt == u::type::struct_) {
        const auto s = p.as_structs().value();
        std::uint64_t per_value = 0, text = 0;
        struct_cost(s.layout(), per_value, text);
        UNTOLD_TRY(charge_json(charged, 3 * s.layout().member_count() + 1, depth + 2, text));  // "members"
        UNTOLD_TRY(charge_json(charged, budget::product(s.size(), per_value), depth + 3, budget::product(s.size(), text)));
        json members = json::array();
        for (std::size_t i = 0; i < s.layout().member_count(); ++i)
          members.push_back(json_object({{"name", s.layout().member(i).name}, {"type", u::name(s.layout().member(i).kind)}}));
        j["members"] = std::move(members);
        for (std::size_t i = 0; i < s.size(); ++i) values.push_back(struct_json(s.layout(), s.value(i).data()));
      } else if (u::is_trivial(vt)) {
        UNTOLD_TRY(charge_json(charged, budget::product(p.size(), trivial_values(vt)), depth + 3));
        const std::uint32_t size = u::size_of(vt);
        for (std::size_t i = 0; i < p.size(); ++i) values.push_back(trivial_json(vt, p.raw().data() + i * size));
      } else {
        for (u::property_view c : p) {
          json item;
          UNTOLD_TRY(property_json(c, item, charged, depth + 2));
          values.push_back(std::move(item));
        }
      }
      j["values"] = std::move(values);
      break;
    }
    default: break;
  }
  return {};
}

// ---- info / validate / dump -------------------------------------------------------------

json sub_meshes_json(const u::pmdl_model& m) {
  json list = json::array();
  for (const u::pmdl_sub_mesh& s : m.sub_meshes)
    list.push_back(json_object({{"group", s.group},
                                {"mesh", s.mesh},
                                {"subMesh", s.sub_mesh},
                                {"geometry", s.geometry},
                                {"vertices", s.vertex_count()},
                                {"indices", s.index_count},
                                {"indexType", u::name(s.index_type)}}));
  return list;
}

json info(const std::string& path, byte_span file, std::string_view format) {
  json j = format_json(path, format);
  std::vector<std::byte> storage;
  budget charged(limits{}, file.size());
  auto doc = open_any(file, storage, charged);
  if (!doc) return invalid_json(std::move(j), doc.error());
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
    auto model = u::pmdl_from_document(*doc, &charged);
    if (!model) return invalid_json(std::move(j), model.error());
    std::uint64_t names = 0;
    for (const u::pmdl_sub_mesh& s : model->sub_meshes) names += s.group.size();
    for (std::string_view name : model->materials) names += name.size();
    if (auto s = charge_json(charged, 8 * model->sub_meshes.size() + model->materials.size(), 4, names); !s)
      return invalid_json(std::move(j), s.error());
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
  json j = format_json(path, format);
  std::vector<std::byte> storage;
  budget charged(limits{}, file.size());
  auto doc = open_any(file, storage, charged);
  if (!doc) return invalid_json(std::move(j), doc.error());
  if (doc->asset_type() == "PMDL") {
    // A model's structure (index ranges, bones, weights' bone ids) is part
    // of the format; deep: its values too (finite), and it must import.
    if (deep) {
      if (auto scene = u::import_pmdl(*doc, {.budget = &charged}); !scene) return invalid_json(std::move(j), scene.error());
    } else if (auto model = u::pmdl_from_document(*doc, &charged); !model) {
      return invalid_json(std::move(j), model.error());
    }
  }
  j["valid"] = true;
  return j;
}

// The tree is made whole, its nodes charged to the input's budget (a
// refusal is UDM-LIMITS), then written.
std::optional<json> dump(const std::string& path, byte_span file, std::string_view format, document_stream& out) {
  json j = format_json(path, format);
  std::vector<std::byte> storage;
  budget charged(limits{}, file.size());
  auto doc = open_any(file, storage, charged);
  if (!doc) return invalid_json(std::move(j), doc.error());
  json root;
  if (auto s = property_json(doc->root(), root, charged, 1); !s) return invalid_json(std::move(j), s.error());
  j["valid"] = true;
  if (u::is_binary_udm(file)) j["version"] = doc->version();
  j["root"] = std::move(root);
  return write_whole(j, out);
}

result<convert::scene> import_model(const import_request& r) {
  std::vector<std::byte> storage;
  budget charged(r.limits, r.bytes.size());
  auto doc = open_any(r.bytes, storage, charged, r.limits);
  if (!doc) return doc.error();
  u::pmdl_import_options o;
  o.limits = r.limits;
  o.budget = &charged;
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

}  // namespace

void add_udm_formats(std::vector<format_handler>& out) {
  out.push_back({"udm-binary", "Pragma UDM, binary (.pmdl_b, .udm_b ...)", recognise_binary,
                 [](const std::string& p, byte_span f) { return info(p, f, "udm-binary"); },
                 [](const std::string& p, byte_span f, bool deep) { return validate(p, f, deep, "udm-binary"); },
                 [](const std::string& p, byte_span f, document_stream& out) { return dump(p, f, "udm-binary", out); }, import_model});
  out.push_back({"udm-ascii", "Pragma UDM, ASCII (.udm, .pmdl ...)", recognise_ascii,
                 [](const std::string& p, byte_span f) { return info(p, f, "udm-ascii"); },
                 [](const std::string& p, byte_span f, bool deep) { return validate(p, f, deep, "udm-ascii"); },
                 [](const std::string& p, byte_span f, document_stream& out) { return dump(p, f, "udm-ascii", out); }, import_model});
}

}  // namespace untold::tools
